package webhook

import (
	"net/http"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// After a plan, its approval, a note, a stop and a retry (and a reader's
// refused retry), the audit export shows each, in order, with its actor,
// its issue and what was decided.
func TestAuditLogOfCommands(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	comment := func(sender, body string) []byte {
		return fixturePayload(t, "issue_comment.created.json", func(m map[string]any) {
			obj(m, "issue")["number"] = 7
			obj(m, "issue")["labels"] = []any{map[string]any{"name": "agent"}}
			obj(m, "comment")["body"] = body
			obj(m, "sender")["login"] = sender
		})
	}
	issue := tasks.Issue{InstallationID: testInstall, Owner: "Codertocat", Repo: "Hello-World", Number: 7}
	expectStatus(t, e.deliver("issue_comment", "au-plan", comment(writerLogin, "/agent plan")), http.StatusAccepted)
	// The planning run ends and keeps its plan.
	if err := e.queue.Release(ctx, issue, "au-plan"); err != nil {
		t.Fatal(err)
	}
	if err := e.queue.SavePlan(ctx, issue, jobs.PlanRecord{Task: "au-plan", Text: "Files: a.go", RequestedBy: writerLogin}); err != nil {
		t.Fatal(err)
	}
	expectStatus(t, e.deliver("issue_comment", "au-approve", comment(writerLogin, "/agent approve")), http.StatusAccepted)
	expectStatus(t, e.deliver("issue_comment", "au-note", comment(writerLogin, "/agent note mind the tests")), http.StatusOK)
	expectStatus(t, e.deliver("issue_comment", "au-stop", comment(writerLogin, "/agent stop")), http.StatusOK)
	expectStatus(t, e.deliver("issue_comment", "au-retry", comment(writerLogin, "/agent retry")), http.StatusAccepted)
	expectStatus(t, e.deliver("issue_comment", "au-reader", comment(readerLogin, "/agent retry")), http.StatusOK)
	// A redelivery is no new act.
	expectStatus(t, e.deliver("issue_comment", "au-retry", comment(writerLogin, "/agent retry")), http.StatusOK)

	var got []jobs.AuditEntry
	if err := e.queue.AuditExport(ctx, jobs.AuditFilter{Repo: "codertocat/hello-world"}, func(a jobs.AuditEntry) error {
		got = append(got, a)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []struct{ action, actor, result, delivery string }{
		{"/agent plan", writerLogin, "enqueued", "au-plan"},
		{"/agent approve", writerLogin, "enqueued", "au-approve"},
		{"/agent note", writerLogin, "note queued", "au-note"},
		{"/agent stop", writerLogin, "", "au-stop"},
		{"/agent retry", writerLogin, "enqueued", "au-retry"},
		{"/agent retry", readerLogin, "refused", "au-reader"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d audit entries, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Action != w.action || g.Actor != w.actor || !strings.Contains(g.Result, w.result) || g.Delivery != w.delivery ||
			g.Issue != 7 || g.Repo != "Codertocat/Hello-World" || g.Installation != testInstall || g.Time.IsZero() {
			t.Errorf("entry %d = %+v, want %s by %s (%q)", i, g, w.action, w.actor, w.result)
		}
	}
	var none int
	if err := e.queue.AuditExport(ctx, jobs.AuditFilter{Repo: "other/repo"}, func(jobs.AuditEntry) error { none++; return nil }); err != nil || none != 0 {
		t.Errorf("another repository's export: %d entries, %v", none, err)
	}
}

// A Patchwright pull request closed, merged or not, is entered with who
// closed it; another's pull request is not.
func TestAuditLogOfClosedPullRequests(t *testing.T) {
	e := newEnv(t)
	expectStatus(t, e.deliver("pull_request", "c-merged", closedPR(t, func(p map[string]any) { p["merged"] = true })), http.StatusAccepted)
	expectStatus(t, e.deliver("pull_request", "c-closed", closedPR(t, func(p map[string]any) { p["merged"] = false; p["number"] = 3 })), http.StatusAccepted)
	expectStatus(t, e.deliver("pull_request", "c-other", closedPR(t, func(p map[string]any) {
		p["user"] = map[string]any{"login": "octocat", "type": "User"}
	})), http.StatusOK)
	var got []jobs.AuditEntry
	if err := e.queue.AuditExport(t.Context(), jobs.AuditFilter{}, func(a jobs.AuditEntry) error { got = append(got, a); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Action != "pull request merged" || got[0].PR != 2 || got[0].Issue != 7 ||
		got[1].Action != "pull request closed unmerged" || got[1].PR != 3 || got[0].Actor == "" {
		t.Fatalf("audit entries %+v, want the merge of #2 and the close of #3, with who did them", got)
	}
}
