package jobs

import (
	"context"
	"testing"
	"time"

	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/redis/go-redis/v9"
)

// A Redis that refuses asynq's keys refuses the whole script: no lock and
// no worked record are left for a job that does not exist.
func TestEnqueueRefusedLeavesNothing(t *testing.T) {
	ctx := context.Background()
	admin := testRedis(t)
	user := "enqueue-test-limited"
	if err := admin.Do(ctx, "ACL", "SETUSER", user, "reset", "on", ">pw", "~patchwright:*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Do(context.Background(), "ACL", "DELUSER", user) })
	opt := *admin.Options()
	opt.Username, opt.Password = user, "pw"
	limited := redis.NewClient(&opt)
	defer limited.Close()
	q := NewQueue(limited)
	if _, err := q.EnqueueSolve(ctx, solve("refused")); err == nil {
		t.Fatal("enqueue succeeded without access to asynq's keys")
	}
	if keys, _ := admin.Keys(ctx, KeyPrefix+"*").Result(); len(keys) != 0 {
		t.Fatalf("keys after a refused enqueue: %v", keys)
	}
}

// EnqueueSolveClaiming claims the meaning as ClaimMeaning would, in the
// same script: a replay under another delivery ID does nothing at all; the
// same delivery again is a Duplicate; a delivery answered Busy keeps its
// claim.
func TestEnqueueSolveClaiming(t *testing.T) {
	ctx := context.Background()
	rdb := testRedis(t)
	q := NewQueue(rdb)
	const meaning = KeyPrefix + "meaning:claiming-test"
	res, err := q.EnqueueSolveClaiming(ctx, solve("c-1"), meaning)
	if err != nil || res.Outcome != Enqueued {
		t.Fatalf("first: %+v, %v", res, err)
	}
	if holder, _ := q.ClaimMeaning(ctx, meaning, "other"); holder != "c-1" {
		t.Fatalf("meaning held by %q, want c-1", holder)
	}
	if ttl := rdb.PTTL(ctx, meaning).Val(); ttl <= meaningTTL-time.Minute || ttl > meaningTTL {
		t.Errorf("meaning TTL %v, want about %v", ttl, meaningTTL)
	}
	if res, err := q.EnqueueSolveClaiming(ctx, solve("c-1"), meaning); err != nil || res.Outcome != Duplicate {
		t.Fatalf("redelivery: %+v, %v", res, err)
	}
	// Free the issue, so a replay that got through would start a job.
	if err := q.Release(ctx, issue, "c-1"); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Del(ctx, lockKey(issue)).Err(); err != nil {
		t.Fatal(err)
	}
	res, err = q.EnqueueSolveClaiming(ctx, solve("c-replay"), meaning)
	if err != nil || res.Outcome != Replayed || res.FirstDelivery != "c-1" {
		t.Fatalf("replay: %+v, %v", res, err)
	}
	if n, _ := rdb.Exists(ctx, asynqTaskKey(tasks.QueueAgent, "c-replay"), lockKey(issue)).Result(); n != 0 {
		t.Fatalf("a replay left %d of its task and the lock", n)
	}
	// Busy: another task holds the lock; the meaning of the delivery
	// answered busy is claimed.
	mustOutcome(t, q.EnqueueSolve, solve("c-2"), Enqueued)
	const other = KeyPrefix + "meaning:claiming-test-2"
	res, err = q.EnqueueSolveClaiming(ctx, solve("c-3"), other)
	if err != nil || res.Outcome != Busy || res.ActiveTaskID != "c-2" {
		t.Fatalf("busy: %+v, %v", res, err)
	}
	if holder, _ := q.ClaimMeaning(ctx, other, "x"); holder != "c-3" {
		t.Fatalf("meaning of the busy delivery held by %q, want c-3", holder)
	}
}
