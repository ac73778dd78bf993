package worker

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/interrupt"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// postings is a Commenter that keeps what was posted.
type postings struct {
	nopCommenter
	mu     sync.Mutex
	bodies []string
}

func (p *postings) PostComment(_ context.Context, _ tasks.Issue, body string) (int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bodies = append(p.bodies, body)
	return int64(len(p.bodies)), nil
}

func (p *postings) all() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.bodies...)
}

// A job whose repository is paused does not run: it is put back, with no
// failure counted, again and again, and the issue is told once; on
// resume it runs.
func TestPauseHoldsJobAndAnswersOnce(t *testing.T) {
	ctx := context.Background()
	rdb := testRedis(t)
	q := jobs.NewQueue(rdb)
	insp := asynq.NewInspectorFromRedisClient(rdb)
	scope, err := jobs.ParseScope(0, "o/r")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := q.Pause(ctx, scope, "ops"); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{calls: make(chan tasks.Attempt, 1)}
	posts := &postings{}
	h := testHandlers(t, q, rec)
	h.Commenter = posts
	srv := NewServer(rdb, Config{Concurrency: 2, Logger: slog.New(slog.NewTextHandler(t.Output(), nil))})
	if err := srv.Start(h.Mux()); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	mustOutcome(t, q.EnqueueSolve, solve("d-1"), jobs.Enqueued)
	// Held three times: three distinct moments it was put back.
	seen := map[time.Time]bool{}
	waitFor(t, "the job held three times", func() bool {
		if info, err := insp.GetTaskInfo(tasks.QueueAgent, "d-1"); err == nil && strings.Contains(info.LastErr, ErrPaused.Error()) {
			seen[info.LastFailedAt] = true
		}
		return len(seen) >= 3
	})
	select {
	case run := <-rec.calls:
		t.Fatalf("a paused job ran: %+v", run)
	default:
	}
	got := posts.all()
	if len(got) != 1 || !strings.Contains(got[0], "paused by the operator for repository o/r") || !strings.Contains(got[0], "starts when the operator resumes") {
		t.Fatalf("answers %q, want one saying paused by the operator", got)
	}
	if info, _ := insp.GetTaskInfo(tasks.QueueAgent, "d-1"); info.Retried != 0 {
		t.Errorf("held job counted %d failures, want 0", info.Retried)
	}
	if ok, err := q.Resume(ctx, scope); err != nil || !ok {
		t.Fatalf("resume = %v, %v", ok, err)
	}
	run := <-rec.calls
	if run.TaskID != "d-1" || run.Retry != 0 {
		t.Fatalf("run after resume = %+v", run)
	}
}

// interruptible is a Pipeline that runs until its interrupt channel
// closes and reports what interrupted it.
type interruptible struct{ started, why chan string }

func (p *interruptible) Solve(ctx context.Context, _ tasks.SolveIssue, run tasks.Attempt) error {
	p.started <- run.TaskID
	select {
	case <-interrupt.Chan(ctx):
		p.why <- interrupt.Why(ctx)
	case <-ctx.Done():
		p.why <- "context ended: " + context.Cause(ctx).Error()
	}
	return nil
}

func (p *interruptible) Retry(ctx context.Context, j tasks.RetryPR, run tasks.Attempt) error {
	return p.Solve(ctx, tasks.SolveIssue{}, run)
}

// A pause of the job's installation reaches the running job: its
// interrupt channel closes (the model loop stops at its next step) and
// the reason names the pause.
func TestPauseInterruptsRunningJob(t *testing.T) {
	ctx := context.Background()
	rdb := testRedis(t)
	q := jobs.NewQueue(rdb)
	p := &interruptible{started: make(chan string, 1), why: make(chan string, 1)}
	srv := NewServer(rdb, Config{Concurrency: 1, Logger: slog.New(slog.NewTextHandler(t.Output(), nil))})
	if err := srv.Start(testHandlers(t, q, p).Mux()); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	mustOutcome(t, q.EnqueueSolve, solve("d-1"), jobs.Enqueued)
	<-p.started
	scope := jobs.Scope{Installation: issue.InstallationID}
	if _, _, err := q.Pause(ctx, scope, "ops"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = q.Resume(context.Background(), scope) })
	var why string
	select {
	case why = <-p.why:
	case <-time.After(time.Minute): // a bound against a hang, not a speed target
		t.Fatal("the pause never interrupted the running job")
	}
	if !strings.HasPrefix(why, "paused by the operator (installation 1, by ops)") {
		t.Fatalf("interrupted because %q, want the pause", why)
	}
}
