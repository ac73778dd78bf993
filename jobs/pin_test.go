package jobs

import (
	"context"
	"testing"

	"github.com/patchwright/patchwright/jobs/tasks"
)

// A writer's trigger stores the pin of the text it approved, whether it
// started a job or found one busy; a CI fix stores none (it carries the
// pin, it approves nothing); nothing stored: not ok.
func TestApprovedPin(t *testing.T) {
	ctx := context.Background()
	q := NewQueue(testRedis(t))
	if _, ok, err := q.ApprovedPin(ctx, issue); err != nil || ok {
		t.Fatalf("before any trigger: ok=%v err=%v", ok, err)
	}
	label := tasks.IssueHash("title", "body")
	s := solve("p-1")
	s.IssueHash = label
	if res, err := q.EnqueueSolve(ctx, s); err != nil || res.Outcome != Enqueued {
		t.Fatalf("solve: %+v, %v", res, err)
	}
	if pin, ok, err := q.ApprovedPin(ctx, issue); err != nil || !ok || pin != label {
		t.Fatalf("after the label: %q %v %v, want %q", pin, ok, err, label)
	}
	ci := retry(tasks.CIFixID(issue, "ec26c3e57ca3a959ca5aad62de7213c562f8c821"))
	ci.Requester, ci.CIHead, ci.IssueHash = "", "ec26c3e57ca3a959ca5aad62de7213c562f8c821", tasks.IssueHash("title", "edited")
	if _, err := q.EnqueueRetry(ctx, ci); err != nil {
		t.Fatal(err)
	}
	if pin, _, _ := q.ApprovedPin(ctx, issue); pin != label {
		t.Fatalf("a CI fix changed the approved pin to %q", pin)
	}
	busy := solve("p-2")
	busy.IssueHash = tasks.IssueHash("title", "edited and labelled again")
	if res, err := q.EnqueueSolve(ctx, busy); err != nil || res.Outcome != Busy {
		t.Fatalf("second solve: %+v, %v", res, err)
	}
	if pin, _, _ := q.ApprovedPin(ctx, issue); pin != busy.IssueHash {
		t.Fatalf("after a writer's busy label the pin is %q, want its text's", pin)
	}
}

// The one reply to strangers on an issue goes to the first delivery (and
// its redeliveries), per issue.
func TestClaimStrangerReply(t *testing.T) {
	ctx := context.Background()
	q := NewQueue(testRedis(t))
	other := issue
	other.Number++
	for _, c := range []struct {
		issue tasks.Issue
		id    string
		want  bool
	}{{issue, "d-1", true}, {issue, "d-1", true}, {issue, "d-2", false}, {other, "d-3", true}, {other, "d-1", false}} {
		if got, err := q.ClaimStrangerReply(ctx, c.issue, c.id); err != nil || got != c.want {
			t.Errorf("claim %s on #%d: %v, %v; want %v", c.id, c.issue.Number, got, err, c.want)
		}
	}
}
