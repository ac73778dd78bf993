package githubjob

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/patchwright/patchwright/internal/logkey"
	"github.com/patchwright/patchwright/report/marker"

	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/pipeline"
	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/patchwright/patchwright/report"
)

// merger is what keeping a pull request mergeable needs besides the rest
// of GitHub; *githubapi.App satisfies it.
type merger interface {
	// MergeInto merges commit head into branch with GitHub's merges
	// endpoint; "" when branch already holds it, an error wrapping
	// githubapi.ErrMergeConflict when git cannot merge them.
	MergeInto(ctx context.Context, repo tasks.Issue, branch, head, message string) (string, error)
	// Diverged compares head with base: their merge base, the base's
	// commit, and what the base's commits said since.
	Diverged(ctx context.Context, repo tasks.Issue, head, base string) (githubapi.Divergence, error)
}

// conflictMarker marks the comment that says a base could not be merged
// into the pull request's head: one comment per head.
func conflictMarker(head string) string { return "<!-- patchwright:conflict " + head + " -->" }

// rebase merges the moved base commit into the pull request's branch
// before the attempt that checks it again. GitHub makes the merge commit
// (and signs it), so no conflict is resolved here: a conflict is said on
// the pull request and nothing runs. ok is false when there is nothing
// to check: the pull request is closed, its head is not the one
// Patchwright pushed (a person's work is theirs to merge),
// `merge_conflicts: off` for an automatic update, the branch already
// holds the base, or a conflict. On a merge the body's pushed marker
// moves to the merge commit, so CI fixes and the branch's deletion treat
// it as Patchwright's, and a names the merge for the history and the
// model.
func (p *Pipeline) rebase(ctx context.Context, a *request, base string) (bool, error) {
	log := p.logger().With(logkey.Issue, a.issue.String(), logkey.Task, a.at.TaskID, "base", base)
	prIssue := a.issue
	prIssue.Number = a.pr
	pr, err := p.GitHub.GetPullRequest(ctx, prIssue)
	if err != nil {
		return false, err
	}
	if why := notOurs(pr, a.issue.Number); why != "" {
		log.Info("pull request not updated", "why", why)
		return false, p.tellRequester(ctx, a, prIssue, "Patchwright did not update this pull request: "+why+".")
	}
	if a.requester == "" {
		on, err := p.keepsMergeable(ctx, a.issue)
		if err != nil || !on {
			log.Info("pull request not updated", "why", "merge_conflicts: off", logkey.Err, err)
			return false, err
		}
	}
	msg := fmt.Sprintf("Merge %s (%s) into %s", pr.BaseRef, baseName(base), pr.HeadRef)
	sha, err := p.GitHub.MergeInto(ctx, a.issue, pr.HeadRef, base, msg)
	switch {
	case errors.Is(err, githubapi.ErrMergeConflict):
		return p.resolveConflict(ctx, a, pr, base, log)
	case err != nil:
		return false, refused(err, "merge the base branch into "+pr.HeadRef, "contents: write", "")
	case sha == "" && a.at.Rerun == tasks.RerunNone:
		log.Info("pull request not updated", "why", "the branch already holds the base")
		return false, p.tellRequester(ctx, a, prIssue, fmt.Sprintf("`%s` already holds `%s` (%s): nothing to merge.", pr.HeadRef, pr.BaseRef, baseName(base)))
	case sha != "":
		body := strings.Replace(pr.Body, marker.Pushed(pr.HeadSHA), marker.Pushed(sha), 1)
		if err := p.GitHub.EditPullRequest(ctx, prIssue, pr.Title, body); err != nil {
			return false, err
		}
	default:
		// A re-run of this update whose merge landed before: check it.
		sha = pr.HeadSHA
	}
	a.rebase = fmt.Sprintf("%s (%s) was merged into this branch as %s without conflicts", pr.BaseRef, baseName(base), shortSHA(sha))
	a.trigger = fmt.Sprintf("%s: %s at %s merged in", rebaseTrigger, pr.BaseRef, baseName(base))
	if !tasks.ValidSHA(base) {
		// A check found the pull request behind or conflicting
		// (webhook's checkMergeable): the branch as it is was merged.
		a.trigger = fmt.Sprintf("%s: %s merged in as %s", rebaseTrigger, pr.BaseRef, shortSHA(sha))
	}
	if a.requester != "" {
		a.trigger = fmt.Sprintf("/agent rebase: %s merged in as %s", pr.BaseRef, shortSHA(sha))
	}
	if note := rerunNote(a.at.Rerun); note != "" {
		a.trigger += "; " + note
	}
	return true, nil
}

// baseName is a base for people: a commit's short SHA, or a branch name
// (what `/agent rebase` merges).
func baseName(base string) string {
	if tasks.ValidSHA(base) {
		return shortSHA(base)
	}
	return base
}

// tellRequester answers the writer who asked for the update (`/agent
// rebase`) with msg; the automatic update has nobody to tell.
func (p *Pipeline) tellRequester(ctx context.Context, a *request, pr tasks.Issue, msg string) error {
	if a.requester == "" {
		return nil
	}
	_, err := p.GitHub.PostComment(ctx, pr, "@"+a.requester+" "+msg)
	return err
}

