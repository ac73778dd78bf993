package jobs

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/patchwright/patchwright/jobs/redistest"
)

const testRedisDB = 1 // each package its own DB: packages' tests run in parallel

func testRedis(t *testing.T) *redis.Client { return redistest.Client(t, testRedisDB) }

var issue = Issue{InstallationID: 1, Owner: "O", Repo: "R", Number: 5}

func solve(id string) SolveIssue { return SolveIssue{Issue: issue, DeliveryID: id, Requester: "u"} }

func TestBadPayloadsSkipRetry(t *testing.T) {
	for name, payload := range map[string]string{
		"not json":      `{`,
		"unknown field": `{"installation_id":1,"owner":"o","repo":"r","number":1,"delivery_id":"d","token":"x"}`,
		"no number":     `{"installation_id":1,"owner":"o","repo":"r","delivery_id":"d"}`,
		"no delivery":   `{"installation_id":1,"owner":"o","repo":"r","number":1}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := decode[SolveIssue](asynq.NewTask(TypeSolveIssue, []byte(payload)))
			if !errors.Is(err, asynq.SkipRetry) {
				t.Fatalf("err = %v, want SkipRetry", err)
			}
		})
	}
	if _, err := NewSolveIssueTask(SolveIssue{Issue: issue}); err == nil {
		t.Fatal("task without delivery ID accepted")
	}
	if _, err := NewReplyTask(Reply{Issue: issue, DeliveryID: "d", Body: " "}); err == nil {
		t.Fatal("reply without body accepted")
	}
}

func TestOneActiveJobPerIssue(t *testing.T) {
	ctx := context.Background()
	q := NewQueue(testRedis(t))
	mustOutcome(t, q.EnqueueSolve, solve("a"), Enqueued)
	mustOutcome(t, q.EnqueueSolve, solve("a"), Duplicate)
	res := mustOutcome(t, q.EnqueueSolve, solve("b"), Busy)
	if res.ActiveTaskID != "a" {
		t.Fatalf("active = %q, want a", res.ActiveTaskID)
	}
	// Releasing with the wrong task ID does nothing.
	if err := q.Release(ctx, issue, "b"); err != nil {
		t.Fatal(err)
	}
	mustOutcome(t, q.EnqueueSolve, solve("b"), Busy)
	// The case-insensitive issue key: o/r#5 is the same issue.
	lower := solve("c")
	lower.Owner, lower.Repo = "o", "r"
	mustOutcome(t, q.EnqueueSolve, lower, Busy)
	if err := q.Release(ctx, issue, "a"); err != nil {
		t.Fatal(err)
	}
	mustOutcome(t, q.EnqueueSolve, solve("b"), Enqueued)
}

func TestStaleLockIsCleared(t *testing.T) {
	ctx := context.Background()
	rdb := testRedis(t)
	q := NewQueue(rdb)
	// A lock whose task does not exist (its worker died and it was deleted).
	if err := rdb.Set(ctx, lockKey(issue), "ghost", LockTTL).Err(); err != nil {
		t.Fatal(err)
	}
	mustOutcome(t, q.EnqueueSolve, solve("a"), Enqueued)
	if id, _ := q.Active(ctx, issue); id != "a" {
		t.Fatalf("lock held by %q, want a", id)
	}
	// A redelivery of a finished delivery does not re-take the lock.
	if err := q.Release(ctx, issue, "a"); err != nil {
		t.Fatal(err)
	}
	insp := asynq.NewInspectorFromRedisClient(rdb)
	defer insp.Close()
	if err := insp.DeleteTask(QueueAgent, "a"); err != nil {
		t.Fatal(err)
	}
	mustOutcome(t, q.EnqueueSolve, solve("z"), Enqueued)
}

func TestCancelQueuedJob(t *testing.T) {
	ctx := context.Background()
	rdb := testRedis(t)
	q := NewQueue(rdb)
	if id, err := q.Cancel(ctx, issue, "u"); err != nil || id != "" {
		t.Fatalf("cancel with nothing active = %q, %v", id, err)
	}
	mustOutcome(t, q.EnqueueSolve, solve("a"), Enqueued)
	id, err := q.Cancel(ctx, issue, "boss")
	if err != nil || id != "a" {
		t.Fatalf("cancel = %q, %v; want a", id, err)
	}
	if by, ok, _ := q.Cancelled(ctx, "a"); !ok || by != "boss" {
		t.Fatalf("cancel record = %q %v", by, ok)
	}
	insp := asynq.NewInspectorFromRedisClient(rdb)
	defer insp.Close()
	if _, err := insp.GetTaskInfo(QueueAgent, "a"); !errors.Is(err, asynq.ErrTaskNotFound) {
		t.Fatalf("task a still queued: %v", err)
	}
	mustOutcome(t, q.EnqueueSolve, solve("b"), Enqueued)
}

func mustOutcome[P any](t *testing.T, enqueue func(context.Context, P) (EnqueueResult, error), p P, want Outcome) EnqueueResult {
	t.Helper()
	res, err := enqueue(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != want {
		t.Fatalf("outcome = %v, want %v", res.Outcome, want)
	}
	return res
}

// recorder is a Pipeline that records calls and, if block is set, waits
// for the job's context to end.
type recorder struct {
	calls chan Run
	block bool
	err   error
}

func (r *recorder) Solve(ctx context.Context, _ SolveIssue, run Run) error {
	r.calls <- run
	if r.block {
		<-ctx.Done()
		return ctx.Err()
	}
	return r.err
}

func (r *recorder) Retry(ctx context.Context, _ RetryPR, run Run) error {
	return r.Solve(ctx, SolveIssue{}, run)
}

type nopCommenter struct{}

func (nopCommenter) CreateComment(context.Context, Issue, string) error { return nil }

func testHandlers(t *testing.T, q *Queue, p Pipeline) *Handlers {
	return &Handlers{Queue: q, Pipeline: p, Commenter: nopCommenter{}, Logger: slog.New(slog.NewTextHandler(t.Output(), nil))}
}

// waitFor polls cond for events the test cannot observe directly (a
// worker finishing after the pipeline returned); it asserts no duration.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for range 1000 {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

func TestWorkerRunsPipelineAndReleasesLock(t *testing.T) {
	ctx := context.Background()
	rdb := testRedis(t)
	q := NewQueue(rdb)
	rec := &recorder{calls: make(chan Run, 1)}
	srv := NewServer(rdb, WorkerConfig{Concurrency: 1, Logger: slog.New(slog.NewTextHandler(t.Output(), nil))})
	if err := srv.Start(testHandlers(t, q, rec).Mux()); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	mustOutcome(t, q.EnqueueSolve, solve("d-1"), Enqueued)
	run := <-rec.calls
	if run != (Run{TaskID: "d-1", Retry: 0, MaxRetry: AgentMaxRetry}) {
		t.Fatalf("run = %+v", run)
	}
	waitFor(t, "lock release", func() bool { id, _ := q.Active(ctx, issue); return id == "" })
	// The finished job does not block a new trigger, and its delivery stays a duplicate.
	mustOutcome(t, q.EnqueueSolve, solve("d-1"), Duplicate)
	mustOutcome(t, q.EnqueueSolve, solve("d-2"), Enqueued)
	<-rec.calls
}

func TestCancelActiveJob(t *testing.T) {
	ctx := context.Background()
	rdb := testRedis(t)
	q := NewQueue(rdb)
	rec := &recorder{calls: make(chan Run, 1), block: true}
	srv := NewServer(rdb, WorkerConfig{Concurrency: 1, Logger: slog.New(slog.NewTextHandler(t.Output(), nil))})
	if err := srv.Start(testHandlers(t, q, rec).Mux()); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	mustOutcome(t, q.EnqueueSolve, solve("d-1"), Enqueued)
	<-rec.calls // running now
	if id, err := q.Cancel(ctx, issue, "boss"); err != nil || id != "d-1" {
		t.Fatalf("cancel = %q, %v", id, err)
	}
	waitFor(t, "lock release", func() bool { id, _ := q.Active(ctx, issue); return id == "" })
	mustOutcome(t, q.EnqueueSolve, solve("d-2"), Enqueued)
}

func TestAgentJobChecksCancelFirst(t *testing.T) {
	ctx := context.Background()
	rdb := testRedis(t)
	q := NewQueue(rdb)
	mustOutcome(t, q.EnqueueSolve, solve("d-1"), Enqueued)
	if err := rdb.Set(ctx, cancelKey("d-1"), "boss", time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	h := testHandlers(t, q, nil)
	ran := false
	err := h.agentJob(ctx, issue, Run{TaskID: "d-1", Retry: 1, MaxRetry: 3}, func(context.Context) error { ran = true; return nil })
	if ran || !errors.Is(err, asynq.SkipRetry) {
		t.Fatalf("ran %v, err %v; want not run and SkipRetry", ran, err)
	}
	if id, _ := q.Active(ctx, issue); id != "" {
		t.Fatalf("lock still held by %q", id)
	}
}

func TestAgentJobKeepsLockWhileRetrying(t *testing.T) {
	ctx := context.Background()
	q := NewQueue(testRedis(t))
	mustOutcome(t, q.EnqueueSolve, solve("d-1"), Enqueued)
	h := testHandlers(t, q, nil)
	boom := errors.New("github 502")
	if err := h.agentJob(ctx, issue, Run{TaskID: "d-1", Retry: 0, MaxRetry: 3}, func(context.Context) error { return boom }); !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if id, _ := q.Active(ctx, issue); id != "d-1" {
		t.Fatalf("lock = %q after a retryable failure, want d-1", id)
	}
	if err := h.agentJob(ctx, issue, Run{TaskID: "d-1", Retry: 3, MaxRetry: 3}, func(context.Context) error { return boom }); !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if id, _ := q.Active(ctx, issue); id != "" {
		t.Fatalf("lock = %q after the last retry, want released", id)
	}
}

func TestNotImplementedPipelineFailsPermanently(t *testing.T) {
	err := NotImplementedPipeline{}.Solve(context.Background(), SolveIssue{}, Run{})
	if !errors.Is(err, ErrPipelineNotImplemented) || !errors.Is(err, asynq.SkipRetry) {
		t.Fatalf("err = %v", err)
	}
}
