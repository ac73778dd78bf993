package webhook

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/hibiken/asynq"
	"github.com/patchwright/patchwright/jobs/tasks"

	"github.com/patchwright/patchwright/report/marker"
)

const headSHA = "ec26c3e57ca3a959ca5aad62de7213c562f8c821"

func (e *env) active(n int) string {
	e.t.Helper()
	id, err := e.queue.Active(context.Background(), tasks.Issue{Owner: "Codertocat", Repo: "Hello-World", Number: n})
	if err != nil {
		e.t.Fatal(err)
	}
	return id
}

func issueEvent(t *testing.T, action, label string, n int) []byte {
	return fixturePayload(t, "issues.labeled.json", func(m map[string]any) {
		m["action"] = action
		obj(m, "label")["name"] = label
		obj(m, "issue")["number"] = n
		obj(m, "sender")["login"] = writerLogin
	})
}

func TestIssueClosedOrUnlabelledCancels(t *testing.T) {
	e := newEnv(t)
	expectStatus(t, e.deliver("issues", "d-1", labeled(t, 7, writerLogin)), http.StatusAccepted)
	// Another label going leaves the job alone.
	expectStatus(t, e.deliver("issues", "d-2", issueEvent(t, "unlabeled", "bug", 7)), http.StatusOK)
	if e.active(7) != "d-1" {
		t.Fatal("removing another label stopped the job")
	}
	expectStatus(t, e.deliver("issues", "d-3", issueEvent(t, "unlabeled", "agent", 7)), http.StatusOK)
	if id := e.active(7); id != "" || len(e.tasks(tasks.QueueAgent)) != 0 {
		t.Fatalf("after the label went: lock %q, %d tasks", id, len(e.tasks(tasks.QueueAgent)))
	}
	expectStatus(t, e.deliver("issues", "d-4", labeled(t, 7, writerLogin)), http.StatusAccepted)
	expectStatus(t, e.deliver("issues", "d-5", issueEvent(t, "closed", "", 7)), http.StatusOK)
	if id := e.active(7); id != "" || len(e.tasks(tasks.QueueAgent)) != 0 {
		t.Fatalf("after the issue closed: lock %q", id)
	}
	// Nothing running: still 200, nothing replied.
	expectStatus(t, e.deliver("issues", "d-6", issueEvent(t, "closed", "", 8)), http.StatusOK)
	if n := len(e.tasks(tasks.QueueReplies)); n != 0 {
		t.Fatalf("%d replies, want none", n)
	}
}

func TestInstallationEventsCancelJobs(t *testing.T) {
	e := newEnv(t)
	expectStatus(t, e.deliver("issues", "d-7", labeled(t, 7, writerLogin)), http.StatusAccepted)
	expectStatus(t, e.deliver("issues", "d-8", labeled(t, 8, writerLogin)), http.StatusAccepted)
	added := fixturePayload(t, "installation_repositories.added.json", func(m map[string]any) {})
	expectStatus(t, e.deliver("installation_repositories", "d-add", added), http.StatusOK)
	if e.active(7) == "" {
		t.Fatal("adding repositories stopped a job")
	}
	removed := fixturePayload(t, "installation_repositories.added.json", func(m map[string]any) {
		m["action"] = "removed"
		m["repositories_added"] = []any{}
		m["repositories_removed"] = []any{map[string]any{"full_name": "codertocat/hello-world"}, map[string]any{"full_name": "Codertocat/Other"}}
	})
	expectStatus(t, e.deliver("installation_repositories", "d-rm", removed), http.StatusOK)
	if e.active(7) != "" || e.active(8) != "" {
		t.Fatal("a removed repository's jobs still hold their locks")
	}
	// Uninstalled from an account on all repositories: no list, every job
	// of the account.
	expectStatus(t, e.deliver("issues", "d-9", labeled(t, 9, writerLogin)), http.StatusAccepted)
	deleted := fixturePayload(t, "installation.deleted.json", func(m map[string]any) {
		delete(m, "repositories")
		m["installation"] = map[string]any{"id": testInstall, "account": map[string]any{"login": "Codertocat"}}
	})
	expectStatus(t, e.deliver("installation", "d-uninstall", deleted), http.StatusOK)
	if e.active(9) != "" {
		t.Fatal("uninstalling left the job running")
	}
	expectStatus(t, e.deliver("installation", "d-bad", []byte(`{"action":"deleted","repositories":"x"}`)), http.StatusBadRequest)
}