// rebaseTrigger starts the history's trigger of an update to a moved base.
const rebaseTrigger = "base branch moved"

// notOurs says why a pull request is not one Patchwright updates; "" when
// it is: open, from agent/issue-N, with the head Patchwright pushed.
func notOurs(pr githubapi.PullRequest, issue int) string {
	switch {
	case pr.State != "open":
		return "the pull request is " + pr.State
	case pr.HeadRef != jobs.AgentBranch(issue):
		return "its head branch is " + pr.HeadRef
	case marker.ParsePushed(pr.Body) != pr.HeadSHA:
		return "its head " + shortSHA(pr.HeadSHA) + " was not pushed by Patchwright"
	}
	return ""
}

// keepsMergeable reads merge_conflicts from the default branch's
// .github/agent.yml (the trusted one), over the organisation's default.
// A file that does not parse keeps the pull request as it is: the run
// would stop on it anyway.
func (p *Pipeline) keepsMergeable(ctx context.Context, repo tasks.Issue) (bool, error) {
	org, err := p.orgConfig(ctx, repo)
	if err != nil {
		return false, err
	}
	cfg, err := defaultBranchConfig(ctx, p.GitHub, repo, org)
	if err != nil {
		// A bad file is no error here: the pull request stays as it is.
		return false, ignore(err, errBadConfig)
	}
	return cfg.KeepsMergeable(), nil
}

// ignore is err, or nil when err is target.
func ignore(err, target error) error {
	if errors.Is(err, target) {
		return nil
	}
	return err
}

// sayConflict says on the pull request that the base could not be
// merged: once per head for the automatic update (every later push to
// the base would say it again), every time for `/agent rebase`, whose
// writer asked.
func (p *Pipeline) sayConflict(ctx context.Context, a *request, pr githubapi.PullRequest, base, why string, log *slog.Logger) error {
	prIssue := a.issue
	prIssue.Number = pr.Number
	marker := conflictMarker(pr.HeadSHA)
	if a.requester == "" {
		said, err := p.conflictSaid(ctx, a.issue, pr)
		if err != nil || said {
			log.Info("merge conflict already said", "head", pr.HeadSHA, logkey.Err, err)
			return err
		}
	}
	body := fmt.Sprintf("%s\nPatchwright could not merge `%s` (%s) into `%s`: both changed the same lines, and %s. "+
		"Resolve the conflict by hand (a local merge, or GitHub's \"Resolve conflicts\"); Patchwright does not try again on this head.",
		marker, pr.BaseRef, baseName(base), pr.HeadRef, why)
	if a.requester != "" {
		body = "@" + a.requester + " " + strings.TrimPrefix(body, marker+"\n")
		body = marker + "\n" + body
	}
	_, err := p.GitHub.PostComment(ctx, prIssue, body)
	return err
}

// rebaseFeedback is what the model hears on the attempt after a merge.
func rebaseFeedback(a request) string {
	return "The base branch " + a.rebase + ". The checks run again on the merged branch. " +
		"Change nothing unless the merge broke something the checks or the issue show; then fix only that.\n"
}

// rebaseChecked ends an update whose attempt changed nothing: the checks
// ran on the merged branch before the model did (the run's baseline), so
// they are posted as the merge commit's check runs (branch rules see
// Patchwright's checks on the new head) and the status links the pull
// request with what they found.
func (p *Pipeline) rebaseChecked(ctx context.Context, st *statusComment, pub *publisher, res *pipeline.Result, log *slog.Logger) error {
	checks := res.Report.Baseline
	if err := pub.postChecks(ctx, pub.rebased, checks, nil, res.Report.GoModule); err != nil {
		return refused(err, "post check runs", "checks: write", pub.branch)
	}
	// The body's table is the earlier head's: the merge's own results go
	// on top of it, so the reviewer reads what ran on the tree to merge.
	body, err := report.ReplaceMergeChecked(pub.pr.Body, report.MergeChecked{Base: pub.pr.BaseRef, Commit: pub.rebased, Checks: checks})
	if err != nil {
		return err
	}
	if err := p.GitHub.EditPullRequest(ctx, pub.prIssue(pub.pr.Number), pub.pr.Title, body); err != nil {
		return err
	}
	pub.pr.Body = body
	passed := 0
	for _, c := range checks {
		if c.Passed {
			passed++
		}
	}
	st.status.Phase = report.PhaseDone
	st.status.PullRequestURL = pub.pr.URL
	st.status.Outcome = res.Outcome
	st.status.Reason = fmt.Sprintf("the base branch was merged in as %s and the checks ran again on it: %d of %d passed; %s",
		shortSHA(pub.rebased), passed, len(checks), rebaseVerdict(passed, len(checks)))
	log.Info("pull request updated to its base", "head", pub.rebased, "passed", passed, "checks", len(checks))
	return st.write(ctx)
}

// rebaseVerdict says what the checks' re-run on a merge the model left
// as it was means: nothing needed changing only when every check passed.
func rebaseVerdict(passed, checks int) string {
	if passed == checks {
		return "nothing needed changing"
	}
	return "the model changed nothing, so the merge is not verified: the failing checks are its check runs"
}
