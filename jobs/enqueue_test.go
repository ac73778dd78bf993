package jobs

import (
	"bytes"
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// storedTask is what Redis holds of a pending agent task.
type storedTask struct {
	hash    map[string]string
	pending []string
	queues  []string
}

func readTask(t *testing.T, rdb *redis.Client, id string) storedTask {
	t.Helper()
	ctx := context.Background()
	var s storedTask
	var err error
	if s.hash, err = rdb.HGetAll(ctx, asynqTaskKey(QueueAgent, id)).Result(); err != nil {
		t.Fatal(err)
	}
	if s.pending, err = rdb.LRange(ctx, asynqPendingKey(QueueAgent), 0, -1).Result(); err != nil {
		t.Fatal(err)
	}
	if s.queues, err = rdb.SMembers(ctx, asynqQueues).Result(); err != nil {
		t.Fatal(err)
	}
	return s
}

// The queue writes agent tasks itself, in the script that takes the lock
// (enqueue.go). What it stores must be what asynq's own client stores for
// the same task, byte for byte, or asynq's server would misread it.
func TestAgentTaskAsAsynqStoresIt(t *testing.T) {
	ctx := context.Background()
	rdb := testRedis(t)
	// Both tasks carry the same HeaderEnqueuedAt.
	enqueued := time.Date(2026, 12, 2, 11, 40, 0, 123456789, time.UTC)
	now = func() time.Time { return enqueued }
	t.Cleanup(func() { now = time.Now })
	for _, c := range []struct {
		name    string
		task    func(SolveIssue) (*asynq.Task, error)
		enqueue func(*Queue, SolveIssue) (EnqueueResult, error)
	}{
		{"solve", NewSolveIssueTask, func(q *Queue, p SolveIssue) (EnqueueResult, error) { return q.EnqueueSolve(ctx, p) }},
		{"retry", func(p SolveIssue) (*asynq.Task, error) {
			return NewRetryPRTask(RetryPR{Issue: p.Issue, PR: 9, DeliveryID: p.DeliveryID, Requester: p.Requester, Instructions: "again"})
		}, func(q *Queue, p SolveIssue) (EnqueueResult, error) {
			return q.EnqueueRetry(ctx, RetryPR{Issue: p.Issue, PR: 9, DeliveryID: p.DeliveryID, Requester: p.Requester, Instructions: "again"})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := SolveIssue{Issue: issue, DeliveryID: "as-asynq-" + c.name, Requester: "u", IssueHash: IssueHash("t", "b")}
			task, err := c.task(p)
			if err != nil {
				t.Fatal(err)
			}
			client := asynq.NewClientFromRedisClient(rdb)
			before := time.Now().UnixNano()
			if _, err := client.Enqueue(task); err != nil {
				t.Fatal(err)
			}
			want := readTask(t, rdb, p.DeliveryID)
			if err := rdb.FlushDB(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			q := NewQueue(rdb)
			if res, err := c.enqueue(q, p); err != nil || res.Outcome != Enqueued {
				t.Fatalf("enqueue: %+v, %v", res, err)
			}
			got := readTask(t, rdb, p.DeliveryID)
			if !bytes.Equal([]byte(got.hash["msg"]), []byte(want.hash["msg"])) {
				t.Errorf("task message\n got %q\nwant %q", got.hash["msg"], want.hash["msg"])
			}
			if since, err := strconv.ParseInt(got.hash["pending_since"], 10, 64); err != nil || since < before {
				t.Errorf("pending_since %q", got.hash["pending_since"])
			}
			delete(got.hash, "pending_since")
			delete(want.hash, "pending_since")
			delete(got.hash, "msg")
			delete(want.hash, "msg")
			if len(got.hash) != len(want.hash) || got.hash["state"] != want.hash["state"] {
				t.Errorf("hash %v, want %v", got.hash, want.hash)
			}
			if len(got.pending) != 1 || got.pending[0] != want.pending[0] || len(got.queues) != 1 || got.queues[0] != want.queues[0] {
				t.Errorf("pending %v queues %v, want %v %v", got.pending, got.queues, want.pending, want.queues)
			}
			// And asynq reads it back as its own.
			insp := asynq.NewInspectorFromRedisClient(rdb)
			defer insp.Close()
			info, err := insp.GetTaskInfo(QueueAgent, p.DeliveryID)
			if err != nil {
				t.Fatal(err)
			}
			if info.Type != task.Type() || !bytes.Equal(info.Payload, task.Payload()) || info.State != asynq.TaskStatePending ||
				info.MaxRetry != AgentMaxRetry || info.Timeout != AgentTimeout || info.Retention != Retention {
				t.Errorf("asynq reads %+v", info)
			}
			if got := info.Headers[HeaderEnqueuedAt]; got != "2026-12-02T11:40:00.123456789Z" {
				t.Errorf("asynq reads the enqueue time %q", got)
			}
			if err := rdb.FlushDB(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

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
	if ttl := rdb.PTTL(ctx, meaning).Val(); ttl <= MeaningTTL-time.Minute || ttl > MeaningTTL {
		t.Errorf("meaning TTL %v, want about %v", ttl, MeaningTTL)
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
	if n, _ := rdb.Exists(ctx, asynqTaskKey(QueueAgent, "c-replay"), lockKey(issue)).Result(); n != 0 {
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
