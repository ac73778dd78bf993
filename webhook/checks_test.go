package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// checkSuite is a completed check_suite on branch at head, by app slug.
func checkSuite(t testing.TB, branch, head, conclusion, slug string, edit func(cs map[string]any)) []byte {
	return fixturePayload(t, "check_suite.completed.json", func(m map[string]any) {
		cs := obj(m, "check_suite")
		cs["head_branch"], cs["head_sha"], cs["conclusion"] = branch, head, conclusion
		cs["app"] = map[string]any{"id": 15368, "slug": slug}
		if edit != nil {
			edit(cs)
		}
	})
}

const someSHA = "ec26c3e57ca3a959ca5aad62de7213c562f8c821"

// CI results that are not a failure of someone else's CI on an agent
// branch start nothing and need no GitHub call; bad ones are 400.
func TestCheckEventsThatDoNothing(t *testing.T) {
	e := newEnv(t)
	requested := checkSuite(t, "agent/issue-7", someSHA, "failure", "github-actions", nil)
	requested = []byte(strings.Replace(string(requested), `"action":"completed"`, `"action":"requested"`, 1))
	cases := map[string]struct {
		event string
		body  []byte
		want  int
		msg   string
	}{
		"success":                  {"check_suite", checkSuite(t, "agent/issue-7", someSHA, "success", "github-actions", nil), http.StatusOK, "conclusion"},
		"cancelled":                {"check_suite", checkSuite(t, "agent/issue-7", someSHA, "cancelled", "github-actions", nil), http.StatusOK, "conclusion"},
		"not completed":            {"check_suite", requested, http.StatusOK, "ignored action"},
		"own suite":                {"check_suite", checkSuite(t, "agent/issue-7", someSHA, "failure", "patchwright-test", nil), http.StatusOK, "own checks"},
		"other branch":             {"check_suite", checkSuite(t, "main", someSHA, "failure", "github-actions", nil), http.StatusOK, "not a Patchwright branch"},
		"fork (no branch)":         {"check_suite", checkSuite(t, "", someSHA, "failure", "github-actions", nil), http.StatusOK, "not a Patchwright branch"},
		"bad head":                 {"check_suite", checkSuite(t, "agent/issue-7", "not-a-sha", "failure", "github-actions", nil), http.StatusBadRequest, "head_sha"},
		"head not a string":        {"check_suite", checkSuite(t, "agent/issue-7", someSHA, "failure", "github-actions", func(cs map[string]any) { cs["head_sha"] = 5 }), http.StatusBadRequest, "malformed"},
		"pull requests not a list": {"check_suite", checkSuite(t, "agent/issue-7", someSHA, "failure", "github-actions", func(cs map[string]any) { cs["pull_requests"] = "2" }), http.StatusBadRequest, "malformed"},
		"not JSON":                 {"check_run", []byte("{"), http.StatusBadRequest, ""},
		// A merge queue's run: GitHub's temporary branch, no pull requests.
		"merge queue": {"check_suite", checkSuite(t, "gh-readonly-queue/master/pr-12-"+someSHA, strings.Repeat("e", 40), "failure", "github-actions",
			func(cs map[string]any) { cs["pull_requests"] = []any{} }), http.StatusOK, "merge queue's temporary branch"},
		"workflow success": {"workflow_run", fixturePayload(t, "workflow_run.completed.with-pull-requests.json", nil), http.StatusOK, "conclusion"},
	}
	i := 0
	for name, tc := range cases {
		i++
		t.Run(name, func(t *testing.T) {
			rec := e.deliver(tc.event, fmt.Sprintf("ci-%d", i), tc.body)
			expectStatus(t, rec, tc.want)
			if !strings.Contains(rec.Body.String(), tc.msg) {
				t.Errorf("answer %q, want it to say %q", rec.Body.String(), tc.msg)
			}
		})
	}
	if n := len(e.tasks(tasks.QueueAgent)); n != 0 {
		t.Errorf("%d agent tasks, want none", n)
	}
}

