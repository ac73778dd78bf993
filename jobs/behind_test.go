package jobs

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/hibiken/asynq"
	"github.com/patchwright/patchwright/jobs/tasks"
)

func retry(id string) tasks.RetryPR {
	return tasks.RetryPR{Issue: issue, PR: 9, DeliveryID: id, Requester: "u"}
}

// A retry that arrives while a job holds the issue waits behind it: it is
// not in asynq until the job releases the lock, then it holds the lock and
// is pending. One retry waits at a time; its redelivery is a Duplicate.
func TestRetryQueuedBehindActiveJob(t *testing.T) {
	ctx := context.Background()
	rdb := testRedis(t)
	q := NewQueue(rdb)
	insp := asynq.NewInspectorFromRedisClient(rdb)
	mustOutcome(t, q.EnqueueSolve, solve("a"), Enqueued)
	res := mustOutcome(t, q.EnqueueRetry, retry("r1"), Queued)
	if res.ActiveTaskID != "a" {
		t.Errorf("queued behind %q, want a", res.ActiveTaskID)
	}
	mustOutcome(t, q.EnqueueRetry, retry("r1"), Duplicate)
	if res := mustOutcome(t, q.EnqueueRetry, retry("r2"), Busy); res.Waiting != "r1" || res.ActiveTaskID != "a" {
		t.Errorf("second retry: %+v, want busy with r1 waiting behind a", res)
	}
	// A label is never queued.
	mustOutcome(t, q.EnqueueSolve, solve("b"), Busy)
	if _, err := insp.GetTaskInfo(tasks.QueueAgent, "r1"); !errors.Is(err, asynq.ErrTaskNotFound) {
		t.Fatalf("the waiting retry is in asynq before the job ended: %v", err)
	}
	if err := q.Release(ctx, issue, "r1"); err != nil { // not the holder: nothing
		t.Fatal(err)
	}
	if id, _ := q.Active(ctx, issue); id != "a" {
		t.Fatalf("lock %q after a release by a non-holder, want a", id)
	}
	if err := q.Release(ctx, issue, "a"); err != nil {
		t.Fatal(err)
	}
	if id, _ := q.Active(ctx, issue); id != "r1" {
		t.Fatalf("lock %q after the job ended, want the waiting retry r1", id)
	}
	info, err := insp.GetTaskInfo(tasks.QueueAgent, "r1")
	if err != nil || info.State != asynq.TaskStatePending || info.Type != tasks.TypeRetryPR {
		t.Fatalf("waiting retry after the release: %+v, %v; want a pending %s", info, err, tasks.TypeRetryPR)
	}
	if w, _ := q.Waiting(ctx, issue); w != "" {
		t.Errorf("waiting slot %q after the hand-over, want empty", w)
	}
	mustOutcome(t, q.EnqueueRetry, retry("r1"), Duplicate)
	// With nothing waiting, the next release frees the issue.
	if err := q.Release(ctx, issue, "r1"); err != nil {
		t.Fatal(err)
	}
	mustOutcome(t, q.EnqueueRetry, retry("r3"), Enqueued)
}

// /agent stop cancels the active job and drops the retry waiting behind
// it: the cancelled job's release starts nothing.
func TestCancelDropsWaitingRetry(t *testing.T) {
	ctx := context.Background()
	q := NewQueue(testRedis(t))
	mustOutcome(t, q.EnqueueSolve, solve("a"), Enqueued)
	mustOutcome(t, q.EnqueueRetry, retry("r1"), Queued)
	if id, err := q.Cancel(ctx, issue, "boss"); err != nil || id != "a" {
		t.Fatalf("cancel = %q, %v", id, err)
	}
	if id, _ := q.Active(ctx, issue); id != "" {
		t.Errorf("lock %q after cancel, want none", id)
	}
	if w, _ := q.Waiting(ctx, issue); w != "" {
		t.Errorf("retry %q still waits after cancel", w)
	}
}

// A stale holder (its task gone) is cleared, and the retry it had waiting
// takes over; a new retry then waits behind that one.
func TestStaleHolderHandsOverWaitingRetry(t *testing.T) {
	rdb := testRedis(t)
	q := NewQueue(rdb)
	mustOutcome(t, q.EnqueueSolve, solve("a"), Enqueued)
	mustOutcome(t, q.EnqueueRetry, retry("r1"), Queued)
	insp := asynq.NewInspectorFromRedisClient(rdb)
	if err := insp.DeleteTask(tasks.QueueAgent, "a"); err != nil { // its worker died, the task is gone
		t.Fatal(err)
	}
	if res := mustOutcome(t, q.EnqueueRetry, retry("r2"), Queued); res.ActiveTaskID != "r1" {
		t.Errorf("r2 queued behind %q, want r1", res.ActiveTaskID)
	}
}

// Through a real asynq server: a retry that arrives while the first job
// is finishing runs after it, never beside it.
func TestRetryDuringFinishingJobRunsAfterIt(t *testing.T) {
	rdb := testRedis(t)
	q := NewQueue(rdb)
	var (
		mu      sync.Mutex
		order   []string
		running int
		overlap bool
	)
	finishing := make(chan struct{})
	proceed := make(chan struct{})
	done := make(chan struct{})
	enter := func(name string) {
		mu.Lock()
		defer mu.Unlock()
		order = append(order, name+" start")
		running++
		overlap = overlap || running > 1
	}
	leave := func(name string) {
		mu.Lock()
		defer mu.Unlock()
		order = append(order, name+" end")
		running--
	}
	mux := asynq.NewServeMux()
	mux.HandleFunc(tasks.TypeSolveIssue, func(ctx context.Context, t *asynq.Task) error {
		enter("solve")
		close(finishing) // the pull request is open; the job is still finishing
		<-proceed
		leave("solve")
		return q.Release(ctx, issue, t.ResultWriter().TaskID())
	})
	mux.HandleFunc(tasks.TypeRetryPR, func(ctx context.Context, t *asynq.Task) error {
		enter("retry")
		leave("retry")
		close(done)
		return q.Release(ctx, issue, t.ResultWriter().TaskID())
	})
	// Two workers: nothing but the lock keeps the retry from running beside
	// the solve.
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{Concurrency: 2, Queues: map[string]int{tasks.QueueAgent: 1}, LogLevel: asynq.FatalLevel})
	if err := srv.Start(mux); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	mustOutcome(t, q.EnqueueSolve, solve("a"), Enqueued)
	<-finishing
	mustOutcome(t, q.EnqueueRetry, retry("r1"), Queued)
	close(proceed)
	<-done
	mu.Lock()
	defer mu.Unlock()
	want := []string{"solve start", "solve end", "retry start", "retry end"}
	if overlap || len(order) != len(want) {
		t.Fatalf("order %v (overlap %v), want %v", order, overlap, want)
	}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("order %v, want %v", order, want)
		}
	}
}
