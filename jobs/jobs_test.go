package jobs

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/patchwright/patchwright/jobs/redistest"
	"github.com/patchwright/patchwright/jobs/tasks"
)

const testRedisDB = 1 // each package its own DB: packages' tests run in parallel

func testRedis(t *testing.T) *redis.Client { return redistest.Client(t, testRedisDB) }

var issue = tasks.Issue{InstallationID: 1, Owner: "O", Repo: "R", Number: 5}

func solve(id string) tasks.SolveIssue {
	return tasks.SolveIssue{Issue: issue, DeliveryID: id, Requester: "u"}
}

func TestBadPayloadsSkipRetry(t *testing.T) {
	for name, payload := range map[string]string{
		"not json":            `{`,
		"unknown field":       `{"installation_id":1,"owner":"o","repo":"r","number":1,"delivery_id":"d","token":"x"}`,
		"no number":           `{"installation_id":1,"owner":"o","repo":"r","delivery_id":"d"}`,
		"no delivery":         `{"installation_id":1,"owner":"o","repo":"r","number":1}`,
		"plan approved":       `{"installation_id":1,"owner":"o","repo":"r","number":1,"delivery_id":"d","plan":true,"approved_plan":"p"}`,
		"plan too long":       `{"installation_id":1,"owner":"o","repo":"r","number":1,"delivery_id":"d","approved_plan":"` + strings.Repeat("x", tasks.MaxPlanBytes+1) + `"}`,
		"revision not a plan": `{"installation_id":1,"owner":"o","repo":"r","number":1,"delivery_id":"d","previous_plan":"p"}`,
		"revision too long":   `{"installation_id":1,"owner":"o","repo":"r","number":1,"delivery_id":"d","plan":true,"previous_plan":"` + strings.Repeat("x", tasks.MaxPlanBytes+1) + `"}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := tasks.Decode[tasks.SolveIssue](asynq.NewTask(tasks.TypeSolveIssue, []byte(payload)))
			if !errors.Is(err, asynq.SkipRetry) {
				t.Fatalf("err = %v, want SkipRetry", err)
			}
		})
	}
	if _, err := tasks.NewSolveIssueTask(tasks.SolveIssue{Issue: issue}); err == nil {
		t.Fatal("task without delivery ID accepted")
	}
	if _, err := tasks.NewReplyTask(tasks.Reply{Issue: issue, DeliveryID: "d", Body: " "}); err == nil {
		t.Fatal("reply without body accepted")
	}
}

func TestOneActiveJobPerIssue(t *testing.T) {
	ctx := context.Background()
	q := NewQueue(testRedis(t))
	mustOutcome(t, q.EnqueueSolve, solve("a"), Enqueued)
	mustOutcome(t, q.EnqueueSolve, solve("a"), Duplicate)
	res := mustOutcome(t, q.EnqueueSolve, solve("b"), Busy)
	if res.ActiveTaskID != "a" {
		t.Fatalf("active = %q, want a", res.ActiveTaskID)
	}
	// Releasing with the wrong task ID does nothing.
	if err := q.Release(ctx, issue, "b"); err != nil {
		t.Fatal(err)
	}
	mustOutcome(t, q.EnqueueSolve, solve("b"), Busy)
	// The case-insensitive issue key: o/r#5 is the same issue.
	lower := solve("c")
	lower.Owner, lower.Repo = "o", "r"
	mustOutcome(t, q.EnqueueSolve, lower, Busy)
	if err := q.Release(ctx, issue, "a"); err != nil {
		t.Fatal(err)
	}
	mustOutcome(t, q.EnqueueSolve, solve("b"), Enqueued)
}

func TestStaleLockIsCleared(t *testing.T) {
	ctx := context.Background()
	rdb := testRedis(t)
	q := NewQueue(rdb)
	// A lock whose task does not exist (its worker died and it was deleted).
	if err := rdb.Set(ctx, lockKey(issue), "ghost", lockTTL).Err(); err != nil {
		t.Fatal(err)
	}
	mustOutcome(t, q.EnqueueSolve, solve("a"), Enqueued)
	if id, _ := q.Active(ctx, issue); id != "a" {
		t.Fatalf("lock held by %q, want a", id)
	}
	// A redelivery of a finished delivery does not re-take the lock.
	if err := q.Release(ctx, issue, "a"); err != nil {
		t.Fatal(err)
	}
	insp := asynq.NewInspectorFromRedisClient(rdb)
	defer insp.Close()
	if err := insp.DeleteTask(tasks.QueueAgent, "a"); err != nil {
		t.Fatal(err)
	}
	mustOutcome(t, q.EnqueueSolve, solve("z"), Enqueued)
}

func TestCancelQueuedJob(t *testing.T) {
	ctx := context.Background()
	rdb := testRedis(t)
	q := NewQueue(rdb)
	if id, err := q.Cancel(ctx, issue, "u"); err != nil || id != "" {
		t.Fatalf("cancel with nothing active = %q, %v", id, err)
	}
	mustOutcome(t, q.EnqueueSolve, solve("a"), Enqueued)
	id, err := q.Cancel(ctx, issue, "boss")
	if err != nil || id != "a" {
		t.Fatalf("cancel = %q, %v; want a", id, err)
	}
	if by, ok, _ := q.Cancelled(ctx, "a"); !ok || by != "boss" {
		t.Fatalf("cancel record = %q %v", by, ok)
	}
	insp := asynq.NewInspectorFromRedisClient(rdb)
	defer insp.Close()
	if _, err := insp.GetTaskInfo(tasks.QueueAgent, "a"); !errors.Is(err, asynq.ErrTaskNotFound) {
		t.Fatalf("task a still queued: %v", err)
	}
	mustOutcome(t, q.EnqueueSolve, solve("b"), Enqueued)
}

func mustOutcome[P any](t *testing.T, enqueue func(context.Context, P) (EnqueueResult, error), p P, want EnqueueOutcome) EnqueueResult {
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

func TestAgentBranch(t *testing.T) {
	if got := AgentBranch(41); got != "agent/issue-41" {
		t.Fatalf("AgentBranch(41) = %q", got)
	}
	for ref, want := range map[string]int{
		"agent/issue-41": 41, "agent/issue-1": 1,
		"agent/issue-": 0, "agent/issue-041": 0, "agent/issue-4x": 0, "agent/issue--4": 0,
		"agent/fix-41": 0, "refs/heads/agent/issue-41": 0, "agent/issue-99999999999999999999": 0,
	} {
		n, ok := ParseAgentBranch(ref)
		if n != want || ok != (want > 0) {
			t.Errorf("ParseAgentBranch(%q) = %d, %v; want %d", ref, n, ok, want)
		}
	}
}

// EnqueuedAt reads the header NewSolveIssueTask sets, and a task without
// one (or with a malformed one) has no enqueue time rather than a wrong one.
func TestEnqueuedAtHeader(t *testing.T) {
	task, err := tasks.NewSolveIssueTask(tasks.SolveIssue{Issue: tasks.Issue{InstallationID: 1, Owner: "o", Repo: "r", Number: 2}, DeliveryID: "d"})
	if err != nil {
		t.Fatal(err)
	}
	if at := tasks.EnqueuedAt(task); at.IsZero() || time.Since(at) < 0 {
		t.Errorf("EnqueuedAt = %v, want the time the task was built", at)
	}
	for name, h := range map[string]map[string]string{
		"none":      nil,
		"malformed": {tasks.HeaderEnqueuedAt: "yesterday"},
	} {
		if at := tasks.EnqueuedAt(asynq.NewTaskWithHeaders(tasks.TypeSolveIssue, nil, h)); !at.IsZero() {
			t.Errorf("%s: EnqueuedAt = %v, want zero", name, at)
		}
	}
	reply, err := tasks.NewReplyTask(tasks.Reply{Issue: tasks.Issue{InstallationID: 1, Owner: "o", Repo: "r", Number: 2}, DeliveryID: "d", Body: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if len(reply.Headers()) != 0 {
		t.Errorf("a reply task carries headers %v", reply.Headers())
	}
}

// A kept plan is the issue's latest; none is "not found", not an error;
// one too large is refused.
func TestPlans(t *testing.T) {
	q := NewQueue(testRedis(t))
	ctx := t.Context()
	issue := tasks.Issue{InstallationID: 1, Owner: "o", Repo: "r", Number: 3}
	if _, ok, err := q.LatestPlan(ctx, issue); ok || err != nil {
		t.Fatalf("before any plan: %v %v", ok, err)
	}
	for _, task := range []string{"p-1", "p-2"} {
		if err := q.SavePlan(ctx, issue, PlanRecord{Task: task, Text: "plan of " + task}); err != nil {
			t.Fatal(err)
		}
	}
	if rec, ok, err := q.LatestPlan(ctx, issue); !ok || err != nil || rec.Task != "p-2" || rec.Text != "plan of p-2" {
		t.Fatalf("latest: %+v %v %v, want p-2's", rec, ok, err)
	}
	if err := q.SavePlan(ctx, issue, PlanRecord{Task: "p-3", Text: strings.Repeat("x", tasks.MaxPlanBytes+1)}); err == nil {
		t.Fatal("a plan over MaxPlanBytes was kept")
	}
}

// A kept plan waits until its own task's approval: approving an older
// task's plan leaves a newer one waiting, and the approved record keeps
// its text (for a second approval) and its expiry.
func TestApprovePlan(t *testing.T) {
	rdb := testRedis(t)
	q := NewQueue(rdb)
	ctx := t.Context()
	issue := tasks.Issue{InstallationID: 1, Owner: "o", Repo: "r", Number: 4}
	if ok, err := q.ApprovePlan(ctx, issue, "p-1", "w"); ok || err != nil {
		t.Fatalf("approval without a plan: %v %v", ok, err)
	}
	text := "Files: a.go\nApproach: use \"x\" </and> /paths/ é"
	if err := q.SavePlan(ctx, issue, PlanRecord{Task: "p-2", Text: text, RequestedBy: "r"}); err != nil {
		t.Fatal(err)
	}
	if rec, _, _ := q.LatestPlan(ctx, issue); !rec.Waiting() {
		t.Fatalf("a new plan does not wait: %+v", rec)
	}
	if ok, err := q.ApprovePlan(ctx, issue, "p-1", "w"); ok || err != nil {
		t.Fatalf("approving an older task's plan: %v %v", ok, err)
	}
	if rec, _, _ := q.LatestPlan(ctx, issue); !rec.Waiting() {
		t.Fatalf("p-2 approved by p-1's approval: %+v", rec)
	}
	if ok, err := q.ApprovePlan(ctx, issue, "p-2", "w"); !ok || err != nil {
		t.Fatalf("approving p-2: %v %v", ok, err)
	}
	rec, ok, err := q.LatestPlan(ctx, issue)
	if !ok || err != nil || rec.Waiting() || rec.ApprovedBy != "w" || rec.Text != text || rec.Task != "p-2" || rec.RequestedBy != "r" {
		t.Fatalf("after approval: %+v %v %v", rec, ok, err)
	}
	if ttl := rdb.TTL(ctx, planKey(issue)).Val(); ttl <= 0 {
		t.Errorf("the approved plan lost its expiry: %v", ttl)
	}
}

// A label's solve sets the waiting plan aside: it no longer waits, keeps
// its text, and names who set it aside; another task's plan is untouched.
func TestSetAsidePlan(t *testing.T) {
	q := NewQueue(testRedis(t))
	ctx := t.Context()
	issue := tasks.Issue{InstallationID: 1, Owner: "o", Repo: "r", Number: 5}
	if err := q.SavePlan(ctx, issue, PlanRecord{Task: "p-1", Text: "plan", RequestedBy: "r"}); err != nil {
		t.Fatal(err)
	}
	if ok, err := q.SetAsidePlan(ctx, issue, "p-0", "w"); ok || err != nil {
		t.Fatalf("setting aside an older task's plan: %v %v", ok, err)
	}
	if ok, err := q.SetAsidePlan(ctx, issue, "p-1", "w"); !ok || err != nil {
		t.Fatalf("setting aside p-1: %v %v", ok, err)
	}
	rec, _, err := q.LatestPlan(ctx, issue)
	if err != nil || rec.Waiting() || rec.SetAsideBy != "w" || rec.ApprovedBy != "" || rec.Text != "plan" {
		t.Fatalf("after setting aside: %+v %v", rec, err)
	}
}
