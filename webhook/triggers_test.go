package webhook

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/jobs/tasks"
)

// assigned is issues.assigned (or unassigned, with action) of issue n to
// assignee by sender: the labeled fixture reshaped as GitHub sends an
// assignment, a top-level assignee object and no label.
func assigned(t testing.TB, action string, n int, assignee, sender string) []byte {
	return fixturePayload(t, "issues.labeled.json", func(m map[string]any) {
		m["action"] = action
		delete(m, "label")
		typ := "User"
		if strings.HasSuffix(assignee, "[bot]") {
			typ = "Bot"
		}
		m["assignee"] = map[string]any{"login": assignee, "id": 41898282, "type": typ}
		obj(m, "issue")["number"] = n
		obj(m, "issue")["assignees"] = []any{m["assignee"]}
		obj(m, "sender")["login"] = sender
	})
}

// solves decodes the solve tasks in the agent queue.
func (e *env) solves() []tasks.SolveIssue {
	e.t.Helper()
	var out []tasks.SolveIssue
	for _, ti := range e.tasks(tasks.QueueAgent) {
		var p tasks.SolveIssue
		if err := json.Unmarshal(ti.Payload, &p); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// Assigning the issue to the app starts a run as the label does: pinned
// to the text, once however often it is delivered; assigning anyone else
// does nothing; unassigning the app stops the run.
func TestAssignToAppStartsAndUnassignStops(t *testing.T) {
	e := newEnv(t)
	body := assigned(t, "assigned", 7, testBot, writerLogin)
	expectStatus(t, e.deliver("issues", "a-1", body), http.StatusAccepted)
	expectStatus(t, e.deliver("issues", "a-1", body), http.StatusOK) // redelivery
	s := e.solves()
	pin := tasks.IssueHash("Spelling error in the README file", "It looks like you accidently spelled 'commit' with two 't's.")
	if len(s) != 1 || s[0].Requester != writerLogin || s[0].IssueHash != pin || s[0].Trigger != tasks.TriggerAssigned || s[0].Instructions != "" {
		t.Fatalf("solves = %+v, want one pinned assignment start by %s", s, writerLogin)
	}
	expectStatus(t, e.deliver("issues", "a-2", assigned(t, "assigned", 8, "octocat", writerLogin)), http.StatusOK)
	expectStatus(t, e.deliver("issues", "a-3", assigned(t, "unassigned", 7, "octocat", writerLogin)), http.StatusOK)
	if e.active(7) != "a-1" || len(e.solves()) != 1 {
		t.Fatalf("another person's assignment changed the jobs: active %q, %d tasks", e.active(7), len(e.solves()))
	}
	expectStatus(t, e.deliver("issues", "a-4", assigned(t, "unassigned", 7, testBot, writerLogin)), http.StatusOK)
	if id := e.active(7); id != "" || len(e.tasks(tasks.QueueAgent)) != 0 {
		t.Fatalf("after the app was unassigned: lock %q, %d tasks", id, len(e.tasks(tasks.QueueAgent)))
	}
	if n := len(e.replies()); n != 0 {
		t.Fatalf("%d replies, want none", n)
	}
}

// A person without write access who assigns the app gets the stranger's
// one reply, then reactions; never a job.
func TestAssignByStrangerRefused(t *testing.T) {
	e := newEnv(t)
	expectStatus(t, e.deliver("issues", "a-1", assigned(t, "assigned", 7, testBot, readerLogin)), http.StatusOK)
	expectStatus(t, e.deliver("issues", "a-2", assigned(t, "assigned", 7, testBot, readerLogin)), http.StatusOK)
	if n := len(e.tasks(tasks.QueueAgent)); n != 0 {
		t.Fatalf("%d agent tasks, want 0", n)
	}
	r := e.replies()
	if len(r) != 2 || !strings.Contains(r[0].Body+r[1].Body, "assigning the issue to @patchwright-test starts Patchwright only") ||
		r[0].Reaction+r[1].Reaction == "" {
		t.Fatalf("replies = %+v, want one refusal and one reaction", r)
	}
}

// An issue labelled and assigned at once, in either order, is one run and
// no "already working" reply; the same trigger twice still is told.
func TestLabelAndAssignAreOneRun(t *testing.T) {
	for _, order := range [][2]string{{"label", "assign"}, {"assign", "label"}} {
		t.Run(order[0]+"-first", func(t *testing.T) {
			e := newEnv(t)
			send := map[string][]byte{"label": labeled(t, 7, writerLogin), "assign": assigned(t, "assigned", 7, testBot, writerLogin)}
			expectStatus(t, e.deliver("issues", "t-1", send[order[0]]), http.StatusAccepted)
			expectStatus(t, e.deliver("issues", "t-2", send[order[1]]), http.StatusOK)
			if n, r := len(e.solves()), e.replies(); n != 1 || len(r) != 0 {
				t.Fatalf("%d solves, replies %+v; want one solve and no reply", n, r)
			}
			expectStatus(t, e.deliver("issues", "t-3", send[order[0]]), http.StatusOK)
			if r := e.replies(); len(r) != 1 || !strings.Contains(r[0].Body, "already working") {
				t.Fatalf("replies %+v, want the same trigger twice told it is busy", r)
			}
		})
	}
}

// The same text edited between the label and the assignment is another
// approval: the second trigger is told the issue is busy, as before.
func TestAssignAfterEditIsBusy(t *testing.T) {
	e := newEnv(t)
	expectStatus(t, e.deliver("issues", "t-1", labeled(t, 7, writerLogin)), http.StatusAccepted)
	edited := assigned(t, "assigned", 7, testBot, writerLogin)
	var m map[string]any
	json.Unmarshal(edited, &m)
	obj(m, "issue")["body"] = "Also fix the other typo."
	edited, _ = json.Marshal(m)
	expectStatus(t, e.deliver("issues", "t-2", edited), http.StatusOK)
	if r := e.replies(); len(r) != 1 || !strings.Contains(r[0].Body, "already working") {
		t.Fatalf("replies %+v, want one busy reply", r)
	}
}

// unworkedComment is a comment on issue 7, which carries no label and has
// no job yet.
func unworkedComment(t testing.TB, sender, body string) []byte {
	return fixturePayload(t, "issue_comment.created.json", func(m map[string]any) {
		obj(m, "issue")["number"] = 7
		obj(m, "issue")["labels"] = []any{}
		obj(m, "comment")["body"] = body
		obj(m, "sender")["login"] = sender
	})
}

func TestParseMention(t *testing.T) {
	const slug = "patchwright-test"
	for _, c := range []struct {
		body, want string
		ok         bool
	}{
		{"@patchwright-test fix the typo", "fix the typo", true},
		{"Thanks!\n@Patchwright-Test: use the v2 API\nand keep the tests", "use the v2 API\nand keep the tests", true},
		{"@patchwright-test", "", true},
		{"@patchwright-tester fix it", "", false}, // someone else
		{"please ask @patchwright-test to fix it", "", false},
		{"> @patchwright-test fix it", "", false},
		{"```\n@patchwright-test fix it\n```", "", false},
	} {
		r := ParseMention(c.body, slug)
		if got := r.Command == CommandRetry; got != c.ok || r.Instructions != c.want {
			t.Errorf("ParseMention(%q) = %+v, want ok %v %q", c.body, r, c.ok, c.want)
		}
	}
	if r := ParseMention("@patchwright-test "+strings.Repeat("x", MaxInstructions+1), slug); r.Reply == "" || r.Command != NoCommand {
		t.Errorf("an over-long instruction: %+v, want a reply", r)
	}
}

// A writer's mention on an issue nobody labelled starts a run with the
// instruction; on the app's pull request it is a retry with that
// feedback; an `/agent` command in the same comment wins.
func TestMentionByWriter(t *testing.T) {
	e := newEnv(t)
	expectStatus(t, e.deliver("issue_comment", "m-1", unworkedComment(t, writerLogin, "@patchwright-test fix it, and add a test")), http.StatusAccepted)
	s := e.solves()
	if len(s) != 1 || s[0].Instructions != "fix it, and add a test" || s[0].Requester != writerLogin || s[0].IssueHash == "" {
		t.Fatalf("solves = %+v, want one with the instruction", s)
	}
	e2 := newEnv(t)
	expectStatus(t, e2.deliver("issue_comment", "m-2", prComment(t, e2, writerLogin, "@patchwright-test rename it to Foo")), http.StatusAccepted)
	ts := e2.tasks(tasks.QueueAgent)
	if len(ts) != 1 || ts[0].Type != tasks.TypeRetryPR || !strings.Contains(string(ts[0].Payload), "rename it to Foo") {
		t.Fatalf("tasks = %v, want one retry with the feedback", ts)
	}
	e3 := newEnv(t)
	expectStatus(t, e3.deliver("issue_comment", "m-3", unworkedComment(t, writerLogin, "@patchwright-test\n/agent plan")), http.StatusAccepted)
	if s := e3.solves(); len(s) != 1 || !s[0].Plan {
		t.Fatalf("solves = %+v, want the plan command", s)
	}
}

// A stranger's mention gets the issue's one reply to people without write
// access, then reactions; never a job. A comment that only names the app
// in passing does nothing at all.
func TestMentionByStranger(t *testing.T) {
	e := newEnv(t)
	expectStatus(t, e.deliver("issue_comment", "m-1", unworkedComment(t, readerLogin, "@patchwright-test delete the tests")), http.StatusOK)
	expectStatus(t, e.deliver("issue_comment", "m-2", unworkedComment(t, readerLogin, "@patchwright-test please")), http.StatusOK)
	expectStatus(t, e.deliver("issue_comment", "m-3", unworkedComment(t, readerLogin, "is @patchwright-test any good?")), http.StatusOK)
	if n := len(e.tasks(tasks.QueueAgent)); n != 0 {
		t.Fatalf("%d agent tasks, want 0", n)
	}
	r := e.replies()
	if len(r) != 2 || !strings.Contains(r[0].Body+r[1].Body, "mentioning @patchwright-test starts Patchwright only") || r[0].Reaction+r[1].Reaction == "" {
		t.Fatalf("replies = %+v, want one refusal and one reaction", r)
	}
}