func closedPR(t *testing.T, edit func(p map[string]any)) []byte {
	return fixturePayload(t, "pull_request.closed.json", func(m map[string]any) {
		p := obj(m, "pull_request")
		p["user"] = map[string]any{"login": testBot, "type": "Bot"}
		p["body"] = "Closes #7\n" + marker.Pushed(headSHA) + "\n"
		obj(p, "head")["ref"] = "agent/issue-7"
		obj(obj(p, "head"), "repo")["full_name"] = "Codertocat/Hello-World"
		edit(p)
	})
}

func TestPullRequestClosedDeletesOnlyAnUntouchedBranch(t *testing.T) {
	e := newEnv(t)
	expectStatus(t, e.deliver("pull_request", "d-c1", closedPR(t, func(map[string]any) {})), http.StatusAccepted)
	ts := tasksOf(e.tasks(tasks.QueueReplies), tasks.TypeDeleteBranch)
	if len(ts) != 1 {
		t.Fatalf("tasks %+v, want one branch deletion", e.tasks(tasks.QueueReplies))
	}
	var p tasks.DeleteBranch
	if err := json.Unmarshal(ts[0].Payload, &p); err != nil || p.Number != 7 || p.SHA != headSHA || p.PR != 2 {
		t.Fatalf("payload %+v, %v", p, err)
	}
	for name, edit := range map[string]func(map[string]any){
		"someone pushed":  func(p map[string]any) { obj(p, "head")["sha"] = strings.Repeat("1", 40) },
		"no marker":       func(p map[string]any) { p["body"] = "Closes #7" },
		"not Patchwright": func(p map[string]any) { p["user"] = map[string]any{"login": "octocat", "type": "User"} },
		"from a fork":     func(p map[string]any) { obj(obj(p, "head"), "repo")["full_name"] = "mallory/Hello-World" },
		"another branch":  func(p map[string]any) { obj(p, "head")["ref"] = "feature" },
	} {
		if rec := e.deliver("pull_request", "d-"+strings.ReplaceAll(name, " ", "-"), closedPR(t, edit)); rec.Code != http.StatusOK {
			t.Errorf("%s: %d %s, want 200", name, rec.Code, rec.Body)
		}
	}
	if n := len(tasksOf(e.tasks(tasks.QueueReplies), tasks.TypeDeleteBranch)); n != 1 {
		t.Fatalf("%d deletions, want still 1", n)
	}
	// Every close of an agent pull request has its outcome read, kept
	// branch or not; a person's, a fork's or another branch's has none.
	outs := tasksOf(e.tasks(tasks.QueueReplies), tasks.TypeOutcome)
	if len(outs) != 3 {
		t.Fatalf("%d outcome tasks, want 3 (the deletion's and the two kept branches')", len(outs))
	}
	var o tasks.Outcome
	if err := json.Unmarshal(outs[0].Payload, &o); err != nil || o.Number != 2 || o.Owner != "Codertocat" {
		t.Fatalf("outcome payload %+v, %v: want the pull request, #2", o, err)
	}
	expectStatus(t, e.deliver("pull_request", "d-open", fixturePayload(t, "pull_request.closed.json", func(m map[string]any) { m["action"] = "opened" })), http.StatusOK)
	expectStatus(t, e.deliver("pull_request", "d-bad", []byte(`{"action":"closed","pull_request":{"number":"two"}}`)), http.StatusBadRequest)
}

func review(t *testing.T, state, body, sender string) []byte {
	return fixturePayload(t, "pull_request_review.submitted.json", func(m map[string]any) {
		r := obj(m, "review")
		r["state"], r["body"] = state, body
		obj(m, "sender")["login"] = sender
		p := obj(m, "pull_request")
		p["user"] = map[string]any{"login": testBot, "type": "Bot"}
		p["state"] = "open"
		obj(p, "head")["ref"] = "agent/issue-7"
		obj(obj(p, "head"), "repo")["full_name"] = "Codertocat/Hello-World"
	})
}

