// Package githubjob solves and retries issues on GitHub: it acknowledges
// the trigger, keeps one status comment, runs the shared pipeline with a
// publisher that pushes agent/issue-N and opens or updates the one pull
// request, keeps the attempt history and gathers a retry's feedback.
package githubjob

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/hibiken/asynq"
	"go.opentelemetry.io/otel/trace"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/config"
	"github.com/patchwright/patchwright/agent/images"
	"github.com/patchwright/patchwright/agent/provider"
	"github.com/patchwright/patchwright/internal/logkey"
	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/gitrepo"
	"github.com/patchwright/patchwright/jobs/interrupt"
	"github.com/patchwright/patchwright/jobs/pipeline"
	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/patchwright/patchwright/report"
	"github.com/patchwright/patchwright/verify"
)

// CheckRunPrefix starts the name of every check run Patchwright posts.
const CheckRunPrefix = "Patchwright / "

// CancelRecord tells a cancelled job from one interrupted by a shutdown or
// a timeout; *jobs.Queue satisfies it.
type CancelRecord interface {
	Cancelled(ctx context.Context, taskID string) (by string, cancelled bool, err error)
}

// Pipeline is the worker's pipeline on GitHub (docs/design.md §1, §4.8): it
// acknowledges the issue, runs the shared Executor with a publisher that
// pushes agent/issue-N and opens or updates the pull request, and keeps
// one status comment up to date. Re-running a job (asynq retries, a worker
// that died) finds what the last run left (status comment, branch, pull
// request, check runs) and updates it instead of adding a second.
type Pipeline struct {
	// GitHub is the API; required.
	GitHub GitHub
	// Executor runs each attempt; required. It is shared, never changed:
	// what differs per attempt is in the pipeline.Job.
	Executor *pipeline.Executor
	// Installations are the executors of the installations that bring
	// their own model and keys (installmodel.Set), by installation ID;
	// an installation not in it runs on Executor. Nil: none.
	Installations map[int64]*pipeline.Executor
	// Cancels tells a `/agent stop` from a shutdown; required.
	Cancels CancelRecord
	// Budget refuses a job whose installation or repository spent its
	// monthly cap, and counts each run's estimated cost; nil: no monthly
	// caps.
	Budget Budget
	// Audit appends to the audit log (jobs.Queue's Audit); nil: none.
	Audit func(ctx context.Context, e jobs.AuditEntry) error
	// DataDir keeps each run's ledger.jsonl, result.json and pr.md under
	// runs/<run ID>/; default os.TempDir()/patchwright.
	DataDir string
	// RunURL, when set, is the base of run links: RunURL + "/" + run ID.
	// Without it, comments say where the log lies on the worker.
	RunURL string
	// RunLink, when set, makes the link of a run from RunURL and the run
	// ID instead (cmd signs them: webhook/runpage shows only signed links).
	RunLink func(base, id string) string
	// StatusInterval is the least time between two edits of the status
	// comment while a run progresses; default DefaultStatusInterval.
	StatusInterval time.Duration
	// Logger; default slog.Default().
	Logger *slog.Logger
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Notes hands the running job the `/agent note`s writers sent for its
	// issue; *jobs.Queue satisfies it. Nil: notes are not read.
	Notes NoteSource
	// Plans keeps a planning run's plan for its approval; nil keeps none
	// (an approval then finds no plan).
	Plans PlanStore
	// Policy is the operator's policy over repositories; each job gets
	// its installation's and organisation's entry (config.PolicyFile.For).
	// Nil: no policy.
	Policy *config.PolicyFile
	// Outcomes keeps each agent pull request's model and cost for its
	// outcome (jobs/outcomes.Store); nil keeps none.
	Outcomes RunNoter
	// Runs keeps each run's summary for the runs dashboard
	// (runstore.Store.PutSummary); nil keeps none.
	Runs RunIndex
	// Images fetches the images of the issue and of the comments that
	// become its feedback, with the repository's token (set per job);
	// nil fetches none, and the model is told nothing of them.
	Images *images.Fetcher
	// Tracer makes each job's trace: a root span per job (trace.go),
	// with the pipeline's phases as its children. Nil: no spans.
	Tracer trace.Tracer

	// orgConfigs caches organisations' default configurations.
	orgConfigs orgConfigs
}

