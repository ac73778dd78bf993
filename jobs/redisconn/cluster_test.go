package redisconn_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/redisconn"
	"github.com/patchwright/patchwright/jobs/redistest"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// TestCluster runs the queue on a real Redis Cluster of three masters on
// loopback. Every script of the queue runs there (the enqueue with a
// delivery's meaning, a retry queued behind the running job and its
// hand-over, fairness slots, notes), the active jobs of a repository are
// found on every master, and asynq's own server takes the tasks the
// scripts stored.
func TestCluster(t *testing.T) {
	t.Parallel()
	nodes := redistest.StartCluster(t, 3)
	c, err := redisconn.Open("redis-cluster://"+nodes[0].Addr()+","+nodes[1].Addr(), redisconn.TLS{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ok := c.(*redis.ClusterClient); !ok {
		t.Fatalf("Open gave a %T, want a cluster client", c)
	}
	ctx := t.Context()
	slot := func(key string) int64 {
		n, err := c.ClusterKeySlot(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	// What the test rests on: our keys share the queue's slot, and asynq's
	// set of queues is in another, which a script may not touch with them.
	if slot(jobs.KeyPrefix+"active:o/r#1") != slot("asynq:{"+tasks.QueueAgent+"}:pending") {
		t.Fatal("Patchwright's keys are not in the agent queue's hash slot")
	}
	if slot("asynq:queues") == slot(jobs.KeyPrefix) {
		t.Fatal("asynq:queues shares the slot: the test would show nothing")
	}

	q := jobs.NewQueue(c)
	issue := tasks.Issue{InstallationID: 1, Owner: "o", Repo: "r", Number: 1}
	meaning := jobs.KeyPrefix + "meaning:m1"
	enqueue := func(want jobs.EnqueueOutcome, f func() (jobs.EnqueueResult, error)) jobs.EnqueueResult {
		t.Helper()
		res, err := f()
		if err != nil || res.Outcome != want {
			t.Fatalf("enqueue: %+v %v, want %v", res, err, want)
		}
		return res
	}
	enqueue(jobs.Enqueued, func() (jobs.EnqueueResult, error) {
		return q.EnqueueSolveClaiming(ctx, tasks.SolveIssue{Issue: issue, DeliveryID: "d-1", Requester: "o"}, meaning)
	})
	enqueue(jobs.Replayed, func() (jobs.EnqueueResult, error) {
		return q.EnqueueSolveClaiming(ctx, tasks.SolveIssue{Issue: issue, DeliveryID: "d-2", Requester: "o"}, meaning)
	})
	if res := enqueue(jobs.Busy, func() (jobs.EnqueueResult, error) {
		return q.EnqueueSolve(ctx, tasks.SolveIssue{Issue: issue, DeliveryID: "d-3", Requester: "o"})
	}); res.ActiveTaskID != "d-1" {
		t.Fatalf("busy with %q, want d-1", res.ActiveTaskID)
	}
	enqueue(jobs.Queued, func() (jobs.EnqueueResult, error) {
		return q.EnqueueRetry(ctx, tasks.RetryPR{Issue: issue, PR: 5, DeliveryID: "d-4", Requester: "o"})
	})
	if full, err := q.TakeSlot(ctx, issue, "d-1", jobs.Limits{Installation: 1, Repo: 1}); err != nil || full != "" {
		t.Fatalf("slot: %q %v", full, err)
	}
	if full, err := q.TakeSlot(ctx, tasks.Issue{InstallationID: 1, Owner: "o", Repo: "r", Number: 2}, "d-9", jobs.Limits{Installation: 1}); err != nil || full == "" {
		t.Fatalf("second slot of installation 1: %q %v, want it full", full, err)
	}
	if n, err := q.AddNote(ctx, issue, jobs.Note{DeliveryID: "n-1", Author: "o", Text: "use v2"}); err != nil || n != jobs.NoteAdded {
		t.Fatalf("note: %v %v", n, err)
	}
	if notes, err := q.TakeNotes(ctx, issue); err != nil || len(notes) != 1 {
		t.Fatalf("notes: %+v %v", notes, err)
	}

	other := tasks.Issue{InstallationID: 2, Owner: "p", Repo: "s", Number: 7}
	enqueue(jobs.Enqueued, func() (jobs.EnqueueResult, error) {
		return q.EnqueueSolve(ctx, tasks.SolveIssue{Issue: other, DeliveryID: "d-5", Requester: "p"})
	})
	if ids, err := q.CancelRepo(ctx, "p", "s", "uninstall"); err != nil || !slices.Equal(ids, []string{"d-5"}) {
		t.Fatalf("cancel p/s: %v %v, want d-5", ids, err)
	}

	// The running job ends: the queued retry takes the lock over.
	if err := q.Release(ctx, issue, "d-1"); err != nil {
		t.Fatal(err)
	}
	if holder, err := q.Active(ctx, issue); err != nil || holder != "d-4" {
		t.Fatalf("lock after the hand-over: %q %v, want d-4", holder, err)
	}

	if holder, err := q.Active(ctx, other); err != nil || holder != "" {
		t.Fatalf("p/s#7 still locked by %q (%v) after its pending job was cancelled", holder, err)
	}

	// The cancelled pending job was deleted; asynq runs the other two.
	seen := runTasks(t, c, 2)
	slices.Sort(seen)
	if !slices.Equal(seen, []string{"d-1", "d-4"}) {
		t.Fatalf("asynq ran %v, want d-1 and d-4", seen)
	}
}

// runTasks runs an asynq server on c until it has taken n agent tasks,
// and returns their IDs.
func runTasks(t *testing.T, c redis.UniversalClient, n int) []string {
	t.Helper()
	var mu sync.Mutex
	var seen []string
	done := make(chan struct{})
	srv := asynq.NewServerFromRedisClient(c, asynq.Config{Queues: map[string]int{tasks.QueueAgent: 1}, Concurrency: 1,
		LogLevel: asynq.ErrorLevel})
	err := srv.Start(asynq.HandlerFunc(func(ctx context.Context, task *asynq.Task) error {
		id, _ := asynq.GetTaskID(ctx)
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, id)
		if len(seen) == n {
			close(done)
		}
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	select {
	case <-done:
	case <-time.After(time.Minute): // only keeps a broken run from hanging
	}
	mu.Lock()
	defer mu.Unlock()
	return slices.Clone(seen)
}