// `/agent note` from a writer reaches the job running on the issue, once
// per delivery; with nothing running, or from a reader, it is answered
// and stored nowhere.
func TestNoteCommand(t *testing.T) {
	e := newEnv(t)
	issue := tasks.Issue{InstallationID: testInstall, Owner: "Codertocat", Repo: "Hello-World", Number: 7}
	expectStatus(t, e.deliver("issue_comment", "n-idle", issueComment(t, writerLogin, "/agent note use the v2 API")), http.StatusOK)
	if n, err := e.queue.TakeNotes(context.Background(), issue); err != nil || len(n) != 0 {
		t.Fatalf("with nothing running: notes %v, %v", n, err)
	}
	if n := len(e.tasks(tasks.QueueReplies)); n != 1 {
		t.Errorf("%d replies to a note with nothing running, want 1", n)
	}
	expectStatus(t, e.deliver("issues", "n-label", labeled(t, 7, writerLogin)), http.StatusAccepted)
	body := issueComment(t, writerLogin, "/agent note use the v2 API\nand keep the old one")
	expectStatus(t, e.deliver("issue_comment", "n-1", body), http.StatusOK)
	expectStatus(t, e.deliver("issue_comment", "n-1", body), http.StatusOK) // a redelivery
	expectStatus(t, e.deliver("issue_comment", "n-reader", issueComment(t, readerLogin, "/agent note do something else")), http.StatusOK)
	expectStatus(t, e.deliver("issue_comment", "n-empty", issueComment(t, writerLogin, "/agent note")), http.StatusOK)
	notes, err := e.queue.TakeNotes(context.Background(), issue)
	if err != nil || len(notes) != 1 || notes[0].Author != writerLogin || notes[0].Text != "use the v2 API\nand keep the old one" {
		t.Fatalf("notes = %+v, %v; want the writer's one, once", notes, err)
	}
	// The note taken is acknowledged with one 👀 on its comment (the
	// redelivery adds none); the refusals are answered in words.
	var acks []tasks.Reply
	for _, r := range e.replies() {
		if r.Reaction != "" {
			acks = append(acks, r)
		}
	}
	if len(acks) != 1 || acks[0].Reaction != tasks.ReactionNoted || acks[0].CommentID == 0 || acks[0].Number != 7 {
		t.Errorf("acknowledgements of the note: %+v, want one 👀 on its comment", acks)
	}
	if n, _ := e.queue.TakeNotes(context.Background(), issue); len(n) != 0 {
		t.Errorf("notes taken twice: %v", n)
	}
}

// `/agent plan` from a writer enqueues a planning solve, even on an issue
// without the trigger label; a reader's is refused with a reply and
// starts nothing.
func TestPlanCommand(t *testing.T) {
	e := newEnv(t)
	unlabelled := func(sender, body string) []byte {
		return fixturePayload(t, "issue_comment.created.json", func(m map[string]any) {
			obj(m, "issue")["number"] = 7
			obj(m, "issue")["labels"] = []any{}
			obj(m, "comment")["body"] = body
			obj(m, "sender")["login"] = sender
		})
	}
	expectStatus(t, e.deliver("issue_comment", "p-reader", unlabelled(readerLogin, "/agent plan")), http.StatusOK)
	if n := len(e.tasks(tasks.QueueAgent)); n != 0 {
		t.Fatalf("a reader's plan enqueued %d agent tasks", n)
	}
	replies := e.tasks(tasks.QueueReplies)
	if len(replies) != 1 || !strings.Contains(string(replies[0].Payload), "`/agent plan` needs write") {
		t.Fatalf("reader's plan replies: %+v", replies)
	}
	expectStatus(t, e.deliver("issue_comment", "p-1", unlabelled(writerLogin, "/agent plan keep the old API")), http.StatusAccepted)
	ts := e.tasks(tasks.QueueAgent)
	if len(ts) != 1 {
		t.Fatalf("%d agent tasks, want 1", len(ts))
	}
	var p tasks.SolveIssue
	if err := json.Unmarshal(ts[0].Payload, &p); err != nil {
		t.Fatal(err)
	}
	if ts[0].Type != tasks.TypeSolveIssue || !p.Plan || p.Instructions != "keep the old API" || p.Requester != writerLogin {
		t.Errorf("plan task %s %+v", ts[0].Type, p)
	}
	// One job per issue holds for plans too.
	expectStatus(t, e.deliver("issue_comment", "p-2", unlabelled(writerLogin, "/agent plan")), http.StatusOK)
	if n := len(e.tasks(tasks.QueueAgent)); n != 1 {
		t.Errorf("second plan while one is queued: %d agent tasks", n)
	}
}

