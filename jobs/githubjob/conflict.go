package githubjob

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/gitrepo"
	"github.com/patchwright/patchwright/jobs/pipeline"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// A moved base GitHub could not merge is resolved by an attempt of its
// own (jobs/pipeline/merge.go): the pipeline lays the merge, markers and
// all, the model resolves it within limits.merge_steps, the checks run
// again, and the merge commit (both heads its parents) is made through
// the Git Data API like any other. A resolution that fails (markers
// left, a file that cannot be merged, nothing changed) is said once per
// head, as a conflict always was.

// conflictSaid reports whether the conflict of pr's head was said on it
// already: an automatic update neither says nor tries it again.
func (p *Pipeline) conflictSaid(ctx context.Context, repo tasks.Issue, pr githubapi.PullRequest) (bool, error) {
	bot, err := p.GitHub.Bot(ctx, repo)
	if err != nil {
		return false, err
	}
	prIssue := repo
	prIssue.Number = pr.Number
	cs, err := p.GitHub.Comments(ctx, prIssue)
	if err != nil {
		return false, err
	}
	for _, c := range cs {
		if c.Author == bot.Login && strings.Contains(c.Body, conflictMarker(pr.HeadSHA)) {
			return true, nil
		}
	}
	return false, nil
}

// resolveConflict sets a up to resolve the conflict of merging base into
// pr: ok is true when the attempt runs. An automatic update whose head's
// conflict was said already runs nothing.
func (p *Pipeline) resolveConflict(ctx context.Context, a *request, pr githubapi.PullRequest, base string, log *slog.Logger) (bool, error) {
	if a.requester == "" {
		said, err := p.conflictSaid(ctx, a.issue, pr)
		if err != nil || said {
			log.Info("merge conflict already said", "head", pr.HeadSHA, "err", err)
			return false, err
		}
	}
	d, err := p.GitHub.Diverged(ctx, a.issue, pr.HeadSHA, base)
	if err != nil {
		return false, err
	}
	if d.Base == "" {
		return false, fmt.Errorf("compare %s with %s: no commit of the base to merge", shortSHA(pr.HeadSHA), base)
	}
	a.conflict = &conflictRun{pr: pr, base: base,
		job: pipeline.MergeJob{MergeBase: d.MergeBase, Theirs: d.Base, BaseBranch: pr.BaseRef, Subjects: d.Subjects}}
	// The trigger is written before the model runs: it names the
	// conflict, and the attempt's outcome says whether it was resolved.
	a.trigger = fmt.Sprintf("%s: merged %s (%s) with conflicts", rebaseTrigger, pr.BaseRef, shortSHA(d.Base))
	if a.requester != "" {
		a.trigger = fmt.Sprintf("/agent rebase: merged %s (%s) with conflicts", pr.BaseRef, shortSHA(d.Base))
	}
	return true, nil
}

// conflictRun is a conflict's resolution as the job carries it.
type conflictRun struct {
	pr   githubapi.PullRequest
	base string
	job  pipeline.MergeJob
}

// conflictUnresolved says, once per head, that the resolution pushed
// nothing, and why; err is the run's error (nil when it ran to the end).
func (p *Pipeline) conflictUnresolved(ctx context.Context, a *request, res *pipeline.Result, err error, log *slog.Logger) error {
	why := "Patchwright's attempt to resolve them pushed nothing"
	switch {
	case errors.Is(err, gitrepo.ErrUnmergeable):
		why = "Patchwright cannot resolve them: " + err.Error()
	case res != nil && res.Merge != nil && len(res.Merge.Left) > 0:
		why = "Patchwright's attempt to resolve them left conflict markers in " + strings.Join(res.Merge.Left, ", ")
	case res != nil && res.Reason != "":
		why += " (" + res.Reason + ")"
	}
	return p.sayConflict(ctx, a, a.conflict.pr, a.conflict.base, why, log)
}