// PlanStore keeps an issue's latest plan; *jobs.Queue is one.
type PlanStore interface {
	SavePlan(ctx context.Context, issue tasks.Issue, rec jobs.PlanRecord) error
	LatestPlan(ctx context.Context, issue tasks.Issue) (jobs.PlanRecord, bool, error)
	SetAsidePlan(ctx context.Context, issue tasks.Issue, task, by string) (bool, error)
}

// NoteSource drains the notes waiting for an issue's job.
type NoteSource interface {
	TakeNotes(ctx context.Context, issue tasks.Issue) ([]jobs.Note, error)
}

// notes is the loop's poll of p.Notes for issue.
func (p *Pipeline) notes(issue tasks.Issue) func(context.Context) ([]agent.Note, error) {
	if p.Notes == nil {
		return nil
	}
	return func(ctx context.Context) ([]agent.Note, error) {
		ns, err := p.Notes.TakeNotes(ctx, issue)
		out := make([]agent.Note, 0, len(ns))
		for _, n := range ns {
			out = append(out, agent.Note{From: n.Author, Text: n.Text})
		}
		return out, err
	}
}

// DefaultStatusInterval keeps a run's status edits far below GitHub's
// content-creation limits (80 a minute).
const DefaultStatusInterval = 10 * time.Second

// request is one solve or retry job, as the pipeline runs it.
type request struct {
	issue        tasks.Issue
	requester    string
	instructions string
	trigger      string // for the attempt history
	pr           int    // the pull request of a retry; 0 for a solve
	issueHash    string // the issue's text as the trigger pinned it; "" for none
	bot          string // the app's bot login
	at           tasks.Attempt
	// ciHead and ciReported are set for a fix attempt the repository's
	// CI started: the head it failed on and what the event said.
	ciHead, ciReported string
	// rebase says how the moved base was merged in, for an update to it.
	rebase string
	// conflict is set for the resolution of a moved base GitHub could
	// not merge (conflict.go); nil otherwise.
	conflict *conflictRun
	// planning is set for a planning run, and previousPlan is the plan
	// it revises ("" for a first plan).
	planning     bool
	previousPlan string
	// approvedPlan is the plan an approved attempt follows (the agent
	// frames it: agent.Issue.ApprovedPlan); the approver's notes stay
	// in instructions.
	approvedPlan string
	// planTask is the task whose plan this job settles (replaces,
	// follows approved, or sets aside); its comment is edited to say so.
	planTask string
}

// executor is the executor of issue's installation: its own model and
// keys when the operator gave it some, else the operator's.
func (p *Pipeline) executor(issue tasks.Issue) *pipeline.Executor {
	if e, ok := p.Installations[issue.InstallationID]; ok {
		return e
	}
	return p.Executor
}

func (p *Pipeline) logger() *slog.Logger { return cmp.Or(p.Logger, slog.Default()) }

func (p *Pipeline) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

func (p *Pipeline) dataDir() string {
	return cmp.Or(p.DataDir, filepath.Join(os.TempDir(), "patchwright"))
}

