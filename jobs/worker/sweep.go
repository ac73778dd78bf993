package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"

	"github.com/patchwright/patchwright/internal/logkey"
	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// A worker that dies during a job's last allowed attempt leaves the task to
// asynq's recoverer, which archives it with asynq.ErrLeaseExpired and runs
// no handler of ours: the issue's status comment would go on saying the
// job runs, and its lock would wait for the next trigger. The Sweeper finds
// those tasks and finishes what the handler would have done.

// AbandonReporter says on an issue that its job was given up because the
// worker running its last attempt died. *githubjob.Pipeline is one.
type AbandonReporter interface {
	Abandoned(ctx context.Context, issue tasks.Issue, taskID string) error
}

// Sweeper reports agent tasks that asynq archived after their worker died.
// All fields are required but Logger (default slog.Default()).
type Sweeper struct {
	Inspector *asynq.Inspector
	Queue     *jobs.Queue
	Reporter  AbandonReporter
	Logger    *slog.Logger
}

// DefaultSweepInterval is how often Run sweeps.
const DefaultSweepInterval = 5 * time.Minute

// Sweep reports each archived agent task whose last error is a lease
// expiry and that no earlier sweep reported, releases its issue's lock,
// and returns how many it reported.
func (s *Sweeper) Sweep(ctx context.Context) (int, error) {
	const pageSize = 100
	n := 0
	var errs []error
	for page := 1; ; page++ {
		tasks, err := s.Inspector.ListArchivedTasks(tasks.QueueAgent, asynq.Page(page), asynq.PageSize(pageSize))
		if errors.Is(err, asynq.ErrQueueNotFound) {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("list archived agent tasks: %w", err)
		}
		for _, t := range tasks {
			if t.LastErr != asynq.ErrLeaseExpired.Error() {
				continue
			}
			reported, err := s.sweep(ctx, t)
			if err != nil {
				errs = append(errs, err)
			}
			if reported {
				n++
			}
		}
		if len(tasks) < pageSize {
			return n, errors.Join(errs...)
		}
	}
}

// sweep reports one abandoned task unless it was reported before. The
// record is written last: a sweep that fails half-way is done again, which
// only edits the status comment once more.
func (s *Sweeper) sweep(ctx context.Context, t *asynq.TaskInfo) (bool, error) {
	if swept, err := s.Queue.Swept(ctx, t.ID); err != nil || swept {
		return false, err
	}
	issue, err := taskIssue(t)
	if err != nil {
		return false, err
	}
	if err := s.Reporter.Abandoned(ctx, issue, t.ID); err != nil {
		return false, fmt.Errorf("report abandoned task %s on %s: %w", t.ID, issue, err)
	}
	if err := s.Queue.Release(ctx, issue, t.ID); err != nil {
		return false, err
	}
	return true, s.Queue.MarkSwept(ctx, t.ID)
}

// taskIssue is the issue an agent task works on.
func taskIssue(t *asynq.TaskInfo) (tasks.Issue, error) {
	task := asynq.NewTask(t.Type, t.Payload)
	switch t.Type {
	case tasks.TypeSolveIssue:
		p, err := tasks.Decode[tasks.SolveIssue](task)
		return p.Issue, err
	case tasks.TypeRetryPR:
		p, err := tasks.Decode[tasks.RetryPR](task)
		return p.Issue, err
	}
	return tasks.Issue{}, fmt.Errorf("task %s: type %q is not an agent job", t.ID, t.Type)
}

// Run sweeps now and then every interval (DefaultSweepInterval when zero)
// until ctx ends, logging what it reported and what failed.
func (s *Sweeper) Run(ctx context.Context, every time.Duration) {
	if every <= 0 {
		every = DefaultSweepInterval
	}
	log := s.Logger
	if log == nil {
		log = slog.Default()
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		n, err := s.Sweep(ctx)
		if n > 0 {
			log.InfoContext(ctx, "reported jobs abandoned by a dead worker", "count", n)
		}
		if err != nil && ctx.Err() == nil {
			log.ErrorContext(ctx, "sweep abandoned jobs", logkey.Err, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
