// Package worker is the asynq side of Patchwright: the handlers that turn
// the catalogue's tasks into pipeline runs and replies, the server that
// serves them, and the sweeper that reports jobs asynq gave up on.
package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/patchwright/patchwright/internal/logkey"
	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/interrupt"
	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/patchwright/patchwright/report/marker"
)

// Pipeline does the work of an agent job (docs/design.md §1 steps 1-9). It must be
// idempotent: asynq runs a job again after a crash, a timeout or a failure.
// An error wrapping asynq.SkipRetry is permanent; any other is retried.
type Pipeline interface {
	Solve(ctx context.Context, job tasks.SolveIssue, at tasks.Attempt) error
	Retry(ctx context.Context, job tasks.RetryPR, at tasks.Attempt) error
}

// Commenter posts a comment on an issue or pull request and returns its
// ID, and lists an issue's comments (a reply retried after a 5xx looks
// for itself first); *githubapi.App is one.
type Commenter interface {
	PostComment(ctx context.Context, issue tasks.Issue, body string) (int64, error)
	Comments(ctx context.Context, issue tasks.Issue) ([]githubapi.Comment, error)
	// AddReaction reacts to the issue, AddCommentReaction to one of its
	// comments; GitHub keeps one reaction per content and user, so a
	// repeat changes nothing.
	AddReaction(ctx context.Context, issue tasks.Issue, content string) error
	AddCommentReaction(ctx context.Context, issue tasks.Issue, commentID int64, content string) error
}

// Branches deletes a branch as a compare-and-swap; *githubjob.Branches is
// one.
type Branches interface {
	// DeleteBranchAt deletes branch only while it points at sha; deleted
	// is false, with no error, when it is gone or points elsewhere.
	DeleteBranchAt(ctx context.Context, repo tasks.Issue, branch, sha string) (deleted bool, err error)
}

// Approvals brings a pull request's approval check up to date;
// *githubjob.Pipeline is one.
type Approvals interface {
	Approval(ctx context.Context, pr tasks.Issue) error
}

// Outcomes classifies a closed agent pull request from GitHub's state;
// *outcomes.Classifier is one.
type Outcomes interface {
	Outcome(ctx context.Context, pr tasks.Issue) error
}

// ErrNoModel is what NoModelPipeline fails every job with.
var ErrNoModel = errors.New("no model is configured (set PATCHWRIGHT_MODEL), so agent jobs cannot run")

// NoModelPipeline is the Pipeline of a worker started without a model
// (`serve` without PATCHWRIGHT_MODEL). It does no work: each job fails
// permanently with ErrNoModel (so asynq archives it with that message and
// the issue's lock is released), rather than pretending to have done
// anything.
type NoModelPipeline struct{}

// Solve fails with ErrNoModel wrapped in asynq.SkipRetry.
func (NoModelPipeline) Solve(context.Context, tasks.SolveIssue, tasks.Attempt) error {
	return fmt.Errorf("%w: %w", ErrNoModel, asynq.SkipRetry)
}

// Retry fails with ErrNoModel wrapped in asynq.SkipRetry.
func (NoModelPipeline) Retry(context.Context, tasks.RetryPR, tasks.Attempt) error {
	return fmt.Errorf("%w: %w", ErrNoModel, asynq.SkipRetry)
}

// Handlers turns asynq tasks into Pipeline and Commenter calls and releases
// an issue's lock when its job ends. All fields but Branches are
// required.
type Handlers struct {
	Queue     *jobs.Queue
	Pipeline  Pipeline
	Commenter Commenter
	// Branches deletes the branch of a closed pull request; without it,
	// those tasks fail at once (asynq.SkipRetry) and the branch stays.
	Branches Branches
	// Approvals updates the approval check of a pull request; without
	// it, those tasks fail at once (asynq.SkipRetry).
	Approvals Approvals
	// Outcomes classifies closed agent pull requests; without it, those
	// tasks fail at once (asynq.SkipRetry).
	Outcomes Outcomes
	// Fairness limits agent jobs per installation and repository; nil:
	// none.
	Fairness *Fairness
	Logger   *slog.Logger
}

