package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/hibiken/asynq"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/provider"
	"github.com/patchwright/patchwright/agent/verify"
	"github.com/patchwright/patchwright/jobs/gitrepo"
	"github.com/patchwright/patchwright/report"
)

// AgentBranch is the branch of issue n (DESIGN §4.8).
func AgentBranch(n int) string { return fmt.Sprintf("agent/issue-%d", n) }

// CheckRunPrefix starts the name of every check run Patchwright posts.
const CheckRunPrefix = "Patchwright / "

// CancelRecord tells a cancelled job from one interrupted by a shutdown or
// a timeout; *Queue satisfies it.
type CancelRecord interface {
	Cancelled(ctx context.Context, taskID string) (by string, cancelled bool, err error)
}

// GitHubPipeline is the Pipeline of the GitHub worker (DESIGN §1, §4.8): it
// acknowledges the issue, runs the shared Executor with a publisher that
// pushes agent/issue-N and opens or updates the pull request, and keeps
// one status comment up to date. Re-running a job (asynq retries, a worker
// that died) finds what the last run left (status comment, branch, pull
// request, check runs) and updates it instead of adding a second.
type GitHubPipeline struct {
	// GitHub is the API; required.
	GitHub GitHub
	// Executor is the template of each job's executor: Publisher, Author
	// and Progress are set per job. Sandboxes and Provider are required.
	Executor Executor
	// Cancels tells a `/agent stop` from a shutdown; required.
	Cancels CancelRecord
	// DataDir keeps each run's ledger.jsonl, result.json and pr.md under
	// runs/<run ID>/; default os.TempDir()/patchwright.
	DataDir string
	// RunURL, when set, is the base of run links: RunURL + "/" + run ID.
	// Without it, comments say where the log lies on the worker.
	RunURL string
	// StatusInterval is the least time between two edits of the status
	// comment while a run progresses; default DefaultStatusInterval.
	StatusInterval time.Duration
	// Logger; default slog.Default().
	Logger *slog.Logger
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// DefaultStatusInterval keeps a run's status edits far below GitHub's
// content-creation limits (80 a minute).
const DefaultStatusInterval = 10 * time.Second

// attempt is one solve or retry job, as the pipeline runs it.
type attempt struct {
	issue        Issue
	requester    string
	instructions string
	trigger      string // for the attempt history
	pr           int    // the pull request of a retry; 0 for a solve
	run          Run
}

// Solve runs a first (or new) attempt at an issue.
func (p *GitHubPipeline) Solve(ctx context.Context, job SolveIssue, run Run) error {
	return p.attempt(ctx, attempt{issue: job.Issue, requester: job.Requester, instructions: job.Instructions, trigger: "on the issue", run: run})
}

// Retry runs another attempt on the pull request job.PR.
func (p *GitHubPipeline) Retry(ctx context.Context, job RetryPR, run Run) error {
	return p.attempt(ctx, attempt{issue: job.Issue, requester: job.Requester, instructions: job.Instructions,
		trigger: "/agent retry", pr: job.PR, run: run})
}

// Abandoned says in the issue's status comment that its job was given up:
// the worker running the last attempt died and asynq archived the task
// without running it again (see Sweeper).
func (p *GitHubPipeline) Abandoned(ctx context.Context, issue Issue, taskID string) error {
	bot, err := p.GitHub.Bot(ctx, issue)
	if err != nil {
		return fmt.Errorf("find the app's bot user: %w", err)
	}
	st := &statusComment{gh: p.GitHub, issue: issue, bot: bot.Login, log: p.logger()}
	if err := st.find(ctx); err != nil {
		return err
	}
	st.status = report.Status{Issue: issue.Number, Phase: report.PhaseFailed,
		Reason: "the worker running its last try stopped without finishing (it crashed or was killed), so the job was given up. Comment `/agent retry` to start again"}
	return st.write(ctx)
}

var unsafeRunID = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// runID names one try of a task: stable across a shutdown's requeue (same
// retry count, so the same directory is reused), new for each retry.
func runID(r Run) string {
	id := unsafeRunID.ReplaceAllString(r.TaskID, "_")
	if len(id) > 80 {
		id = id[:80]
	}
	return fmt.Sprintf("%s.%d", id, r.Retry)
}

func (p *GitHubPipeline) logger() *slog.Logger {
	if p.Logger != nil {
		return p.Logger
	}
	return slog.Default()
}

func (p *GitHubPipeline) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

func (p *GitHubPipeline) dataDir() string {
	if p.DataDir != "" {
		return p.DataDir
	}
	return filepath.Join(os.TempDir(), "patchwright")
}

// attempt runs one job. Its error is what asynq sees: nil when the job is
// done (whatever the outcome), wrapping asynq.SkipRetry when trying again
// cannot help, anything else to be retried.
func (p *GitHubPipeline) attempt(ctx context.Context, a attempt) error {
	id := runID(a.run)
	log := p.logger().With(LogIssue, a.issue.String(), LogTask, a.run.TaskID, LogRetry, a.run.Retry)
	outDir := filepath.Join(p.dataDir(), "runs", id)
	logURL := ""
	if p.RunURL != "" {
		logURL = strings.TrimRight(p.RunURL, "/") + "/" + id
	}
	bot, err := p.GitHub.Bot(ctx, a.issue)
	if err != nil {
		return fmt.Errorf("find the app's bot user: %w", err)
	}
	st := &statusComment{gh: p.GitHub, issue: a.issue, bot: bot.Login, interval: p.StatusInterval, log: log}
	st.status = report.Status{Issue: a.issue.Number, Phase: report.PhaseQueued, RunURL: logURL, TriggeredBy: a.requester}
	if err := st.find(ctx); err != nil {
		return err
	}
	react := a.issue
	if a.pr != 0 {
		react.Number = a.pr
	}
	if err := p.GitHub.AddReaction(ctx, react, "eyes"); err != nil {
		log.Warn("could not add the 👀 reaction", LogError, err)
	}
	if err := st.write(ctx); err != nil {
		return err
	}
	pub, job, err := p.prepare(ctx, a, bot, id, outDir, logURL)
	if err != nil {
		return p.failed(ctx, st, a, err)
	}
	pub.status = st
	exec := p.Executor
	exec.Publisher = pub
	exec.Author = gitrepo.Signature{Name: bot.Login, Email: bot.Email()}
	exec.Progress = st.progress
	st.status.BaseBranch = job.Branch
	st.start(ctx)
	res, err := exec.Execute(ctx, job)
	st.stop()
	if ctx.Err() != nil {
		return p.interrupted(ctx, st, a)
	}
	if err != nil {
		if res != nil {
			st.status.Outcome = res.Outcome
		}
		return p.failed(ctx, st, a, err)
	}
	return p.finished(ctx, st, pub, res, log)
}

// prepare reads what the run needs from GitHub: the issue, the repository,
// for a retry the pull request and what the last attempt left, and a
// token for the one repository.
func (p *GitHubPipeline) prepare(ctx context.Context, a attempt, bot User, id, outDir, logURL string) (*githubPublisher, Job, error) {
	text, err := p.GitHub.GetIssue(ctx, a.issue)
	if err != nil {
		return nil, Job{}, err
	}
	repo, err := p.GitHub.Repository(ctx, a.issue)
	if err != nil {
		return nil, Job{}, err
	}
	pub := &githubPublisher{gh: p.GitHub, issue: a.issue, title: text.Title, branch: AgentBranch(a.issue.Number),
		base: repo.DefaultBranch, outDir: outDir, logURL: logURL, started: p.now(), a: a}
	if co, err := p.coAuthor(ctx, a); err == nil {
		pub.trailers = []string{co}
	} else {
		return nil, Job{}, err
	}
	feedback := instructionsText(a.requester, a.instructions)
	cloneBranch := repo.DefaultBranch
	if a.pr != 0 {
		prIssue := a.issue
		prIssue.Number = a.pr
		pr, err := p.GitHub.GetPullRequest(ctx, prIssue)
		if err != nil {
			return nil, Job{}, err
		}
		if pr.State != "open" || pr.HeadRef != pub.branch {
			return nil, Job{}, permanent(fmt.Errorf("pull request #%d is %s with head %q, not an open pull request from %s", a.pr, pr.State, pr.HeadRef, pub.branch))
		}
		pub.pr, pub.base, cloneBranch = &pr, pr.BaseRef, pub.branch
		pub.history = readHistory(pr.Body)
		reviews, err := p.GitHub.ReviewComments(ctx, prIssue)
		if errors.Is(err, ErrThreadsUnknown) {
			p.logger().Warn("review comments of resolved threads are not told apart", LogError, err)
		} else if err != nil {
			return nil, Job{}, err
		}
		feedback = retryFeedback(a, pub.history, reviews)
	}
	token, err := p.GitHub.RepoToken(ctx, a.issue)
	if err != nil {
		return nil, Job{}, err
	}
	job := Job{
		ID: id, RepoURL: repo.CloneURL, Branch: cloneBranch, OutDir: outDir, LogURL: logURL,
		// The token stays in memory: go-git sends it as basic auth and
		// nothing writes it to the clone's config or the sandbox.
		Auth:  &http.BasicAuth{Username: "x-access-token", Password: token},
		Issue: agent.Issue{Number: a.issue.Number, Title: text.Title, Body: text.Body, Feedback: feedback},
	}
	return pub, job, nil
}

// coAuthor is the Co-authored-by trailer of the requester, with the
// no-reply address GitHub links to the account.
func (p *GitHubPipeline) coAuthor(ctx context.Context, a attempt) (string, error) {
	u, err := p.GitHub.User(ctx, a.issue, a.requester)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Co-authored-by: %s <%d+%s@users.noreply.github.com>", u.Login, u.ID, u.Login), nil
}

// ErrThreadsUnknown marks review comments whose threads' resolved state
// could not be read (GitHub's GraphQL API did not answer): the retry then
// hears every comment that is not outdated, as it would from REST alone.
var ErrThreadsUnknown = errors.New("the resolved state of review threads is unknown")

func permanent(err error) error { return fmt.Errorf("%w: %w", err, asynq.SkipRetry) }

// interrupted ends a run whose context ended: a `/agent stop` (recorded by
// the queue before it cancelled) is final and said on the issue; a
// shutdown or a timeout is retried, and the status says so.
func (p *GitHubPipeline) interrupted(ctx context.Context, st *statusComment, a attempt) error {
	actx, cancel := afterCtx(ctx)
	defer cancel()
	by, cancelled, err := p.Cancels.Cancelled(actx, a.run.TaskID)
	if err != nil {
		return fmt.Errorf("run interrupted (%v); read cancel record: %w", context.Cause(ctx), err)
	}
	st.status.Phase = report.PhaseFailed
	if cancelled {
		st.status.Outcome = verify.Stopped
		st.status.Reason = fmt.Sprintf("stopped by @%s with `/agent stop`; the sandbox was removed and nothing was pushed", by)
		if err := st.write(actx); err != nil {
			p.logger().Warn("could not say on the issue that the run was stopped", LogError, err)
		}
		return permanent(fmt.Errorf("cancelled by %s", by))
	}
	st.status.Phase = report.PhaseQueued
	st.status.Reason = ""
	if err := st.write(actx); err != nil {
		p.logger().Warn("could not update the status after an interruption", LogError, err)
	}
	return fmt.Errorf("run interrupted by a worker shutdown or timeout, to be tried again: %w", context.Cause(ctx))
}

// failed reports a run that could not finish. A configuration problem or
// a permanent model error is final; anything else is retried while
// retries remain, and the comment says which.
func (p *GitHubPipeline) failed(ctx context.Context, st *statusComment, a attempt, cause error) error {
	actx, cancel := afterCtx(ctx)
	defer cancel()
	final := errors.Is(cause, asynq.SkipRetry) || a.run.Retry >= a.run.MaxRetry
	var reason string
	var perr *provider.Error
	switch {
	case errors.Is(cause, ErrConfig):
		final = true
		reason = "the repository's configuration needs fixing: " + cause.Error()
	case errors.As(cause, &perr) && perr.Kind != provider.KindTransient:
		final = true
		reason = "the model provider refused the request: " + perr.Error()
	case errors.As(cause, &perr):
		reason = "the model provider kept failing after its retries: " + perr.Error()
	case errors.Is(cause, gitrepo.ErrRemoteMoved):
		final = true
		reason = fmt.Sprintf("someone pushed to `%s` during the run, so nothing was overwritten; comment `/agent retry` to start from that push", AgentBranch(a.issue.Number))
	default:
		reason = "an infrastructure failure: " + cause.Error()
	}
	if !final {
		reason += fmt.Sprintf(" (try %d of %d; Patchwright tries again by itself)", a.run.Retry+1, a.run.MaxRetry+1)
	}
	st.status.Phase = report.PhaseFailed
	st.status.Reason = reason
	if err := st.write(actx); err != nil {
		p.logger().Warn("could not report the failure on the issue", LogError, err)
	}
	if final && !errors.Is(cause, asynq.SkipRetry) {
		return permanent(cause)
	}
	return cause
}

// finished reports a run that completed: the publisher opened or updated
// the pull request, or there was nothing to publish and the failure
// comment says why.
func (p *GitHubPipeline) finished(ctx context.Context, st *statusComment, pub *githubPublisher, res *Result, log *slog.Logger) error {
	if pub.prURL != "" {
		st.status.Phase = report.PhaseDone
		st.status.PullRequestURL = pub.prURL
		st.status.Outcome, st.status.Reason = res.Outcome, res.Reason
		log.Info("pull request published", "url", pub.prURL, "outcome", res.Outcome)
		return st.write(ctx)
	}
	if err := pub.recordAttempt(ctx, res); err != nil {
		return err
	}
	in, err := pub.reportInput(res)
	if err != nil {
		return err
	}
	body, err := report.FailureComment(in)
	if err != nil {
		return err
	}
	log.Info("nothing to publish", "outcome", res.Outcome, "reason", res.Reason)
	return st.writeBody(ctx, body)
}

// instructionsText frames a requester's free text for the model.
func instructionsText(by, text string) string {
	if strings.TrimSpace(text) == "" {
		return ""
	}
	return fmt.Sprintf("@%s asked for this attempt: %s", by, strings.TrimSpace(text))
}

// retryFeedback is what the model hears on a retry: the reviewer's words,
// the checks the last attempt failed, and the review comments still on
// the diff.
func retryFeedback(a attempt, h history, reviews []Comment) string {
	var b strings.Builder
	if s := instructionsText(a.requester, a.instructions); s != "" {
		b.WriteString(s + "\n\n")
	} else {
		fmt.Fprintf(&b, "@%s asked for another attempt without further instructions.\n\n", a.requester)
	}
	b.WriteString("The branch already holds the previous attempt (and any commits people added); improve on it.\n")
	if len(h.Failed) > 0 {
		b.WriteString("\nChecks that failed after the previous attempt:\n")
		for _, c := range h.Failed {
			fmt.Fprintf(&b, "- %s (`%s`), end of output:\n%s\n", c.Name, c.Command, c.Output)
		}
	}
	if len(reviews) > 0 {
		b.WriteString("\nReview comments on the pull request:\n")
		for i, c := range reviews {
			if i == 20 {
				fmt.Fprintf(&b, "- …and %d more\n", len(reviews)-20)
				break
			}
			fmt.Fprintf(&b, "- %s:%s (@%s): %s\n", c.Path, strconv.Itoa(c.Line), c.Author, truncateText(c.Body, 1000))
		}
	}
	return b.String()
}

func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