// run runs one job. Its error is what asynq sees: nil when the job is
// done (whatever the outcome), wrapping asynq.SkipRetry when trying again
// cannot help, anything else to be retried.
func (p *Pipeline) run(ctx context.Context, a request) (err error) {
	var res *pipeline.Result
	span := p.startSpan(ctx, spanJob, a)
	defer func() { span.end(outcomeOf(res), costOf(res), err) }()
	id := runID(a.at)
	if note := rerunNote(a.at.Rerun); note != "" {
		a.trigger += "; " + note
	}
	log := p.logger().With(logkey.Issue, a.issue.String(), logkey.Task, a.at.TaskID, logkey.Retry, a.at.Retry)
	logURL := p.runLink(id)
	bot, err := p.GitHub.Bot(ctx, a.issue)
	if err != nil {
		return fmt.Errorf("find the app's bot user: %w", err)
	}
	a.bot = bot.Login
	// Checked before anything is said on the issue: a CI result for a
	// head that is not (or no longer) Patchwright's is not news.
	if skip, err := p.ciSkipped(ctx, a, log); err != nil || skip {
		return err
	}
	st := p.newStatus(a, bot.Login, logURL, log)
	if err := p.announce(ctx, a, st, log); err != nil {
		return err
	}
	entry := p.indexRun(a, id, log)
	var pub *publisher
	// A closure: res and pub are read when the run ends (prepare and
	// Execute set them below), not now, while both are still nil.
	defer func() { entry.ended(ctx, res, pub, p.now()) }()
	settle, err := p.reserve(ctx, a.issue, a.at.TaskID, log)
	if err != nil {
		return p.failed(ctx, st, a, err)
	}
	var cost *float64
	defer func() { settle(cost) }()
	var job pipeline.Job
	job, pub, err = p.prepare(ctx, a, id, logURL, log)
	if err != nil {
		return p.failed(ctx, st, a, err)
	}
	entry.started(ctx, pub)
	span.under(&job)
	st.showPrepared(a, job.Attempt.Trigger, pub)
	job.Author = gitrepo.Signature{Name: bot.Login, Email: bot.Email()}
	job.Progress = st.progress
	job.Notes = p.notes(a.issue)
	st.status.BaseBranch = job.Branch
	st.start(ctx)
	// A worker's drain closes the interrupt channel shortly before its
	// grace period ends: the model loop stops between steps.
	// An operator's pause closes it too, and says so (interrupt.Why).
	ictx := agent.WithInterruptReason(agent.WithInterrupt(ctx, interrupt.Chan(ctx)), func() string { return interrupt.Why(ctx) })
	res, err = p.executor(a.issue).Execute(ictx, job)
	st.stop()
	if res != nil && res.CostUSD != nil {
		st.status.CostUSD, cost = res.CostUSD, res.CostUSD
	}
	if ctx.Err() != nil {
		return p.interrupted(ctx, st, a)
	}
	if err == nil && res.Interrupted && len(res.Changes) == 0 {
		return p.handBack(ctx, st)
	}
	if err != nil {
		if res != nil {
			st.status.Outcome = res.Outcome
		}
		if a.conflict != nil && errors.Is(err, gitrepo.ErrUnmergeable) {
			if serr := p.conflictUnresolved(ctx, &a, res, err, log); serr != nil {
				log.Warn("could not say the conflict", logkey.Err, serr)
			}
			err = permanent(err)
		}
		return p.failed(ctx, st, a, err)
	}
	if a.conflict != nil && res.HeadCommit == "" {
		if err := p.conflictUnresolved(ctx, &a, res, nil, log); err != nil {
			return err
		}
	}
	p.auditPublished(ctx, a, res, log)
	return p.finished(ctx, st, pub, res, log)
}

// auditPublished records a pull request opened or updated in the audit
// log, as done for whoever asked for the run.
func (p *Pipeline) auditPublished(ctx context.Context, a request, res *pipeline.Result, log *slog.Logger) {
	if p.Audit == nil || res.URL == "" {
		return
	}
	e := jobs.AuditEntry{Actor: a.requester, Action: "pull request published", Installation: a.issue.InstallationID,
		Repo: a.issue.Owner + "/" + a.issue.Repo, Issue: a.issue.Number, Result: string(res.Outcome) + ": " + res.URL, Delivery: a.at.TaskID}
	if err := p.Audit(ctx, e); err != nil {
		log.Error("audit log: could not record the published pull request", logkey.Err, err)
	}
}

// newStatus is the job's status comment as queued, before it is looked
// for on the issue.
func (p *Pipeline) newStatus(a request, bot, logURL string, log *slog.Logger) *statusComment {
	st := &statusComment{gh: p.GitHub, issue: a.issue, bot: bot, interval: p.StatusInterval, log: log}
	st.status = report.Status{Issue: a.issue.Number, Phase: report.PhaseQueued, RunURL: logURL, TriggeredBy: a.requester}
	if a.ciHead != "" || a.rebase != "" || a.at.Rerun != tasks.RerunNone || a.requester == "" {
		st.status.Trigger = a.trigger
	}
	return st
}

// showPrepared puts in the status what prepare settled: a CI fix's
// trigger (the job's attempt's), and a retry's open pull request.
func (st *statusComment) showPrepared(a request, trigger string, pub *publisher) {
	if a.ciHead != "" {
		st.status.Trigger = trigger
	}
	if pub.pr != nil {
		// A retry: the pull request is open whatever this attempt does.
		st.status.PullRequestURL = pub.pr.URL
	}
}

