package worker

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/redistest"
	"github.com/patchwright/patchwright/jobs/tasks"
)

const testRedisDB = 2 // each package its own DB: packages' tests run in parallel

func testRedis(t *testing.T) *redis.Client { return redistest.Client(t, testRedisDB) }

var issue = tasks.Issue{InstallationID: 1, Owner: "O", Repo: "R", Number: 5}

func solve(id string) tasks.SolveIssue {
	return tasks.SolveIssue{Issue: issue, DeliveryID: id, Requester: "u"}
}

func mustOutcome[P any](t *testing.T, enqueue func(context.Context, P) (jobs.EnqueueResult, error), p P, want jobs.EnqueueOutcome) jobs.EnqueueResult {
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
	calls chan tasks.Attempt
	block bool
	err   error
}

func (r *recorder) Solve(ctx context.Context, _ tasks.SolveIssue, run tasks.Attempt) error {
	r.calls <- run
	if r.block {
		<-ctx.Done()
		return ctx.Err()
	}
	return r.err
}

func (r *recorder) Retry(ctx context.Context, _ tasks.RetryPR, run tasks.Attempt) error {
	return r.Solve(ctx, tasks.SolveIssue{}, run)
}

type nopCommenter struct{}

func (nopCommenter) PostComment(context.Context, tasks.Issue, string) (int64, error) { return 1, nil }
func (nopCommenter) AddReaction(context.Context, tasks.Issue, string) error          { return nil }
func (nopCommenter) AddCommentReaction(context.Context, tasks.Issue, int64, string) error {
	return nil
}

func (nopCommenter) Comments(context.Context, tasks.Issue) ([]githubapi.Comment, error) {
	return nil, nil
}

func testHandlers(t *testing.T, q *jobs.Queue, p Pipeline) *Handlers {
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
	q := jobs.NewQueue(rdb)
	rec := &recorder{calls: make(chan tasks.Attempt, 1)}
	srv := NewServer(rdb, Config{Concurrency: 1, Logger: slog.New(slog.NewTextHandler(t.Output(), nil))})
	if err := srv.Start(testHandlers(t, q, rec).Mux()); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	before := time.Now()
	mustOutcome(t, q.EnqueueSolve, solve("d-1"), jobs.Enqueued)
	run := <-rec.calls
	// The enqueue time travels in the task's header to the attempt.
	if run.EnqueuedAt.Before(before) || run.EnqueuedAt.After(time.Now()) {
		t.Errorf("enqueued at %v, want the time of the enqueue", run.EnqueuedAt)
	}
	run.EnqueuedAt = time.Time{}
	if run != (tasks.Attempt{TaskID: "d-1", Retry: 0, MaxRetry: tasks.AgentMaxRetry}) {
		t.Fatalf("run = %+v", run)
	}
	waitFor(t, "lock release", func() bool { id, _ := q.Active(ctx, issue); return id == "" })
	// The finished job does not block a new trigger, and its delivery stays a duplicate.
	mustOutcome(t, q.EnqueueSolve, solve("d-1"), jobs.Duplicate)
	mustOutcome(t, q.EnqueueSolve, solve("d-2"), jobs.Enqueued)
	<-rec.calls
}

func TestCancelActiveJob(t *testing.T) {
	ctx := context.Background()
	rdb := testRedis(t)
	q := jobs.NewQueue(rdb)
	rec := &recorder{calls: make(chan tasks.Attempt, 1), block: true}
	srv := NewServer(rdb, Config{Concurrency: 1, Logger: slog.New(slog.NewTextHandler(t.Output(), nil))})
	if err := srv.Start(testHandlers(t, q, rec).Mux()); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	mustOutcome(t, q.EnqueueSolve, solve("d-1"), jobs.Enqueued)
	<-rec.calls // running now
	if id, err := q.Cancel(ctx, issue, "boss"); err != nil || id != "d-1" {
		t.Fatalf("cancel = %q, %v", id, err)
	}
	waitFor(t, "lock release", func() bool { id, _ := q.Active(ctx, issue); return id == "" })
	mustOutcome(t, q.EnqueueSolve, solve("d-2"), jobs.Enqueued)
}