// `/agent approve` starts an attempt on the plan the planning run kept,
// with the approver's notes; with no plan kept it only answers, and a
// reader is refused as for every command.
func TestApproveCommand(t *testing.T) {
	e := newEnv(t)
	comment := func(sender, body string) []byte {
		return fixturePayload(t, "issue_comment.created.json", func(m map[string]any) {
			obj(m, "issue")["number"] = 7
			obj(m, "issue")["labels"] = []any{map[string]any{"name": "agent"}}
			obj(m, "comment")["body"] = body
			obj(m, "sender")["login"] = sender
		})
	}
	expectStatus(t, e.deliver("issue_comment", "a-0", comment(writerLogin, "/agent approve")), http.StatusOK)
	if n := len(e.tasks(tasks.QueueAgent)); n != 0 {
		t.Fatalf("an approval without a plan enqueued %d agent tasks", n)
	}
	if r := e.tasks(tasks.QueueReplies); len(r) != 1 || !strings.Contains(string(r[0].Payload), "no plan to approve") {
		t.Fatalf("replies %+v, want one saying there is no plan", r)
	}

	issue := tasks.Issue{InstallationID: testInstall, Owner: "Codertocat", Repo: "Hello-World", Number: 7}
	if err := e.queue.SavePlan(t.Context(), issue, jobs.PlanRecord{Task: "p-1", Text: "Files: a.go\nApproach: fix it.", RequestedBy: writerLogin}); err != nil {
		t.Fatal(err)
	}
	expectStatus(t, e.deliver("issue_comment", "a-reader", comment(readerLogin, "/agent approve")), http.StatusOK)
	if n := len(e.tasks(tasks.QueueAgent)); n != 0 {
		t.Fatalf("a reader's approval enqueued %d agent tasks", n)
	}
	expectStatus(t, e.deliver("issue_comment", "a-1", comment(writerLogin, "/agent approve but keep the old flag")), http.StatusAccepted)
	ts := e.tasks(tasks.QueueAgent)
	if len(ts) != 1 {
		t.Fatalf("%d agent tasks, want 1", len(ts))
	}
	var p tasks.SolveIssue
	if err := json.Unmarshal(ts[0].Payload, &p); err != nil {
		t.Fatal(err)
	}
	if p.Plan || p.ApprovedPlan != "Files: a.go\nApproach: fix it." || p.PlanTask != "p-1" || p.Instructions != "but keep the old flag" || p.Requester != writerLogin {
		t.Errorf("approved task %+v", p)
	}
}

