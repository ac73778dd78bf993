package worker

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/interrupt"
	"github.com/patchwright/patchwright/jobs/redistest"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// drainPipeline: issue 1's job finishes when finish is closed, issue 2's
// only when its context ends, and says why it ended.
type drainPipeline struct {
	started chan tasks.Attempt
	finish  chan struct{}
	mu      sync.Mutex
	causes  []error
	// early: issue 2's interrupt channel was closed while its context
	// was still live (the interrupt margin comes before the cancel).
	early bool
}

func (d *drainPipeline) Solve(ctx context.Context, p tasks.SolveIssue, at tasks.Attempt) error {
	d.started <- at
	if p.Number == 1 {
		<-d.finish
		return nil
	}
	if ch := interrupt.Chan(ctx); ch != nil {
		<-ch
		d.mu.Lock()
		d.early = ctx.Err() == nil
		d.mu.Unlock()
	}
	<-ctx.Done()
	d.mu.Lock()
	d.causes = append(d.causes, context.Cause(ctx))
	d.mu.Unlock()
	return ctx.Err()
}

func (d *drainPipeline) Retry(context.Context, tasks.RetryPR, tasks.Attempt) error { return nil }

// TestDrain stops a worker running two jobs: the one that finishes within
// the grace period completes; the other is first interrupted (its
// interrupt channel closed, the context still live: a real pipeline would
// push its work as a draft now), then, as it does not return, cancelled with ErrDrained once
// the grace period is over and goes back to the queue with no failure
// counted, where the next worker runs it as the same try.
func TestDrain(t *testing.T) {
	t.Parallel()
	p := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: p.Addr()})
	defer rdb.Close()
	q := jobs.NewQueue(rdb)
	insp := asynq.NewInspectorFromRedisClient(rdb)
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	d := &drainPipeline{started: make(chan tasks.Attempt, 4), finish: make(chan struct{})}
	h := &Handlers{Queue: q, Pipeline: d, Commenter: nopCommenter{}, Logger: log}
	srv := NewServer(rdb, Config{Concurrency: 2, ShutdownTimeout: 200 * time.Millisecond, Logger: log})
	if err := srv.Start(h.Mux()); err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 2; n++ {
		mustOutcome(t, q.EnqueueSolve, tasks.SolveIssue{Issue: tasks.Issue{InstallationID: 1, Owner: "o", Repo: "r", Number: n}, DeliveryID: "d-" + string(rune('0'+n)), Requester: "u"}, jobs.Enqueued)
	}
	<-d.started
	<-d.started
	done := make(chan struct{})
	go func() { srv.Shutdown(); close(done) }()
	close(d.finish) // issue 1's job ends inside the grace period
	<-done

	if info, err := insp.GetTaskInfo(tasks.QueueAgent, "d-1"); err != nil || info.State != asynq.TaskStateCompleted {
		t.Errorf("the job that finished in time: %+v %v, want completed", info, err)
	}
	d.mu.Lock()
	causes, early := d.causes, d.early
	d.mu.Unlock()
	if !early {
		t.Error("the running job was not interrupted before its context was cancelled")
	}
	if len(causes) != 1 || causes[0] != ErrDrained {
		t.Fatalf("the running job's context ended by %v, want ErrDrained", causes)
	}
	info, err := insp.GetTaskInfo(tasks.QueueAgent, "d-2")
	if err != nil {
		t.Fatal(err)
	}
	if info.Retried != 0 || !strings.Contains(info.LastErr, ErrDrained.Error()) ||
		(info.State != asynq.TaskStateRetry && info.State != asynq.TaskStatePending) {
		t.Fatalf("the drained job: state %v, retried %d, last error %q; want it back in the queue, no failure counted", info.State, info.Retried, info.LastErr)
	}
	if id, _ := q.Active(t.Context(), tasks.Issue{InstallationID: 1, Owner: "o", Repo: "r", Number: 2}); id != "d-2" {
		t.Errorf("issue 2's lock is held by %q, want d-2 still (the job is not over)", id)
	}

	next := NewServer(rdb, Config{Concurrency: 1, ShutdownTimeout: 50 * time.Millisecond, Logger: log})
	if err := next.Start(h.Mux()); err != nil {
		t.Fatal(err)
	}
	defer next.Shutdown()
	if at := <-d.started; at.TaskID != "d-2" || at.Retry != 0 || at.Rerun != tasks.RerunDrained {
		t.Errorf("the next worker ran %+v, want d-2 as try 0, knowing it was drained", at)
	}
}
