package jobs

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hibiken/asynq"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// update is an update of pull request pr (of issue n) to base.
func update(n, pr int, base string) tasks.RetryPR {
	i := issue
	i.Number = n
	return tasks.RetryPR{Issue: i, PR: pr, DeliveryID: tasks.RebaseID(i, pr, base), IssueHash: "pin", Rebase: base}
}

// Deferred updates keep one per pull request (the latest base), start
// one per call, lowest pull request first, skip an issue where a retry
// already waits, and are forgotten once enqueued; nothing is lost.
func TestDeferredUpdates(t *testing.T) {
	ctx := context.Background()
	q := NewQueue(testRedis(t))
	a, b := strings.Repeat("a", 40), strings.Repeat("b", 40)
	if err := q.DeferUpdate(ctx, tasks.RetryPR{Issue: issue, PR: 3, DeliveryID: "d"}); err == nil {
		t.Error("a retry that is not an update was deferred")
	}
	for _, p := range []tasks.RetryPR{update(20, 21, a), update(10, 11, a), update(10, 11, b), update(30, 31, a)} {
		if err := q.DeferUpdate(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	// Issue 20 is busy: a job runs and a retry already waits behind it.
	busy := issue
	busy.Number = 20
	if res, err := q.EnqueueSolve(ctx, tasks.SolveIssue{Issue: busy, DeliveryID: "solve-20", Requester: "u"}); err != nil || res.Outcome != Enqueued {
		t.Fatalf("solve on 20: %+v %v", res, err)
	}
	if res, err := q.EnqueueRetry(ctx, tasks.RetryPR{Issue: busy, PR: 21, DeliveryID: "retry-20", Requester: "u"}); err != nil || res.Outcome != Queued {
		t.Fatalf("retry on 20: %+v %v", res, err)
	}
	var got []string
	for range 4 {
		p, ok, err := q.StartDeferredUpdate(ctx, issue)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			got = append(got, fmt.Sprintf("%d@%s", p.PR, p.Rebase[:1]))
		}
	}
	if want := []string{"11@b", "31@a"}; !slices.Equal(got, want) {
		t.Errorf("started %v, want %v: the latest base of 11, then 31, and 21 kept while its issue is busy", got, want)
	}
	left, err := q.rdb.HKeys(ctx, deferredKey(issue)).Result()
	if err != nil || !slices.Equal(left, []string{"21"}) {
		t.Errorf("still deferred: %v %v, want 21", left, err)
	}
	for _, id := range []string{tasks.RebaseID(update(10, 11, b).Issue, 11, b), tasks.RebaseID(update(30, 31, a).Issue, 31, a)} {
		if _, err := asynq.NewInspectorFromRedisClient(q.rdb).GetTaskInfo(tasks.QueueAgent, id); err != nil {
			t.Errorf("task %s: %v", id, err)
		}
	}
}