// Mux routes every task type of the catalogue to its handler.
func (h *Handlers) Mux() *asynq.ServeMux {
	mux := asynq.NewServeMux()
	mux.HandleFunc(tasks.TypeSolveIssue, h.solve)
	mux.HandleFunc(tasks.TypeRetryPR, h.retry)
	mux.HandleFunc(tasks.TypeReply, h.reply)
	mux.HandleFunc(tasks.TypeDeleteBranch, h.deleteBranch)
	mux.HandleFunc(tasks.TypeApproval, h.approval)
	mux.HandleFunc(tasks.TypeOutcome, h.outcome)
	return mux
}

func (h *Handlers) solve(ctx context.Context, t *asynq.Task) error {
	p, err := tasks.Decode[tasks.SolveIssue](t)
	if err != nil {
		return err
	}
	at := attemptOf(ctx, t)
	return h.agentJob(ctx, p.Issue, at, func(ctx context.Context, at tasks.Attempt) error {
		return h.Pipeline.Solve(ctx, p, at)
	})
}

func (h *Handlers) retry(ctx context.Context, t *asynq.Task) error {
	p, err := tasks.Decode[tasks.RetryPR](t)
	if err != nil {
		return err
	}
	at := attemptOf(ctx, t)
	return h.agentJob(ctx, p.Issue, at, func(ctx context.Context, at tasks.Attempt) error {
		return h.Pipeline.Retry(ctx, p, at)
	})
}

func (h *Handlers) reply(ctx context.Context, t *asynq.Task) error {
	p, err := tasks.Decode[tasks.Reply](t)
	if err != nil {
		return err
	}
	if p.Reaction != "" {
		return h.react(ctx, p)
	}
	// The marker makes the reply findable: a POST answered with a 5xx
	// may have been stored, and its retry must not post it again.
	// Replies are rare: looking first on every try costs little.
	mark := marker.Reply(p.DeliveryID)
	cs, err := h.Commenter.Comments(ctx, p.Issue)
	if err != nil {
		return fmt.Errorf("reply on %s: look for an earlier try: %w", p.Issue, err)
	}
	for _, c := range cs {
		if strings.Contains(c.Body, mark) {
			return nil
		}
	}
	if _, err := h.Commenter.PostComment(ctx, p.Issue, p.Body+"\n\n"+mark); err != nil {
		if _, ok := githubapi.AsRefusal(err); ok {
			err = fmt.Errorf("%w: %w", err, asynq.SkipRetry)
		}
		return fmt.Errorf("reply on %s: %w", p.Issue, err)
	}
	return nil
}

// react adds a reply's reaction, to its comment or else to its issue.
func (h *Handlers) react(ctx context.Context, p tasks.Reply) error {
	var err error
	if p.CommentID != 0 {
		err = h.Commenter.AddCommentReaction(ctx, p.Issue, p.CommentID, p.Reaction)
	} else {
		err = h.Commenter.AddReaction(ctx, p.Issue, p.Reaction)
	}
	if _, ok := githubapi.AsRefusal(err); ok {
		err = fmt.Errorf("%w: %w", err, asynq.SkipRetry)
	}
	return err
}

// deleteBranch deletes agent/issue-N of a closed pull request if its head
// is still the commit Patchwright pushed; a branch someone pushed to since
// is kept, and nothing is said about it.
func (h *Handlers) deleteBranch(ctx context.Context, t *asynq.Task) error {
	p, err := tasks.Decode[tasks.DeleteBranch](t)
	if err != nil {
		return err
	}
	if h.Branches == nil {
		return fmt.Errorf("delete branch of %s: no Branches configured: %w", p.Issue, asynq.SkipRetry)
	}
	branch := jobs.AgentBranch(p.Number)
	log := h.Logger.With(logkey.Issue, p.Issue.String(), "branch", branch)
	deleted, err := h.Branches.DeleteBranchAt(ctx, p.Issue, branch, p.SHA)
	if err != nil {
		if _, ok := githubapi.AsRefusal(err); ok {
			err = fmt.Errorf("%w: %w", err, asynq.SkipRetry)
		}
		return err
	}
	if !deleted {
		log.Info("branch kept: gone already, or someone pushed to it", "pushed", p.SHA)
		return nil
	}
	log.Info("branch deleted after its pull request was closed", "pr", p.PR)
	return nil
}