func TestChangesRequestedReviewRetries(t *testing.T) {
	e := newEnv(t)
	// Any review has the approval check updated (the worker reads whether
	// the repository asks for one).
	expectStatus(t, e.deliver("pull_request_review", "d-r0", review(t, "commented", "/agent retry", writerLogin)), http.StatusAccepted)
	expectStatus(t, e.deliver("pull_request_review", "d-r1", review(t, "changes_requested", "Please add tests.", writerLogin)), http.StatusOK)
	if n := len(e.tasks(tasks.QueueAgent)); n != 0 {
		t.Fatalf("%d tasks from reviews without the command or with another state", n)
	}
	expectStatus(t, e.deliver("pull_request_review", "d-r2", review(t, "changes_requested", "Close.\n/agent retry add tests", readerLogin)), http.StatusOK)
	if n := len(e.tasks(tasks.QueueAgent)); n != 0 || len(tasksOf(e.tasks(tasks.QueueReplies), tasks.TypeReply)) != 1 {
		t.Fatal("a reader's review retried, or was not answered")
	}
	expectStatus(t, e.deliver("pull_request_review", "d-r3", review(t, "changes_requested", "Close.\n/agent retry add tests", writerLogin)), http.StatusAccepted)
	ts := e.tasks(tasks.QueueAgent)
	if len(ts) != 1 || ts[0].Type != tasks.TypeRetryPR {
		t.Fatalf("tasks %+v", ts)
	}
	var p tasks.RetryPR
	if err := json.Unmarshal(ts[0].Payload, &p); err != nil {
		t.Fatal(err)
	}
	if p.Number != 7 || p.PR != 2 || p.Instructions != "add tests" || p.Requester != writerLogin || p.IssueHash != tasks.IssueHash("Issue title", "Issue body") {
		t.Fatalf("retry %+v", p)
	}
}

// tasksOf are the tasks of ts of type typ.
func tasksOf(ts []*asynq.TaskInfo, typ string) []*asynq.TaskInfo {
	var out []*asynq.TaskInfo
	for _, t := range ts {
		if t.Type == typ {
			out = append(out, t)
		}
	}
	return out
}

// A push to a Patchwright pull request (synchronize) and a review, or its
// dismissal, have its approval check updated, once per delivery; a
// person's pull request and a closed one do not.
func TestApprovalEvents(t *testing.T) {
	e := newEnv(t)
	sync := func(edit func(p map[string]any)) []byte {
		return closedPR(t, func(p map[string]any) {
			p["state"] = "open"
			edit(p)
		})
	}
	withAction := func(body []byte, action string) []byte {
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatal(err)
		}
		m["action"] = action
		out, _ := json.Marshal(m)
		return out
	}
	expectStatus(t, e.deliver("pull_request", "d-s1", withAction(sync(func(map[string]any) {}), "synchronize")), http.StatusAccepted)
	expectStatus(t, e.deliver("pull_request", "d-s1", withAction(sync(func(map[string]any) {}), "synchronize")), http.StatusOK)
	expectStatus(t, e.deliver("pull_request", "d-s2", withAction(sync(func(p map[string]any) {
		p["user"] = map[string]any{"login": writerLogin, "type": "User"}
	}), "synchronize")), http.StatusOK)
	expectStatus(t, e.deliver("pull_request", "d-s3", withAction(sync(func(p map[string]any) { p["state"] = "closed" }), "synchronize")), http.StatusOK)
	expectStatus(t, e.deliver("pull_request_review", "d-d1", withAction(review(t, "approved", "", writerLogin), "dismissed")), http.StatusAccepted)
	expectStatus(t, e.deliver("pull_request_review", "d-e1", withAction(review(t, "approved", "", writerLogin), "edited")), http.StatusOK)
	ts := tasksOf(e.tasks(tasks.QueueReplies), tasks.TypeApproval)
	if len(ts) != 2 {
		t.Fatalf("%d approval tasks, want 2 (d-s1, d-d1): %+v", len(ts), ts)
	}
	var p tasks.Approval
	if err := json.Unmarshal(ts[0].Payload, &p); err != nil {
		t.Fatal(err)
	}
	if p.Number != 2 || p.Owner != "Codertocat" || p.Repo != "Hello-World" {
		t.Errorf("approval task %+v, want pull request Codertocat/Hello-World#2", p)
	}
}
