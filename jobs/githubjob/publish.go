package githubjob

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/patchwright/patchwright/agent/config"
	"github.com/patchwright/patchwright/internal/logkey"
	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/gitrepo"
	"github.com/patchwright/patchwright/jobs/pipeline"
	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/patchwright/patchwright/report"
	"github.com/patchwright/patchwright/verify"
)

// publisher is the pipeline.Publisher of the GitHub worker: the change
// goes to agent/issue-N as a commit GitHub makes and signs (see push),
// moving the branch as compare-and-swap, then into the one pull
// request of that branch, with a check run per final check. It is made
// per attempt.
type publisher struct {
	gh       prPublisher
	issue    tasks.Issue
	title    string
	branch   string
	base     string // the pull request's base branch
	logURL   string
	trailers []string
	log      *slog.Logger
	// pr is the pull request of a retry; nil for a solve.
	pr *githubapi.PullRequest

	expected plumbing.Hash
	// requester asked for the run (the label's sender); "" for none.
	requester string
	// rebased is the merge commit of a moved base an update checks; ""
	// for any other run.
	rebased string
	// sent is the body last rendered for GitHub: the pipeline's facts
	// with the pushed commit and, where drafts are refused, the note.
	sent string
	// unsigned: the commit was pushed with git, unsigned, rather than
	// made (and signed) by GitHub.
	unsigned bool
	// branchOnly: the operator's policy allows no pull requests, so the
	// change is pushed (with its check runs) and reported on the issue.
	branchOnly bool
	// noteRun keeps the run's model and cost for the pull request's
	// outcome; nil: not kept.
	noteRun func(ctx context.Context, pr int, cost *float64) error
	// published is the pull request this run opened or updated; 0 until
	// it did.
	published int
}