func (h *Handlers) approval(ctx context.Context, t *asynq.Task) error {
	p, err := tasks.Decode[tasks.Approval](t)
	if err != nil {
		return err
	}
	if h.Approvals == nil {
		return fmt.Errorf("approval check of %s: no Approvals configured: %w", p.Issue, asynq.SkipRetry)
	}
	err = h.Approvals.Approval(ctx, p.Issue)
	if _, ok := githubapi.AsRefusal(err); ok {
		err = fmt.Errorf("%w: %w", err, asynq.SkipRetry)
	}
	return err
}

func (h *Handlers) outcome(ctx context.Context, t *asynq.Task) error {
	p, err := tasks.Decode[tasks.Outcome](t)
	if err != nil {
		return err
	}
	if h.Outcomes == nil {
		return fmt.Errorf("outcome of %s: no Outcomes configured: %w", p.Issue, asynq.SkipRetry)
	}
	err = h.Outcomes.Outcome(ctx, p.Issue)
	if _, ok := githubapi.AsRefusal(err); ok {
		err = fmt.Errorf("%w: %w", err, asynq.SkipRetry)
	}
	return err
}

// agentJob runs one attempt of an agent job: it checks for a cancel before
// and after the work, and releases the issue's lock once the job will not
// run again (success, permanent failure, last retry, or cancelled).
func (h *Handlers) agentJob(ctx context.Context, issue tasks.Issue, run tasks.Attempt, work func(context.Context, tasks.Attempt) error) error {
	log := h.Logger.With(logkey.Task, run.TaskID, logkey.Issue, issue.String(), logkey.Retry, run.Retry)
	if err := h.checkCancelled(ctx, issue, run); err != nil {
		return err
	}
	if err := h.hold(ctx, issue, run); err != nil {
		log.Info("job held", "why", err.Error())
		return err
	}
	releaseSlot, err := h.takeSlot(ctx, issue, run)
	if err != nil {
		if errors.Is(err, ErrWaiting) {
			log.Info("job put back", "why", err.Error())
		}
		return err
	}
	if run.Rerun, err = h.Queue.StartRun(ctx, run.TaskID); err != nil {
		releaseSlot()
		return err
	}
	wctx, stopWatch := h.watchPause(ctx, issue)
	err = work(wctx, run)
	stopWatch()
	releaseSlot()
	if err != nil && (errors.Is(context.Cause(ctx), ErrDrained) || handedBack(err)) && !errors.Is(err, asynq.SkipRetry) {
		err = fmt.Errorf("%w: %w", ErrDrained, err)
	}
	h.endRun(ctx, run, err)
	if cerr := h.checkCancelled(ctx, issue, run); cerr != nil {
		return cerr
	}
	final := err == nil || errors.Is(err, asynq.SkipRetry) || run.Last()
	if final {
		if rerr := h.release(ctx, issue, run.TaskID); rerr != nil {
			log.Error("job ended but its lock stays until it expires or the next trigger clears it", logkey.Err, rerr)
		}
		h.startDeferredUpdate(ctx, issue, log)
	}
	if err != nil {
		log.Error("job failed", logkey.Err, err, "final", final)
		return err
	}
	log.Info("job done")
	return nil
}

// endRun records how the run ended for the task's next run: a task that
// will not run again is forgotten.
func (h *Handlers) endRun(ctx context.Context, run tasks.Attempt, err error) {
	how := tasks.RerunNone
	switch {
	case err == nil, errors.Is(err, asynq.SkipRetry):
	case errors.Is(err, ErrDrained):
		how = tasks.RerunDrained
	case !run.Last():
		how = tasks.RerunFailed
	}
	rctx, cancel := interrupt.After(ctx)
	defer cancel()
	if rerr := h.Queue.EndRun(rctx, run.TaskID, how); rerr != nil {
		h.Logger.Error("the next run of this job may not say how this one ended", logkey.Task, run.TaskID, logkey.Err, rerr)
	}
}

// checkCancelled returns an error wrapping asynq.SkipRetry if the task was
// cancelled (and releases the lock), nil if not. A Redis error is returned
// as is, so the task is retried rather than run unchecked.
func (h *Handlers) checkCancelled(ctx context.Context, issue tasks.Issue, run tasks.Attempt) error {
	rctx, cancel := interrupt.After(ctx)
	defer cancel()
	by, cancelled, err := h.Queue.Cancelled(rctx, run.TaskID)
	if err != nil {
		return err
	}
	if !cancelled {
		return nil
	}
	if err := h.Queue.Release(rctx, issue, run.TaskID); err != nil {
		h.Logger.Error("release lock after cancel", logkey.Task, run.TaskID, logkey.Err, err)
	}
	h.Logger.Info("job cancelled", logkey.Task, run.TaskID, logkey.Issue, issue.String(), "by", by)
	return fmt.Errorf("cancelled by %s: %w", by, asynq.SkipRetry)
}