// ciSkipped reports, for a CI fix, that its head is not (or no longer)
// Patchwright's, logging why; false for any other job.
func (p *Pipeline) ciSkipped(ctx context.Context, a request, log *slog.Logger) (bool, error) {
	if a.ciHead == "" {
		return false, nil
	}
	ok, why, err := p.ciApplies(ctx, a)
	if err != nil {
		return false, err
	}
	if !ok {
		log.Info("CI fix not started", "head", a.ciHead, "why", why)
		return true, nil
	}
	return false, nil
}

// announce is what is said on the issue before the job is reserved: the
// status comment found and written, the 👀 reaction, and a settled plan.
func (p *Pipeline) announce(ctx context.Context, a request, st *statusComment, log *slog.Logger) error {
	if err := st.find(ctx); err != nil {
		return refused(err, "read the issue's comments", "issues: read", "")
	}
	react := a.issue
	if a.pr != 0 {
		react.Number = a.pr
	}
	if err := p.GitHub.AddReaction(ctx, react, "eyes"); err != nil {
		log.Warn("could not add the 👀 reaction", logkey.Err, err)
	}
	if err := st.write(ctx); err != nil {
		// Without issues: write nothing can be said on the issue at all.
		return refused(err, "comment on the issue", "issues: write", "")
	}
	if a.planTask != "" {
		// The webhook (an approval) or Solve (the label) settled the
		// plan; the comment says so.
		settled := report.PlanSettlement{SetAsideBy: a.requester}
		if a.approvedPlan != "" {
			settled = report.PlanSettlement{ApprovedBy: a.requester, Notes: a.instructions}
		}
		p.settlePlanComment(ctx, a, settled)
	}
	return nil
}

// prepare reads what the run needs from GitHub: the issue, the repository,
// for a retry the pull request and what the last attempt left, and a
// token for the one repository.
func (p *Pipeline) prepare(ctx context.Context, a request, id, logURL string, log *slog.Logger) (pipeline.Job, *publisher, error) {
	text, err := p.GitHub.GetIssue(ctx, a.issue)
	if err != nil {
		return pipeline.Job{}, nil, err
	}
	if err := checkPin(a.issueHash, text); err != nil {
		return pipeline.Job{}, nil, err
	}
	repo, err := p.GitHub.Repository(ctx, a.issue)
	if err != nil {
		return pipeline.Job{}, nil, err
	}
	pub := &publisher{gh: p.GitHub, issue: a.issue, title: text.Title, branch: jobs.AgentBranch(a.issue.Number),
		base: repo.DefaultBranch, logURL: logURL, log: log}
	if p.Outcomes != nil {
		pub.noteRun = func(ctx context.Context, pr int, cost *float64) error {
			return p.Outcomes.NoteRun(ctx, a.issue, pr, p.executor(a.issue).Provider.Model(), cost)
		}
	}
	if a.requester != "" {
		// A CI fix has no requester: nobody to credit.
		co, err := p.coAuthor(ctx, a)
		if err != nil {
			return pipeline.Job{}, nil, err
		}
		pub.trailers = []string{co}
		pub.requester = a.requester
	}
	job := pipeline.Job{
		ID: id, RepoURL: repo.CloneURL, Branch: repo.DefaultBranch, OutDir: filepath.Join(p.dataDir(), "runs", id), LogURL: logURL,
		Issue:      agent.Issue{Number: a.issue.Number, Title: text.Title, Body: text.Body, Feedback: requestText(a), ApprovedPlan: a.approvedPlan},
		Publisher:  pub,
		Advisories: advisories{gh: p.GitHub, repo: a.issue},
		Attempt:    report.Attempt{Number: 1, Started: p.now().UTC(), TriggeredBy: a.requester, Trigger: a.trigger},
		// From the trigger's enqueue: the phase timings then measure the
		// label (or command) to the pull request.
		EnqueuedAt: a.at.EnqueuedAt,
	}
	if err := p.addContext(ctx, a, &job, pub); err != nil {
		return pipeline.Job{}, nil, err
	}
	token, err := p.GitHub.RepoToken(ctx, a.issue)
	if err != nil {
		return pipeline.Job{}, nil, refused(err, "clone and push with a token for this repository", "contents: write", "")
	}
	// The token stays in memory: go-git sends it as basic auth and
	// nothing writes it to the clone's config or the sandbox.
	job.Auth = &http.BasicAuth{Username: "x-access-token", Password: token}
	if p.Images != nil {
		f := *p.Images
		f.Token = token
		job.Issue.Images = f.Fetch(ctx, images.Find(text.Body, job.Issue.Feedback))
	}
	return job, pub, nil
}