// Target is agent/issue-N, expected where it is now: for a retry the head
// that was cloned (so a push made meanwhile is refused; on a conflict's
// resolution the head, not the merge laid on it, which GitHub never saw),
// for a solve the remote's branch as this run found it (zero when there
// is none).
func (g *publisher) Target(ctx context.Context, repo *gitrepo.Repo, _ pipeline.Job) (pipeline.Target, error) {
	if g.pr != nil {
		g.expected = repo.Cloned()
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
	if err := g.push(ctx, repo, res); err != nil {
		return "", err
	}
	if g.branchOnly {
		return "", refused(g.checkRuns(ctx, res), "post check runs", "checks: write", res.Branch)
	}
	pr, err := g.upsertPR(ctx, repo, res)
	if err != nil {
		return "", refused(err, "open pull requests", "pull_requests: write", res.Branch)
	}
	res.Body = g.sent // pr.md is what was posted
	g.published = pr.Number
	if g.noteRun != nil {
		// The outcome figures lose this run's cost; the pull request is
		// not worth failing for that.
		if err := g.noteRun(context.WithoutCancel(ctx), pr.Number, res.CostUSD); err != nil {
			g.log.Error("the run's cost is not kept for its pull request's outcome", logkey.Err, err)
		}
	}

	if err := g.checkRuns(ctx, res); err != nil {
		return pr.URL, refused(err, "post check runs", "checks: write", res.Branch)
	}
	if res.Approval {
		// The new head needs its own approval; so far nobody has one.
		excluded := requesters(g.sent)
		excluded[strings.ToLower(g.requester)] = true
		if err := putApproval(ctx, g.gh, g.prIssue(pr.Number), res.HeadCommit, excluded); err != nil {
			return pr.URL, refused(err, "post the approval check", "checks: write", res.Branch)
		}
	}
	return pr.URL, nil
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
	body, err := g.body(res, false)
	if err != nil {
		return githubapi.PullRequest{}, err
	}
	np := githubapi.NewPullRequest{Title: title, Head: g.branch, Base: g.base, Body: body, Draft: draft(res)}
	pr, err := g.gh.CreatePullRequest(ctx, g.issue, np)
	if np.Draft && errors.Is(err, githubapi.ErrDraftUnsupported) {
		g.log.Info("the repository has no draft pull requests: opening a ready one that says it is not a draft by choice")
		if np.Body, err = g.body(res, true); err != nil {
			return githubapi.PullRequest{}, err
		}
		np.Draft = false
		pr, err = g.gh.CreatePullRequest(ctx, g.issue, np)
	}
	if errors.Is(err, githubapi.ErrPullRequestExists) {
		pr, ok, ferr := g.gh.FindPullRequest(ctx, g.issue, g.branch)
		if ferr != nil || !ok {
			return githubapi.PullRequest{}, fmt.Errorf("%w; looking it up: found=%v %v", err, ok, ferr)
		}
		return pr, g.update(ctx, repo, res, pr, title)
	}
	if err == nil {
		g.requestReviews(ctx, pr, res)
	}
	return pr, err
}

// update edits an existing pull request and brings its draft state in
// line with `draft:` for this run's outcome, as if it were opened now: a
// retry that verifies the change under `draft: auto` makes the pull
// request ready for review, and one that does not makes it a draft again.
// Failing to change the state is logged, not fatal.
func (g *publisher) update(ctx context.Context, repo *gitrepo.Repo, res *pipeline.Result, pr githubapi.PullRequest, title string) error {
	refused := false
	if want := draft(res); want != pr.Draft && pr.NodeID != "" {
		err := g.gh.SetDraft(ctx, g.prIssue(pr.Number), pr.NodeID, want)
		switch {
		case want && errors.Is(err, githubapi.ErrDraftUnsupported):
			refused = true
		case err != nil:
			g.log.Warn("could not change the pull request's draft state", "draft", want, logkey.Err, err)
		}
	}
	body, err := g.body(res, refused)
	if err != nil {
		return err
	}
	return g.gh.EditPullRequest(ctx, g.prIssue(pr.Number), title, body)
}

// body renders the pull request's body with report.PRBody from the run's
// facts and what publishing added to them: the commit pushed (the body's
// last line marks it, so that the branch can be deleted when the pull
// request closes if nobody pushed since) and, where the repository has no
// drafts, that this one is open for review only for that reason. It is
// what was sent, and so pr.md and the facts the run keeps.
func (g *publisher) body(res *pipeline.Result, draftRefused bool) (string, error) {
	in := res.Report
	in.HeadCommit, in.DraftRefused, in.Unsigned = res.HeadCommit, draftRefused, g.unsigned
	body, err := report.PRBody(in)
	if err != nil {
		return "", err
	}
	res.Report, g.sent = in, body
	return body, nil
}

// draft applies `draft:` as the run read it from the default branch's
// configuration (never as the run left it: the model could edit the file).
func draft(res *pipeline.Result) bool {
	if res.Interrupted {
		// Unfinished and unchecked, whatever `draft:` says.
		return true
	}
	switch res.Draft {
	case config.DraftAlways:
		return true
	case config.DraftNever:
		return false
	}
	return res.Outcome != verify.Verified
}

func (g *publisher) prIssue(n int) tasks.Issue {
	i := g.issue
	i.Number = n
	return i
}

// prTitle is the issue's title on one line, cut to GitHub's limit.
func prTitle(title string, n int) string {
	title = strings.Join(strings.Fields(title), " ")
	if title == "" {
		return fmt.Sprintf("Patchwright: issue #%d", n)
	}
	if utf8.RuneCountInString(title) > githubapi.MaxTitle {
		r := []rune(title)
		title = string(r[:githubapi.MaxTitle-1]) + "…"
	}
	return title
}

// checkRuns posts one check run per final check on the pushed commit,
// updating a run of the same name on that commit rather than adding one.
func (g *publisher) checkRuns(ctx context.Context, res *pipeline.Result) error {
	return g.postChecks(ctx, res.HeadCommit, res.Report.Final, res.Report.Baseline, res.Report.GoModule)
}

// postChecks posts one check run per check of checks on sha, each
// compared with the baseline check of its name when there is one.
func (g *publisher) postChecks(ctx context.Context, sha string, checks, baseline []verify.CheckResult, module string) error {
	for _, c := range checks {
		var base *verify.CheckResult
		for i := range baseline {
			if baseline[i].Name == c.Name {
				base = &baseline[i]
			}
		}
		out, err := report.CheckRun(c, base, module, g.logURL)
		if err != nil {
			return err
		}
		name := CheckRunPrefix + c.Name
		ids, err := g.gh.CheckRunIDs(ctx, g.issue, sha, name)
		if err != nil {
			return err
		}
		var id int64
		if len(ids) > 0 {
			id = ids[0]
		}
		if err := g.putCheckRun(ctx, id, checkRun(name, sha, g.logURL, out)); err != nil {
			return err
		}
	}
	return nil
}

// putCheckRun creates or updates one check run. A create that failed
// without a refusal (a 5xx, a timeout) may have landed, and the transport
// does not send it again: look for the run first, and update it if it is
// there, so one check never shows twice.
func (g *publisher) putCheckRun(ctx context.Context, id int64, run githubapi.CheckRun) error {
	got, err := g.gh.PutCheckRun(ctx, g.issue, id, run)
	if err == nil || id != 0 || got != 0 {
		return err
	}
	if _, ok := githubapi.AsRefusal(err); ok {
		return err
	}
	ids, lerr := g.gh.CheckRunIDs(ctx, g.issue, run.HeadSHA, run.Name)
	if lerr != nil {
		return fmt.Errorf("%w (and looking it up: %v)", err, lerr)
	}
	if len(ids) > 0 {
		id = ids[0]
	}
	_, err = g.gh.PutCheckRun(ctx, g.issue, id, run)
	return err
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