// startDeferredUpdate starts one of the repository's updates that a push
// deferred past jobs.MaxUpdatesPerPush, now that one of its jobs ended: a
// chain, each update's end starting the next. A failure is logged: the
// update stays deferred for the next job's end.
func (h *Handlers) startDeferredUpdate(ctx context.Context, repo tasks.Issue, log *slog.Logger) {
	rctx, cancel := interrupt.After(ctx)
	defer cancel()
	p, ok, err := h.Queue.StartDeferredUpdate(rctx, repo)
	switch {
	case err != nil:
		log.Error("a deferred pull request update was not started", logkey.Err, err)
	case ok:
		log.Info("deferred pull request update started", "pr", p.PR, "base", p.Rebase)
	}
}

func (h *Handlers) release(ctx context.Context, issue tasks.Issue, taskID string) error {
	rctx, cancel := interrupt.After(ctx)
	defer cancel()
	return h.Queue.Release(rctx, issue, taskID)
}

// attemptOf is the one place that reads asynq's context helpers.
func attemptOf(ctx context.Context, t *asynq.Task) tasks.Attempt {
	retry, _ := asynq.GetRetryCount(ctx)
	maxRetry, _ := asynq.GetMaxRetry(ctx)
	return tasks.Attempt{TaskID: t.ResultWriter().TaskID(), Retry: retry, MaxRetry: maxRetry, EnqueuedAt: tasks.EnqueuedAt(t)}
}

// Config configures NewServer. Zero values take the defaults named.
type Config struct {
	// Concurrency is how many tasks run at once; default DefaultConcurrency.
	Concurrency int
	// ShutdownTimeout is the drain's grace period: how long Shutdown lets
	// running jobs finish. InterruptMargin before its end the jobs are
	// interrupted (interrupt.With: the model stops between steps, a
	// change is pushed as a draft marked interrupted and the task
	// completes; a run with no change hands itself back,
	// interrupt.ErrHandedBack); at its end what still runs is cancelled (the
	// pipeline then says on the issue that the job will run again, and
	// hands it back: ErrDrained); default DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// InterruptMargin is how long before the grace period ends a running
	// job's model loop is told to stop between steps (agent.Interrupted),
	// so the pipeline can commit what the model changed and push it as a
	// draft marked interrupted before its context is cancelled; default
	// DefaultInterruptMargin(ShutdownTimeout). At most ShutdownTimeout.
	InterruptMargin time.Duration
	// Logger receives asynq's own log lines; default slog.Default().
	Logger *slog.Logger
}

// Worker defaults.
const (
	// DefaultConcurrency suits the 2-core machine an agent job's sandbox
	// mostly waits on.
	DefaultConcurrency     = 2
	DefaultShutdownTimeout = 30 * time.Second
	// HandBackTimeout is what a cancelled job gets, after the grace
	// period, to write its status and hand itself back before asynq puts
	// it back on its own (with nothing said on the issue). A pod's
	// terminationGracePeriodSeconds must exceed ShutdownTimeout plus this.
	HandBackTimeout = 15 * time.Second
	// MaxInterruptMargin caps the derived interrupt margin: commit, scan,
	// push and the pull request take seconds, not minutes.
	MaxInterruptMargin = 2 * time.Minute
)

// DefaultInterruptMargin is a quarter of the grace period, at most
// MaxInterruptMargin: 7.5 s of the default 30 s, 2 minutes of 10 minutes.
func DefaultInterruptMargin(grace time.Duration) time.Duration {
	return min(grace/4, MaxInterruptMargin)
}

// ErrDrained is the cause of a job's context cancelled by a drain (Server
// Shutdown after its grace period). The job goes back to the queue
// without counting a failure, unless it was its last try (asynq archives
// those whatever the error; the sweeper then says so on the issue).
var ErrDrained = errors.New("the worker is shutting down")

// handedBack reports whether err ends a run that a drain interrupted
// before it had anything to push, handed back like a cancelled one.
func handedBack(err error) bool { return errors.Is(err, interrupt.ErrHandedBack) }

