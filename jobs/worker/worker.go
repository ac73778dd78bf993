package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// Run describes one attempt at a task. Handlers pass it to the Pipeline
// explicitly so the pipeline never reads asynq's context helpers and tests
// can drive it without a queue (STYLE item 4).
type Run struct {
	// TaskID is the asynq task ID (the delivery ID for agent jobs).
	TaskID string
	// Retry is 0 on the first attempt, 1 on the first retry, and so on.
	Retry int
	// MaxRetry is the task's retry limit; Retry == MaxRetry is the last try.
	MaxRetry int
}

// Pipeline does the work of an agent job (DESIGN §1 steps 1-9). It must be
// idempotent: asynq runs a job again after a crash, a timeout or a failure.
// An error wrapping asynq.SkipRetry is permanent; any other is retried.
type Pipeline interface {
	Solve(ctx context.Context, job SolveIssue, run Run) error
	Retry(ctx context.Context, job RetryPR, run Run) error
}

// Commenter posts a comment on an issue or pull request.
type Commenter interface {
	CreateComment(ctx context.Context, issue Issue, body string) error
}

// ErrPipelineNotImplemented is what NotImplementedPipeline fails every job
// with.
var ErrPipelineNotImplemented = errors.New("the agent pipeline is not implemented yet")

// NotImplementedPipeline is the Pipeline the worker runs until the real one
// exists. It does no work: each job fails permanently with
// ErrPipelineNotImplemented (so asynq archives it with that message and the
// issue's lock is released), rather than pretending to have done anything.
type NotImplementedPipeline struct{}

// Solve fails with ErrPipelineNotImplemented wrapped in asynq.SkipRetry.
func (NotImplementedPipeline) Solve(context.Context, SolveIssue, Run) error {
	return fmt.Errorf("%w: %w", ErrPipelineNotImplemented, asynq.SkipRetry)
}

// Retry fails with ErrPipelineNotImplemented wrapped in asynq.SkipRetry.
func (NotImplementedPipeline) Retry(context.Context, RetryPR, Run) error {
	return fmt.Errorf("%w: %w", ErrPipelineNotImplemented, asynq.SkipRetry)
}

// Handlers turns asynq tasks into Pipeline and Commenter calls and releases
// an issue's lock when its job ends. All fields are required.
type Handlers struct {
	Queue     *Queue
	Pipeline  Pipeline
	Commenter Commenter
	Logger    *slog.Logger
}

// Mux routes every task type of the catalogue to its handler.
func (h *Handlers) Mux() *asynq.ServeMux {
	mux := asynq.NewServeMux()
	mux.HandleFunc(TypeSolveIssue, h.solve)
	mux.HandleFunc(TypeRetryPR, h.retry)
	mux.HandleFunc(TypeReply, h.reply)
	return mux
}

func (h *Handlers) solve(ctx context.Context, t *asynq.Task) error {
	p, err := decode[SolveIssue](t)
	if err != nil {
		return err
	}
	run := runOf(ctx, t)
	return h.agentJob(ctx, p.Issue, run, func(ctx context.Context) error {
		return h.Pipeline.Solve(ctx, p, run)
	})
}

func (h *Handlers) retry(ctx context.Context, t *asynq.Task) error {
	p, err := decode[RetryPR](t)
	if err != nil {
		return err
	}
	run := runOf(ctx, t)
	return h.agentJob(ctx, p.Issue, run, func(ctx context.Context) error {
		return h.Pipeline.Retry(ctx, p, run)
	})
}

func (h *Handlers) reply(ctx context.Context, t *asynq.Task) error {
	p, err := decode[Reply](t)
	if err != nil {
		return err
	}
	if err := h.Commenter.CreateComment(ctx, p.Issue, p.Body); err != nil {
		return fmt.Errorf("reply on %s: %w", p.Issue, err)
	}
	return nil
}

