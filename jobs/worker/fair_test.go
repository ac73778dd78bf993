package worker

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/redistest"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// timeline is a Pipeline that works jobDur per job and records when each
// job started and ended, in order.
type timeline struct {
	mu     sync.Mutex
	events []event
	ends   chan tasks.Issue
}

type event struct {
	issue tasks.Issue
	start bool
}

const jobDur = 150 * time.Millisecond

func (tl *timeline) Solve(ctx context.Context, p tasks.SolveIssue, _ tasks.Attempt) error {
	tl.record(p.Issue, true)
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(jobDur):
	}
	tl.record(p.Issue, false)
	tl.ends <- p.Issue
	return nil
}

func (tl *timeline) Retry(ctx context.Context, p tasks.RetryPR, at tasks.Attempt) error {
	return tl.Solve(ctx, tasks.SolveIssue{Issue: p.Issue}, at)
}

func (tl *timeline) record(i tasks.Issue, start bool) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.events = append(tl.events, event{i, start})
}

// before counts the jobs of others that ended before small started, and
// the most jobs of group that ran at once.
func (tl *timeline) before(small tasks.Issue, group func(tasks.Issue) bool) (ended, most int) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	running, smallStarted := 0, false
	for _, e := range tl.events {
		if e.issue == small {
			smallStarted = smallStarted || e.start
			continue
		}
		if !e.start && !smallStarted {
			ended++
		}
		if group(e.issue) {
			if e.start {
				running++
			} else {
				running--
			}
			most = max(most, running)
		}
	}
	return ended, most
}

const fairWorkers = 2

// floodThenOne enqueues flood jobs of big(n), then small's, and runs
// fairWorkers workers of one job each until small's job has ended.
func floodThenOne(t *testing.T, rdb *redis.Client, f func() *Fairness, big func(n int) tasks.Issue, small tasks.Issue) *timeline {
	t.Helper()
	q := jobs.NewQueue(rdb)
	for n := 1; n <= 6; n++ {
		mustOutcome(t, q.EnqueueSolve, tasks.SolveIssue{Issue: big(n), DeliveryID: fmt.Sprintf("big-%d", n), Requester: "u"}, jobs.Enqueued)
	}
	mustOutcome(t, q.EnqueueSolve, tasks.SolveIssue{Issue: small, DeliveryID: "small", Requester: "u"}, jobs.Enqueued)
	tl := &timeline{ends: make(chan tasks.Issue, 16)}
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	for range fairWorkers {
		h := &Handlers{Queue: q, Pipeline: tl, Commenter: nopCommenter{}, Fairness: f(), Logger: log}
		srv := NewServer(rdb, Config{Concurrency: 1, ShutdownTimeout: time.Second, Logger: log})
		if err := srv.Start(h.Mux()); err != nil {
			t.Fatal(err)
		}
		defer srv.Shutdown()
	}
	for i := range tl.ends {
		if i == small {
			break
		}
	}
	return tl
}

// TestFairness floods one installation (then one repository) with jobs
// and then labels one issue elsewhere: with the limits, no more than one
// job per worker ends before the lone job starts, and the flood never
// holds more than its limit; without them (the baseline in the same run)
// the lone job waits behind most of the flood.
func TestFairness(t *testing.T) {
	t.Parallel()
	redisAt := func(t *testing.T) *redis.Client {
		p := redistest.Start(t)
		rdb := redis.NewClient(&redis.Options{Addr: p.Addr()})
		t.Cleanup(func() { rdb.Close() })
		return rdb
	}
	inst := func(id int64, repo string) func(int) tasks.Issue {
		return func(n int) tasks.Issue { return tasks.Issue{InstallationID: id, Owner: "org", Repo: repo, Number: n} }
	}
	t.Run("installations", func(t *testing.T) {
		t.Parallel()
		rdb := redisAt(t)
		insp := asynq.NewInspectorFromRedisClient(rdb)
		// The pool's default shares: 2 workers of 1 give 1 and 1.
		f := func() *Fairness { return &Fairness{Inspector: insp} }
		small := inst(2, "other")(1)
		tl := floodThenOne(t, rdb, f, inst(1, "big"), small)
		ended, most := tl.before(small, func(i tasks.Issue) bool { return i.InstallationID == 1 })
		t.Logf("flood jobs ended before the lone one started: %d; most at once: %d", ended, most)
		if ended > fairWorkers || most > 1 {
			t.Errorf("%d flood jobs ended before the other installation's started (want at most %d), %d ran at once (limit 1)", ended, fairWorkers, most)
		}
	})
	t.Run("repositories", func(t *testing.T) {
		t.Parallel()
		rdb := redisAt(t)
		f := func() *Fairness { return &Fairness{Installation: -1, Repo: 1} }
		small := inst(1, "quiet")(1)
		tl := floodThenOne(t, rdb, f, inst(1, "busy"), small)
		ended, most := tl.before(small, func(i tasks.Issue) bool { return i.Repo == "busy" })
		t.Logf("busy repository's jobs ended before the quiet one started: %d; most at once: %d", ended, most)
		if ended > fairWorkers || most > 1 {
			t.Errorf("%d jobs of the busy repository ended before the quiet one's started (want at most %d), %d ran at once (limit 1)", ended, fairWorkers, most)
		}
	})
	t.Run("baseline", func(t *testing.T) {
		t.Parallel()
		rdb := redisAt(t)
		small := inst(2, "other")(1)
		tl := floodThenOne(t, rdb, func() *Fairness { return nil }, inst(1, "big"), small)
		ended, _ := tl.before(small, func(tasks.Issue) bool { return true })
		t.Logf("without limits, flood jobs ended before the lone one started: %d", ended)
		if ended <= fairWorkers {
			t.Errorf("without limits only %d flood jobs ended before the lone one: the flood does not measure fairness", ended)
		}
	})
}

// TestFairnessLimits: fixed limits win, less than 0 is none, and the
// default shares follow the pool the servers' heartbeats report.
func TestFairnessLimits(t *testing.T) {
	t.Parallel()
	p := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: p.Addr()})
	defer rdb.Close()
	f := &Fairness{Installation: 3, Repo: -1}
	if got := f.Limits(); got != (jobs.Limits{Installation: 3, Repo: -1}) {
		t.Errorf("fixed: %+v", got)
	}
	insp := asynq.NewInspectorFromRedisClient(rdb)
	if got := (&Fairness{Inspector: insp}).Limits(); got != (jobs.Limits{Installation: 1, Repo: 1}) {
		t.Errorf("no servers: %+v, want 1 and 1", got)
	}
	h := &Handlers{Queue: jobs.NewQueue(rdb), Pipeline: NoModelPipeline{}, Commenter: nopCommenter{}, Logger: slog.New(slog.DiscardHandler)}
	for range 2 {
		srv := NewServer(rdb, Config{Concurrency: 4, Logger: slog.New(slog.DiscardHandler)})
		if err := srv.Start(h.Mux()); err != nil {
			t.Fatal(err)
		}
		defer srv.Shutdown()
	}
	waitFor(t, "both heartbeats", func() bool { s, _ := insp.Servers(); return len(s) == 2 })
	if got := (&Fairness{Inspector: insp}).Limits(); got != (jobs.Limits{Installation: 4, Repo: 2}) {
		t.Errorf("pool of 8: %+v, want 4 and 2", got)
	}
}