// While the issue's plan waits for approval, `/agent retry [changes]`
// asks for a new plan carrying the waiting one and the changes; once
// `/agent approve` took that plan, a retry is an attempt again.
func TestRetryReplansWhileAPlanWaits(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	comment := func(body string) []byte {
		return fixturePayload(t, "issue_comment.created.json", func(m map[string]any) {
			obj(m, "issue")["number"] = 7
			obj(m, "issue")["labels"] = []any{map[string]any{"name": "agent"}}
			obj(m, "comment")["body"] = body
			obj(m, "sender")["login"] = writerLogin
		})
	}
	last := func() tasks.SolveIssue {
		t.Helper()
		ts := e.tasks(tasks.QueueAgent)
		if len(ts) == 0 {
			t.Fatal("no agent task")
		}
		var p tasks.SolveIssue
		for _, ti := range ts {
			var q tasks.SolveIssue
			if err := json.Unmarshal(ti.Payload, &q); err != nil {
				t.Fatal(err)
			}
			if q.DeliveryID >= p.DeliveryID {
				p = q
			}
		}
		return p
	}
	issue := tasks.Issue{InstallationID: testInstall, Owner: "Codertocat", Repo: "Hello-World", Number: 7}
	const first = "Files: a.go\nApproach: fix it."
	if err := e.queue.SavePlan(ctx, issue, jobs.PlanRecord{Task: "p-1", Text: first, RequestedBy: writerLogin}); err != nil {
		t.Fatal(err)
	}
	expectStatus(t, e.deliver("issue_comment", "r-1", comment("/agent retry use a flag instead")), http.StatusAccepted)
	if p := last(); !p.Plan || p.PreviousPlan != first || p.PlanTask != "p-1" || p.Instructions != "use a flag instead" || p.ApprovedPlan != "" {
		t.Fatalf("retry while a plan waits enqueued plan=%v previous=%q instructions=%q approved=%q, want a new plan", p.Plan, p.PreviousPlan, p.Instructions, p.ApprovedPlan)
	}
	if err := e.queue.Release(ctx, issue, "r-1"); err != nil {
		t.Fatal(err)
	}
	expectStatus(t, e.deliver("issue_comment", "r-2", comment("/agent approve")), http.StatusAccepted)
	if rec, _, _ := e.queue.LatestPlan(ctx, issue); rec.Waiting() || rec.ApprovedBy != writerLogin {
		t.Fatalf("after the approval the plan is %+v", rec)
	}
	if err := e.queue.Release(ctx, issue, "r-2"); err != nil {
		t.Fatal(err)
	}
	expectStatus(t, e.deliver("issue_comment", "r-3", comment("/agent retry")), http.StatusAccepted)
	if p := last(); p.DeliveryID != "r-3" || p.Plan || p.PreviousPlan != "" || p.ApprovedPlan != "" || p.PlanTask != "" {
		t.Fatalf("retry after the approval enqueued %s plan=%v previous=%q approved=%q, want an attempt", p.DeliveryID, p.Plan, p.PreviousPlan, p.ApprovedPlan)
	}
}

// The trigger label with ":plan" asks for a planning run, as `/agent plan`
// does; a reader's is refused naming that label.
func TestPlanLabel(t *testing.T) {
	e := newEnv(t)
	planLabel := func(n int, sender string) []byte {
		return fixturePayload(t, "issues.labeled.json", func(m map[string]any) {
			obj(m, "label")["name"] = "agent:plan"
			obj(m, "issue")["number"] = n
			obj(m, "sender")["login"] = sender
		})
	}
	expectStatus(t, e.deliver("issues", "l-reader", planLabel(8, readerLogin)), http.StatusOK)
	if r := e.tasks(tasks.QueueReplies); len(r) != 1 || !strings.Contains(string(r[0].Payload), "`agent:plan` label") {
		t.Fatalf("reader's plan label replies %+v", r)
	}
	expectStatus(t, e.deliver("issues", "l-1", planLabel(7, writerLogin)), http.StatusAccepted)
	ts := e.tasks(tasks.QueueAgent)
	if len(ts) != 1 {
		t.Fatalf("%d agent tasks, want 1", len(ts))
	}
	var p tasks.SolveIssue
	if err := json.Unmarshal(ts[0].Payload, &p); err != nil {
		t.Fatal(err)
	}
	if !p.Plan || p.Requester != writerLogin {
		t.Errorf("plan label task %+v, want a plan", p)
	}
}

// The trigger label while a plan waits is still one Redis command: the
// task names no plan and the plan still waits; the worker settles it
// when the job starts (jobs/githubjob's TestLabelSetsAWaitingPlanAside).
func TestLabelLeavesAWaitingPlanToTheWorker(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	issue := tasks.Issue{InstallationID: testInstall, Owner: "Codertocat", Repo: "Hello-World", Number: 7}
	if err := e.queue.SavePlan(ctx, issue, jobs.PlanRecord{Task: "p-1", Text: "Files: a.go", RequestedBy: writerLogin}); err != nil {
		t.Fatal(err)
	}
	label := fixturePayload(t, "issues.labeled.json", func(m map[string]any) {
		obj(m, "label")["name"] = "agent"
		obj(m, "issue")["number"] = 7
		obj(m, "sender")["login"] = writerLogin
	})
	expectStatus(t, e.deliver("issues", "s-1", label), http.StatusAccepted)
	var p tasks.SolveIssue
	for _, ti := range e.tasks(tasks.QueueAgent) {
		if err := json.Unmarshal(ti.Payload, &p); err != nil {
			t.Fatal(err)
		}
	}
	if p.DeliveryID != "s-1" || p.Plan || p.ApprovedPlan != "" || p.PlanTask != "" {
		t.Fatalf("label's task %+v, want a plain solve", p)
	}
	if rec, _, _ := e.queue.LatestPlan(ctx, issue); !rec.Waiting() {
		t.Fatalf("after the label the plan is %+v, want it still waiting for the worker", rec)
	}
}

