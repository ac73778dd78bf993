package tasks_test

import (
	"bytes"
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/redistest"
	"github.com/patchwright/patchwright/jobs/tasks"
)

const testRedisDB = 12 // each package its own DB: packages' tests run in parallel

var issue = tasks.Issue{InstallationID: 1, Owner: "O", Repo: "R", Number: 5}

// storedTask is what Redis holds of a pending agent task.
type storedTask struct {
	hash    map[string]string
	pending []string
	queues  []string
}

// readTask spells asynq's own key shapes (its internal/base) apart from
// the queue's copy, so the test checks them.
func readTask(t *testing.T, rdb *redis.Client, id string) storedTask {
	t.Helper()
	ctx := context.Background()
	var s storedTask
	var err error
	if s.hash, err = rdb.HGetAll(ctx, "asynq:{"+tasks.QueueAgent+"}:t:"+id).Result(); err != nil {
		t.Fatal(err)
	}
	if s.pending, err = rdb.LRange(ctx, "asynq:{"+tasks.QueueAgent+"}:pending", 0, -1).Result(); err != nil {
		t.Fatal(err)
	}
	if s.queues, err = rdb.SMembers(ctx, "asynq:queues").Result(); err != nil {
		t.Fatal(err)
	}
	return s
}

// The queue writes agent tasks itself, in the script that takes the lock
// (enqueue.go). What it stores must be what asynq's own client stores for
// the same task, byte for byte, or asynq's server would misread it.
func TestAgentTaskAsAsynqStoresIt(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Client(t, testRedisDB)
	// Both tasks carry the same HeaderEnqueuedAt.
	enqueued := time.Date(2026, 12, 2, 11, 40, 0, 123456789, time.UTC)
	t.Cleanup(tasks.SetNow(func() time.Time { return enqueued }))
	for _, c := range []struct {
		name    string
		task    func(tasks.SolveIssue) (*asynq.Task, error)
		enqueue func(*jobs.Queue, tasks.SolveIssue) (jobs.EnqueueResult, error)
	}{
		{"solve", tasks.NewSolveIssueTask, func(q *jobs.Queue, p tasks.SolveIssue) (jobs.EnqueueResult, error) { return q.EnqueueSolve(ctx, p) }},
		{"retry", func(p tasks.SolveIssue) (*asynq.Task, error) {
			return tasks.NewRetryPRTask(tasks.RetryPR{Issue: p.Issue, PR: 9, DeliveryID: p.DeliveryID, Requester: p.Requester, Instructions: "again"})
		}, func(q *jobs.Queue, p tasks.SolveIssue) (jobs.EnqueueResult, error) {
			return q.EnqueueRetry(ctx, tasks.RetryPR{Issue: p.Issue, PR: 9, DeliveryID: p.DeliveryID, Requester: p.Requester, Instructions: "again"})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := tasks.SolveIssue{Issue: issue, DeliveryID: "as-asynq-" + c.name, Requester: "u", IssueHash: tasks.IssueHash("t", "b")}
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
			q := jobs.NewQueue(rdb)
			if res, err := c.enqueue(q, p); err != nil || res.Outcome != jobs.Enqueued {
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
			info, err := insp.GetTaskInfo(tasks.QueueAgent, p.DeliveryID)
			if err != nil {
				t.Fatal(err)
			}
			if info.Type != task.Type() || !bytes.Equal(info.Payload, task.Payload()) || info.State != asynq.TaskStatePending ||
				info.MaxRetry != tasks.AgentMaxRetry || info.Timeout != tasks.AgentTimeout || info.Retention != tasks.Retention {
				t.Errorf("asynq reads %+v", info)
			}
			if got := info.Headers[tasks.HeaderEnqueuedAt]; got != "2026-12-02T11:40:00.123456789Z" {
				t.Errorf("asynq reads the enqueue time %q", got)
			}
			if err := rdb.FlushDB(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