// agentJob runs one attempt of an agent job: it checks for a cancel before
// and after the work, and releases the issue's lock once the job will not
// run again (success, permanent failure, last retry, or cancelled).
func (h *Handlers) agentJob(ctx context.Context, issue Issue, run Run, work func(context.Context) error) error {
	log := h.Logger.With(LogTask, run.TaskID, LogIssue, issue.String(), LogRetry, run.Retry)
	if err := h.checkCancelled(ctx, issue, run); err != nil {
		return err
	}
	err := work(ctx)
	if cerr := h.checkCancelled(ctx, issue, run); cerr != nil {
		return cerr
	}
	final := err == nil || errors.Is(err, asynq.SkipRetry) || run.Retry >= run.MaxRetry
	if final {
		if rerr := h.release(ctx, issue, run.TaskID); rerr != nil {
			log.Error("job ended but its lock stays until it expires or the next trigger clears it", LogError, rerr)
		}
	}
	if err != nil {
		log.Error("job failed", LogError, err, "final", final)
		return err
	}
	log.Info("job done")
	return nil
}

// checkCancelled returns an error wrapping asynq.SkipRetry if the task was
// cancelled (and releases the lock), nil if not. A Redis error is returned
// as is, so the task is retried rather than run unchecked.
func (h *Handlers) checkCancelled(ctx context.Context, issue Issue, run Run) error {
	rctx, cancel := afterCtx(ctx)
	defer cancel()
	by, cancelled, err := h.Queue.Cancelled(rctx, run.TaskID)
	if err != nil {
		return err
	}
	if !cancelled {
		return nil
	}
	if err := h.Queue.Release(rctx, issue, run.TaskID); err != nil {
		h.Logger.Error("release lock after cancel", LogTask, run.TaskID, LogError, err)
	}
	h.Logger.Info("job cancelled", LogTask, run.TaskID, LogIssue, issue.String(), "by", by)
	return fmt.Errorf("cancelled by %s: %w", by, asynq.SkipRetry)
}

func (h *Handlers) release(ctx context.Context, issue Issue, taskID string) error {
	rctx, cancel := afterCtx(ctx)
	defer cancel()
	return h.Queue.Release(rctx, issue, taskID)
}

// afterCtx is for bookkeeping after the job's own context may have ended
// (timeout or cancel): it keeps the values but not the cancellation.
func afterCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
}

// runOf is the one place that reads asynq's context helpers.
func runOf(ctx context.Context, t *asynq.Task) Run {
	retry, _ := asynq.GetRetryCount(ctx)
	maxRetry, _ := asynq.GetMaxRetry(ctx)
	return Run{TaskID: t.ResultWriter().TaskID(), Retry: retry, MaxRetry: maxRetry}
}

// WorkerConfig configures NewServer. Zero values take the defaults named.
type WorkerConfig struct {
	// Concurrency is how many tasks run at once; default DefaultConcurrency.
	Concurrency int
	// ShutdownTimeout is how long shutdown waits for running tasks before
	// handing them back to the queue; default DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// Logger receives asynq's own log lines; default slog.Default().
	Logger *slog.Logger
}

// Worker defaults.
const (
	// DefaultConcurrency suits the 2-core machine an agent job's sandbox
	// mostly waits on.
	DefaultConcurrency     = 2
	DefaultShutdownTimeout = 30 * time.Second
)

// NewServer returns an asynq server on rdb serving QueueReplies before
// QueueAgent. Start it with Start(h.Mux()) or Run(h.Mux()).
func NewServer(rdb redis.UniversalClient, cfg WorkerConfig) *asynq.Server {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = DefaultShutdownTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return asynq.NewServerFromRedisClient(rdb, asynq.Config{
		Concurrency:     cfg.Concurrency,
		Queues:          map[string]int{QueueReplies: 3, QueueAgent: 1},
		ShutdownTimeout: cfg.ShutdownTimeout,
		Logger:          asynqLogger{cfg.Logger},
	})
}

// asynqLogger adapts slog to asynq's Logger interface.
type asynqLogger struct{ l *slog.Logger }

func (a asynqLogger) Debug(args ...any) { a.l.Debug(fmt.Sprint(args...)) }
func (a asynqLogger) Info(args ...any)  { a.l.Info(fmt.Sprint(args...)) }
func (a asynqLogger) Warn(args ...any)  { a.l.Warn(fmt.Sprint(args...)) }
func (a asynqLogger) Error(args ...any) { a.l.Error(fmt.Sprint(args...)) }
func (a asynqLogger) Fatal(args ...any) { a.l.Error(fmt.Sprint(args...)) }
