package jobs

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hibiken/asynq"
)

// An update's base is a commit or a branch name, never anything a merge
// request could read otherwise; it is never a CI fix too.
func TestRebaseValidation(t *testing.T) {
	issue := Issue{InstallationID: 1, Owner: "o", Repo: "r", Number: 2}
	sha := strings.Repeat("a", 40)
	for base, ok := range map[string]bool{sha: true, "main": true, "release/1.2": true, "-main": false, "a..b": false, "main branch": false, "": true} {
		_, err := NewRetryPRTask(RetryPR{Issue: issue, PR: 3, DeliveryID: RebaseID(issue, 3, "x"), Rebase: base})
		if (err == nil) != ok {
			t.Errorf("rebase %q: %v, want ok=%v", base, err, ok)
		}
	}
	if _, err := NewRetryPRTask(RetryPR{Issue: issue, PR: 3, DeliveryID: "d", Rebase: sha, CIHead: sha}); err == nil {
		t.Error("a task that is both a CI fix and an update was accepted")
	}
	if a, b := RebaseID(issue, 3, sha), RebaseID(issue, 4, sha); a == b {
		t.Errorf("two pull requests share the update ID %s", a)
	}
}

// update is an update of pull request pr (of issue n) to base.
func update(n, pr int, base string) RetryPR {
	i := issue
	i.Number = n
	return RetryPR{Issue: i, PR: pr, DeliveryID: RebaseID(i, pr, base), IssueHash: "pin", Rebase: base}
}

// Deferred updates keep one per pull request (the latest base), start
// one per call, lowest pull request first, skip an issue where a retry
// already waits, and are forgotten once enqueued; nothing is lost.
func TestDeferredUpdates(t *testing.T) {
	ctx := context.Background()
	q := NewQueue(testRedis(t))
	a, b := strings.Repeat("a", 40), strings.Repeat("b", 40)
	if err := q.DeferUpdate(ctx, RetryPR{Issue: issue, PR: 3, DeliveryID: "d"}); err == nil {
		t.Error("a retry that is not an update was deferred")
	}
	for _, p := range []RetryPR{update(20, 21, a), update(10, 11, a), update(10, 11, b), update(30, 31, a)} {
		if err := q.DeferUpdate(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	// Issue 20 is busy: a job runs and a retry already waits behind it.
	busy := issue
	busy.Number = 20
	if res, err := q.EnqueueSolve(ctx, SolveIssue{Issue: busy, DeliveryID: "solve-20", Requester: "u"}); err != nil || res.Outcome != Enqueued {
		t.Fatalf("solve on 20: %+v %v", res, err)
	}
	if res, err := q.EnqueueRetry(ctx, RetryPR{Issue: busy, PR: 21, DeliveryID: "retry-20", Requester: "u"}); err != nil || res.Outcome != Queued {
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
	for _, id := range []string{RebaseID(update(10, 11, b).Issue, 11, b), RebaseID(update(30, 31, a).Issue, 31, a)} {
		if _, err := asynq.NewInspectorFromRedisClient(q.rdb).GetTaskInfo(QueueAgent, id); err != nil {
			t.Errorf("task %s: %v", id, err)
		}
	}
}
