package githubjob

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/patchwright/patchwright/agent/config"
	"github.com/patchwright/patchwright/agent/verify"
	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/gitrepo"
	"github.com/patchwright/patchwright/jobs/pipeline"
	"github.com/patchwright/patchwright/report"
)

// publisher is the pipeline.Publisher of the GitHub worker: the change
// goes to agent/issue-N as a compare-and-swap push, then into the one pull
// request of that branch, with a check run per final check. It is made
// per attempt.
type publisher struct {
	gh       prPublisher
	issue    jobs.Issue
	title    string
	branch   string
	base     string // the pull request's base branch
	logURL   string
	trailers []string
	log      *slog.Logger
	// pr is the pull request of a retry; nil for a solve.
	pr *githubapi.PullRequest

	expected plumbing.Hash
}

// Target is agent/issue-N, expected where it is now: for a retry the head
// that was cloned (so a push made meanwhile is refused), for a solve the
// remote's branch as this run found it (zero when there is none).
func (g *publisher) Target(ctx context.Context, repo *gitrepo.Repo, _ pipeline.Job) (pipeline.Target, error) {
	if g.pr != nil {
		g.expected = repo.Base()
	} else {
		heads, err := repo.RemoteBranches(ctx)
		if err != nil {
			return pipeline.Target{}, err
		}
		g.expected = heads[g.branch]
	}
	return pipeline.Target{Branch: g.branch, Expected: g.expected, Trailers: g.trailers}, nil
}

// Publish pushes the commit, opens or updates the pull request with the
// body the pipeline rendered (pr.md, attempt history included) and posts
// the check runs. A run that committed nothing publishes nothing here: the
// pipeline's caller then posts the failure comment.
func (g *publisher) Publish(ctx context.Context, repo *gitrepo.Repo, res *pipeline.Result) (string, error) {
	if ctx.Err() != nil || res.HeadCommit == "" {
		return "", nil
	}
	if err := repo.Push(ctx, res.Branch, g.expected); err != nil {
		return "", err
	}
	pr, err := g.upsertPR(ctx, repo, res)
	if err != nil {
		return "", err
	}
	return pr.URL, g.checkRuns(ctx, res)
}

// upsertPR updates the retry's pull request, or the open one of the
// branch, or opens one; a 422 "already exists" (a race) is looked up
// again and updated.
func (g *publisher) upsertPR(ctx context.Context, repo *gitrepo.Repo, res *pipeline.Result) (githubapi.PullRequest, error) {
	title := prTitle(g.title, g.issue.Number)
	if g.pr != nil {
		return *g.pr, g.update(ctx, repo, res, *g.pr, title)
	}
	if pr, ok, err := g.gh.FindPullRequest(ctx, g.issue, g.branch); err != nil || ok {
		if err != nil {
			return githubapi.PullRequest{}, err
		}
		return pr, g.update(ctx, repo, res, pr, title)
	}
	pr, err := g.gh.CreatePullRequest(ctx, g.issue, githubapi.NewPullRequest{Title: title, Head: g.branch, Base: g.base, Body: res.Body, Draft: draft(res)})
	if errors.Is(err, githubapi.ErrPullRequestExists) {
		pr, ok, ferr := g.gh.FindPullRequest(ctx, g.issue, g.branch)
		if ferr != nil || !ok {
			return githubapi.PullRequest{}, fmt.Errorf("%w; looking it up: found=%v %v", err, ok, ferr)
		}
		return pr, g.update(ctx, repo, res, pr, title)
	}
	return pr, err
}

// update edits an existing pull request and brings its draft state in
// line with `draft:` for this run's outcome, as if it were opened now: a
// retry that verifies the change under `draft: auto` makes the pull
// request ready for review, and one that does not makes it a draft again.
// Failing to change the state is logged, not fatal.
func (g *publisher) update(ctx context.Context, repo *gitrepo.Repo, res *pipeline.Result, pr githubapi.PullRequest, title string) error {
	if err := g.gh.EditPullRequest(ctx, g.prIssue(pr.Number), title, res.Body); err != nil {
		return err
	}
	want := draft(res)
	if want == pr.Draft || pr.NodeID == "" {
		return nil
	}
	if err := g.gh.SetDraft(ctx, g.prIssue(pr.Number), pr.NodeID, want); err != nil {
		g.log.Warn("could not change the pull request's draft state", "draft", want, jobs.LogError, err)
	}
	return nil
}

// draft applies `draft:` as the run read it from the default branch's
// configuration (never as the run left it: the model could edit the file).
func draft(res *pipeline.Result) bool {
	switch res.Draft {
	case config.DraftAlways:
		return true
	case config.DraftNever:
		return false
	}
	return res.Outcome != verify.Verified
}

func (g *publisher) prIssue(n int) jobs.Issue {
	i := g.issue
	i.Number = n
	return i
}

func prTitle(title string, n int) string {
	title = strings.Join(strings.Fields(title), " ")
	if title == "" {
		return fmt.Sprintf("Patchwright: issue #%d", n)
	}
	return title
}

// checkRuns posts one check run per final check on the pushed commit,
// updating a run of the same name on that commit rather than adding one.
func (g *publisher) checkRuns(ctx context.Context, res *pipeline.Result) error {
	in := res.Report
	for _, c := range in.Final {
		var base *verify.CheckResult
		for i := range in.Baseline {
			if in.Baseline[i].Name == c.Name {
				base = &in.Baseline[i]
			}
		}
		out, err := report.CheckRun(c, base, in.GoModule, g.logURL)
		if err != nil {
			return err
		}
		name := CheckRunPrefix + c.Name
		ids, err := g.gh.CheckRunIDs(ctx, g.issue, res.HeadCommit, name)
		if err != nil {
			return err
		}
		var id int64
		if len(ids) > 0 {
			id = ids[0]
		}
		if _, err := g.gh.PutCheckRun(ctx, g.issue, id, checkRun(name, res.HeadCommit, g.logURL, out)); err != nil {
			return err
		}
	}
	return nil
}

// checkRun turns the report's output into the adapter's check run.
func checkRun(name, sha, details string, out report.CheckRunOutput) githubapi.CheckRun {
	run := githubapi.CheckRun{Name: name, HeadSHA: sha, DetailsURL: details,
		Conclusion: out.Conclusion, Title: out.Title, Summary: out.Summary}
	for _, batch := range out.Annotations {
		b := make([]githubapi.Annotation, len(batch))
		for i, a := range batch {
			b[i] = githubapi.Annotation{Path: a.Path, StartLine: a.StartLine, EndLine: a.EndLine, Level: a.AnnotationLevel, Message: a.Message}
		}
		run.Annotations = append(run.Annotations, b)
	}
	return run
}