// addContext gives job what it reads besides the issue: the operator's
// policy, the organisation's default configuration, and the earlier
// attempts (a retry) or the issue's comments (a first attempt).
func (p *Pipeline) addContext(ctx context.Context, a request, job *pipeline.Job, pub *publisher) error {
	if p.Policy != nil {
		job.Policy, job.PolicyName = p.Policy.For(a.issue.InstallationID, a.issue.Owner)
		pub.branchOnly = !job.Policy.OpensPullRequests()
	}
	var err error
	if job.OrgConfig, err = p.orgConfig(ctx, a.issue); err != nil {
		return err
	}
	w := &writers{gh: p.GitHub, repo: a.issue, bot: a.bot}
	if a.pr != 0 {
		return p.prepareRetry(ctx, a, w, job, pub)
	}
	comments, err := p.issueContext(ctx, w, a.issue)
	if err != nil {
		return err
	}
	job.Issue.Feedback = strings.TrimSpace(job.Issue.Feedback + "\n" + comments)
	return nil
}

func permanent(err error) error { return fmt.Errorf("%w: %w", err, asynq.SkipRetry) }

// interrupted ends a run whose context ended: a `/agent stop` (recorded by
// the queue before it cancelled) is final and said on the issue; a
// shutdown or a timeout is retried, and the status says so.
func (p *Pipeline) interrupted(ctx context.Context, st *statusComment, a request) error {
	actx, cancel := interrupt.After(ctx)
	defer cancel()
	by, cancelled, err := p.Cancels.Cancelled(actx, a.at.TaskID)
	if err != nil {
		return fmt.Errorf("run interrupted (%v); read cancel record: %w", context.Cause(ctx), err)
	}
	if cancelled {
		st.status.Outcome = verify.Stopped
		who, why := jobs.ParseCancelBy(by)
		if why == "" {
			why = "with `/agent stop`"
		} else {
			why = "(" + why + ")"
		}
		st.fail(fmt.Sprintf("stopped by @%s %s; the sandbox was removed and nothing was pushed", who, why))
		if err := st.write(actx); err != nil {
			p.logger().Warn("could not say on the issue that the run was stopped", logkey.Err, err)
		}
		return permanent(fmt.Errorf("cancelled by %s", by))
	}
	st.status.Phase = report.PhaseQueued
	st.status.Reason = ""
	if err := st.write(actx); err != nil {
		p.logger().Warn("could not update the status after an interruption", logkey.Err, err)
	}
	return fmt.Errorf("run interrupted by a worker shutdown or timeout, to be tried again: %w", context.Cause(ctx))
}

// handBack ends a run a drain interrupted before the model changed
// anything (protected paths dropped): there is nothing to push, so the
// job goes back to the queue, and the status says so. A change that could
// not be committed (a secret) is reported as any other run's.
func (p *Pipeline) handBack(ctx context.Context, st *statusComment) error {
	st.status.Phase = report.PhaseQueued
	st.status.Reason = "handed back to the queue: the worker running it shut down before the model had changed anything, so another worker will start it again"
	if why := interrupt.Why(ctx); why != "" {
		st.status.Reason = "handed back to the queue: " + why + "; the model had changed nothing yet, so the job starts again on resume"
	}
	if err := st.write(ctx); err != nil {
		p.logger().Warn("could not say on the issue that the job was handed back", logkey.Err, err)
	}
	return interrupt.ErrHandedBack
}