// Server is the asynq server with a drain: Shutdown stops taking jobs,
// lets running ones finish for the grace period, interrupts them its
// margin before the end so they can push their work, then cancels what
// is left so it hands itself back.
type Server struct {
	*asynq.Server
	grace, margin time.Duration
	interrupt     chan struct{} // closed InterruptMargin before the grace period ends
	drained       chan struct{} // closed when the grace period is over
	once, iOnce   sync.Once
}

// Start starts serving h, each task's context cancelled with ErrDrained
// when a drain's grace period is over. The handler's own context, not
// asynq's: asynq would fail a task whose context ended without waiting
// for the handler, which then could not say on the issue what happened.
func (s *Server) Start(h asynq.Handler) error { return s.Server.Start(s.drainable(h)) }

// Run is Start, then waits for a signal and shuts down (asynq's Run).
func (s *Server) Run(h asynq.Handler) error { return s.Server.Run(s.drainable(h)) }

func (s *Server) drainable(h asynq.Handler) asynq.Handler {
	return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
		ctx, cancel := context.WithCancelCause(interrupt.With(ctx, s.interrupt))
		defer cancel(nil)
		go func() {
			select {
			case <-s.drained:
				cancel(ErrDrained)
			case <-ctx.Done():
			}
		}()
		return h.ProcessTask(ctx, t)
	})
}

// Shutdown drains the server (see Server) and returns once every job has
// returned or HandBackTimeout past the grace period.
func (s *Server) Shutdown() {
	drain := func() { s.once.Do(func() { close(s.drained) }) }
	interrupt := func() { s.iOnce.Do(func() { close(s.interrupt) }) }
	t := time.AfterFunc(s.grace, drain)
	defer t.Stop()
	ti := time.AfterFunc(s.grace-s.margin, interrupt)
	defer ti.Stop()
	s.Server.Shutdown()
	interrupt()
	drain()
}

// NewServer returns an asynq server on rdb serving tasks.QueueReplies and
// tasks.QueueAgent weighted 3 to 1 (asynq's weights, not strict priority:
// jobs are never starved by replies). Start it with Start(h.Mux()) or
// Run(h.Mux()).
func NewServer(rdb redis.UniversalClient, cfg Config) *Server {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = DefaultShutdownTimeout
	}
	if cfg.InterruptMargin <= 0 {
		cfg.InterruptMargin = DefaultInterruptMargin(cfg.ShutdownTimeout)
	}
	cfg.InterruptMargin = min(cfg.InterruptMargin, cfg.ShutdownTimeout)
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{
		Concurrency:     cfg.Concurrency,
		Queues:          map[string]int{tasks.QueueReplies: 3, tasks.QueueAgent: 1},
		ShutdownTimeout: cfg.ShutdownTimeout + HandBackTimeout,
		Logger:          asynqLogger{cfg.Logger},
		IsFailure:       isFailure,
		RetryDelayFunc:  retryDelay,
		// A job put back for a slot (retryDelay) waits no longer than this
		// past its delay: a freed slot stays idle about this long.
		DelayedTaskCheckInterval: waitDelay,
		// An idle worker looks for a task this often (asynq's default is
		// a second, half of which a labelled issue waited on average): a
		// few cheap commands a second per worker, for Redis.
		TaskCheckInterval: taskCheckInterval,
	})
	return &Server{Server: srv, grace: cfg.ShutdownTimeout, margin: cfg.InterruptMargin, interrupt: make(chan struct{}), drained: make(chan struct{})}
}

// taskCheckInterval: see NewServer.
const taskCheckInterval = 200 * time.Millisecond

// asynqLogger adapts slog to asynq's Logger interface.
type asynqLogger struct{ l *slog.Logger }

func (a asynqLogger) Debug(args ...any) { a.l.Debug(fmt.Sprint(args...)) }
func (a asynqLogger) Info(args ...any)  { a.l.Info(fmt.Sprint(args...)) }
func (a asynqLogger) Warn(args ...any)  { a.l.Warn(fmt.Sprint(args...)) }
func (a asynqLogger) Error(args ...any) { a.l.Error(fmt.Sprint(args...)) }
func (a asynqLogger) Fatal(args ...any) { a.l.Error(fmt.Sprint(args...)) }