func TestAgentJobChecksCancelFirst(t *testing.T) {
	ctx := context.Background()
	rdb := testRedis(t)
	q := jobs.NewQueue(rdb)
	mustOutcome(t, q.EnqueueSolve, solve("d-1"), jobs.Enqueued)
	if err := rdb.Set(ctx, jobs.KeyPrefix+"cancel:d-1", "boss", time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	h := testHandlers(t, q, nil)
	ran := false
	err := h.agentJob(ctx, issue, tasks.Attempt{TaskID: "d-1", Retry: 1, MaxRetry: 3}, func(context.Context, tasks.Attempt) error { ran = true; return nil })
	if ran || !errors.Is(err, asynq.SkipRetry) {
		t.Fatalf("ran %v, err %v; want not run and SkipRetry", ran, err)
	}
	if id, _ := q.Active(ctx, issue); id != "" {
		t.Fatalf("lock still held by %q", id)
	}
}

func TestAgentJobKeepsLockWhileRetrying(t *testing.T) {
	ctx := context.Background()
	q := jobs.NewQueue(testRedis(t))
	mustOutcome(t, q.EnqueueSolve, solve("d-1"), jobs.Enqueued)
	h := testHandlers(t, q, nil)
	boom := errors.New("github 502")
	var reruns []tasks.Rerun
	failing := func(_ context.Context, at tasks.Attempt) error { reruns = append(reruns, at.Rerun); return boom }
	if err := h.agentJob(ctx, issue, tasks.Attempt{TaskID: "d-1", Retry: 0, MaxRetry: 3}, failing); !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if id, _ := q.Active(ctx, issue); id != "d-1" {
		t.Fatalf("lock = %q after a retryable failure, want d-1", id)
	}
	if err := h.agentJob(ctx, issue, tasks.Attempt{TaskID: "d-1", Retry: 3, MaxRetry: 3}, failing); !errors.Is(err, boom) {
		t.Fatal(err)
	}
	// The retry knows its previous run failed; the first run knows nothing.
	if want := []tasks.Rerun{tasks.RerunNone, tasks.RerunFailed}; !slices.Equal(reruns, want) {
		t.Errorf("runs saw reruns %q, want %q", reruns, want)
	}
	if id, _ := q.Active(ctx, issue); id != "" {
		t.Fatalf("lock = %q after the last retry, want released", id)
	}
}

// A run that started and never ended (its worker died) is said to the
// next run of the task as a crash; a finished task is forgotten.
func TestAgentJobTellsARunAfterACrash(t *testing.T) {
	ctx := context.Background()
	q := jobs.NewQueue(testRedis(t))
	mustOutcome(t, q.EnqueueSolve, solve("d-1"), jobs.Enqueued)
	if _, err := q.StartRun(ctx, "d-1"); err != nil { // the run that died
		t.Fatal(err)
	}
	h := testHandlers(t, q, nil)
	var got tasks.Rerun
	if err := h.agentJob(ctx, issue, tasks.Attempt{TaskID: "d-1", Retry: 1, MaxRetry: 3}, func(_ context.Context, at tasks.Attempt) error { got = at.Rerun; return nil }); err != nil {
		t.Fatal(err)
	}
	if got != tasks.RerunCrashed {
		t.Errorf("rerun = %q, want %q", got, tasks.RerunCrashed)
	}
	if again, err := q.StartRun(ctx, "d-1"); err != nil || again != tasks.RerunNone {
		t.Errorf("after a finished run StartRun = %q, %v; want a first run", again, err)
	}
}

func TestNoModelPipelineFailsPermanently(t *testing.T) {
	err := NoModelPipeline{}.Solve(context.Background(), tasks.SolveIssue{}, tasks.Attempt{})
	if !errors.Is(err, ErrNoModel) || !errors.Is(err, asynq.SkipRetry) {
		t.Fatalf("err = %v", err)
	}
}

// When an agent job of a repository ends, one update a push deferred
// (past jobs.MaxUpdatesPerPush) starts; its end starts the next.
func TestJobEndStartsADeferredUpdate(t *testing.T) {
	rdb := testRedis(t)
	q := jobs.NewQueue(rdb)
	rec := &recorder{calls: make(chan tasks.Attempt, 3)}
	srv := NewServer(rdb, Config{Concurrency: 1, Logger: slog.New(slog.NewTextHandler(t.Output(), nil))})
	base := "cccccccccccccccccccccccccccccccccccccccc"
	for _, n := range []int{7, 8} {
		other := issue
		other.Number = n
		p := tasks.RetryPR{Issue: other, PR: 100 + n, DeliveryID: tasks.RebaseID(other, 100+n, base), IssueHash: "pin", Rebase: base}
		if err := q.DeferUpdate(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	if err := srv.Start(testHandlers(t, q, rec).Mux()); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	mustOutcome(t, q.EnqueueSolve, solve("d-1"), jobs.Enqueued)
	waitFor(t, "the job and two deferred updates", func() bool { return len(rec.calls) == 3 })
	var ran []string
	for range 3 {
		ran = append(ran, (<-rec.calls).TaskID)
	}
	other := issue
	want := []string{"d-1"}
	for _, n := range []int{7, 8} {
		other.Number = n
		want = append(want, tasks.RebaseID(other, 100+n, base))
	}
	if !slices.Equal(ran, want) {
		t.Errorf("ran %v, want the job then both deferred updates in turn %v", ran, want)
	}
}