// A check that passes (or Patchwright's own) on the head Patchwright
// pushed looks at the pull request's mergeable_state: behind or
// conflicting, the base branch is merged in by an update, one per head
// however many checks report it; clean, or a head someone else pushed,
// starts nothing.
func TestCheckFindsPullRequestOutOfDate(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	issue := tasks.Issue{InstallationID: testInstall, Owner: "Codertocat", Repo: "Hello-World", Number: 7}
	if _, err := e.queue.EnqueueSolve(ctx, tasks.SolveIssue{Issue: issue, DeliveryID: "label-7", Requester: writerLogin, IssueHash: "pin"}); err != nil {
		t.Fatal(err)
	}
	if err := e.queue.Release(ctx, issue, "label-7"); err != nil {
		t.Fatal(err)
	}
	e.gh.heads[12], e.gh.openPRs["agent/issue-7"], e.gh.pushed["agent/issue-7"] = "agent/issue-7", 12, someSHA
	updates := func() []*tasks.RetryPR {
		var out []*tasks.RetryPR
		for _, ti := range e.tasks(tasks.QueueAgent) {
			if strings.HasPrefix(ti.ID, "mergeable-") {
				var p tasks.RetryPR
				if err := json.Unmarshal(ti.Payload, &p); err != nil {
					t.Fatal(err)
				}
				out = append(out, &p)
			}
		}
		return out
	}
	suite := func(slug string) []byte { return checkSuite(t, "agent/issue-7", someSHA, "success", slug, nil) }

	e.gh.mergeable[12] = "clean"
	expectStatus(t, e.deliver("check_suite", "m-clean", suite("github-actions")), http.StatusOK)
	e.gh.mergeable[12] = "behind"
	rec := e.deliver("check_suite", "m-behind", suite("github-actions"))
	expectStatus(t, rec, http.StatusAccepted)
	expectStatus(t, e.deliver("check_suite", "m-own", suite("patchwright-test")), http.StatusOK) // the same head: no second update
	got := updates()
	if len(got) != 1 || got[0].PR != 12 || got[0].Rebase != "master" || got[0].IssueHash != "pin" || got[0].DeliveryID != tasks.MergeableUpdateID(issue, 12, someSHA) {
		t.Fatalf("updates %+v (%s), want one of #12 to master", got, rec.Body.String())
	}
	// A head someone else pushed is theirs to merge.
	e.gh.headSHA["agent/issue-7"] = strings.Repeat("d", 40)
	e.gh.mergeable[12] = "dirty"
	expectStatus(t, e.deliver("check_suite", "m-theirs", checkSuite(t, "agent/issue-7", strings.Repeat("d", 40), "success", "github-actions", nil)), http.StatusOK)
	if n := len(updates()); n != 1 {
		t.Errorf("%d updates after a check on someone's head, want still 1", n)
	}
	// Patchwright's again at a new head while the first update runs and
	// a retry waits behind it: kept, and started once that job ends.
	head2 := strings.Repeat("f", 40)
	e.gh.headSHA["agent/issue-7"], e.gh.pushed["agent/issue-7"] = "", head2
	if res, err := e.queue.EnqueueRetry(ctx, tasks.RetryPR{Issue: issue, PR: 12, DeliveryID: "retry-7", Requester: writerLogin}); err != nil || res.Outcome != jobs.Queued {
		t.Fatalf("retry behind the update: %+v %v", res, err)
	}
	expectStatus(t, e.deliver("check_suite", "m-busy", checkSuite(t, "agent/issue-7", head2, "success", "github-actions", nil)), http.StatusOK)
	if err := e.queue.Release(ctx, issue, got[0].DeliveryID); err != nil {
		t.Fatal(err)
	}
	p, ok, err := e.queue.StartDeferredUpdate(ctx, issue)
	if err != nil || !ok || p.DeliveryID != tasks.MergeableUpdateID(issue, 12, head2) {
		t.Errorf("the busy update was not kept: %+v %v %v", p, ok, err)
	}
}