// failed reports a run that could not finish. A configuration problem or
// a permanent model error is final; anything else is retried while
// retries remain, and the comment says which.
func (p *Pipeline) failed(ctx context.Context, st *statusComment, a request, cause error) error {
	actx, cancel := interrupt.After(ctx)
	defer cancel()
	final := errors.Is(cause, asynq.SkipRetry) || a.at.Last()
	var reason string
	var perr *provider.Error
	var rf *refusal
	var ci *errCILimit
	switch {
	case errors.As(cause, &ci):
		final = true
		reason = ci.Error()
	case errors.As(cause, &rf):
		final = true
		reason = rf.reason()
	case isBudgetRefusal(cause):
		final = true
		reason = "Patchwright did not start: " + cause.Error() + ". An operator can raise the cap; otherwise label the issue again or comment /agent retry after the reset"
	case errors.Is(cause, errIssueEdited) && a.pr != 0:
		final = true
		reason = "the issue was edited after the retry was asked for: comment /agent retry again to run the new text"
	case errors.Is(cause, errIssueEdited):
		final = true
		reason = "the issue was edited after it was labelled: label it again to run the new text"
	case errors.Is(cause, pipeline.ErrPolicy):
		final = true
		reason = cause.Error() + "; only the operator can change that, so nothing ran"
	case errors.Is(cause, pipeline.ErrConfig):
		final = true
		reason = "the repository's configuration needs fixing: " + cause.Error()
	case errors.As(cause, &perr) && perr.Kind != provider.KindTransient:
		final = true
		reason = "the model provider refused the request: " + perr.Error()
	case errors.As(cause, &perr):
		reason = "the model provider kept failing after its retries: " + perr.Error()
	case errors.Is(cause, gitrepo.ErrRemoteMoved):
		final = true
		reason = fmt.Sprintf("someone pushed to `%s` during the run, so nothing was overwritten; comment `/agent retry` to start from that push", jobs.AgentBranch(a.issue.Number))
	default:
		if gh, ok := githubapi.AsRefusal(cause); ok {
			final = true
			reason = (&refusal{what: "go on", gh: gh, err: cause}).reason()
			break
		}
		reason = "an infrastructure failure: " + cause.Error()
	}
	if !final {
		reason += fmt.Sprintf(" (try %d of %d; Patchwright tries again by itself)", a.at.Retry+1, a.at.MaxRetry+1)
	}
	st.fail(reason)
	if err := st.write(actx); err != nil {
		p.logger().Warn("could not report the failure on the issue", logkey.Err, err)
	}
	if final && !errors.Is(cause, asynq.SkipRetry) {
		return permanent(cause)
	}
	return cause
}

// finished reports a run that completed: the publisher opened or updated
// the pull request, or there was nothing to publish and the failure
// comment says why (and a retried pull request's history gains the
// attempt).
func (p *Pipeline) finished(ctx context.Context, st *statusComment, pub *publisher, res *pipeline.Result, log *slog.Logger) error {
	if res.URL != "" {
		st.status.Phase = report.PhaseDone
		st.status.PullRequestURL = res.URL
		st.status.Outcome, st.status.Reason = res.Outcome, res.Reason
		log.Info("pull request published", "url", res.URL, "outcome", res.Outcome)
		return st.write(ctx)
	}
	if pub.branchOnly && res.HeadCommit != "" {
		log.Info("pushed without a pull request: the operator's policy allows none", "branch", pub.branch, "outcome", res.Outcome)
		return st.writeBody(ctx, report.BranchOnly(pub.issue.Number, pub.branch, res.Body))
	}
	if err := p.recordAttempt(ctx, pub, res); err != nil {
		return err
	}
	if pub.rebased != "" && res.HeadCommit == "" {
		return p.rebaseChecked(ctx, st, pub, res, log)
	}
	in := res.Report
	if pub.pr != nil {
		in.OpenPullRequestURL = pub.pr.URL
	}
	in.Merging = res.Merge != nil
	body, err := report.FailureComment(in)
	if err != nil {
		return err
	}
	log.Info("nothing to publish", "outcome", res.Outcome, "reason", res.Reason)
	return st.writeBody(ctx, body)
}

// recordAttempt adds an attempt that published nothing to the retried
// pull request's history, leaving its change and text as they were.
func (p *Pipeline) recordAttempt(ctx context.Context, pub *publisher, res *pipeline.Result) error {
	if pub.pr == nil {
		return nil
	}
	h := report.ParseHistory(pub.pr.Body)
	h.Attempts = res.Report.Attempts
	body, err := report.ReplaceHistory(pub.pr.Body, h)
	if err != nil {
		return err
	}
	if err := p.GitHub.EditPullRequest(ctx, pub.prIssue(pub.pr.Number), pub.pr.Title, body); err != nil {
		return err
	}
	pub.pr.Body = body // what a later edit of this job starts from
	return nil
}
