package webhook

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/jobs/tasks"
)

const (
	baseRepoID = 186853002 // repository.id of the check fixtures (Codertocat/Hello-World)
	forkRepoID = 999001
	otherSHA   = "f95f852bd8fca8fcc58a9a2d6c842781e32a215e"
)

// failedRun is the fixture workflow_run, failed on agent/issue-7 at head,
// moved to Codertocat/Hello-World (the other fixtures' repository) with
// its head in repository headRepo.
func failedRun(t testing.TB, head string, headRepo int64) []byte {
	return fixturePayload(t, "workflow_run.completed.with-pull-requests.json", func(m map[string]any) {
		repo := obj(m, "repository")
		repo["id"], repo["name"] = baseRepoID, "Hello-World"
		obj(repo, "owner")["login"] = "Codertocat"
		wr := obj(m, "workflow_run")
		wr["head_branch"], wr["head_sha"], wr["conclusion"], wr["event"] = "agent/issue-7", head, "failure", "pull_request"
		obj(wr, "head_repository")["id"] = headRepo
		wr["pull_requests"] = []any{}
	})
}

// ciFixes decodes the CI-fix tasks in the agent queue.
func (e *env) ciFixes() []tasks.RetryPR {
	e.t.Helper()
	var out []tasks.RetryPR
	for _, ti := range e.tasks(tasks.QueueAgent) {
		if ti.Type != tasks.TypeRetryPR {
			continue
		}
		var p tasks.RetryPR
		if err := json.Unmarshal(ti.Payload, &p); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// A failed CI result starts a fix only on a branch of the repository
// itself, at the head Patchwright pushed, with the issue text a writer
// approved: a fork's run at Patchwright's own commit, a suite listing a
// fork's pull request, a head someone else pushed and an issue nobody
// labelled start nothing. The one that does carries the label's pin.
func TestCIFixOnlyForTheAppsOwnBranch(t *testing.T) {
	e := newEnv(t)
	issue := tasks.Issue{InstallationID: testInstall, Owner: "Codertocat", Repo: "Hello-World", Number: 7}
	e.gh.openPRs["agent/issue-7"] = 12
	e.gh.pushed["agent/issue-7"] = someSHA
	e.gh.openPRs["agent/issue-8"] = 13
	e.gh.pushed["agent/issue-8"] = someSHA

	unlabelled := checkSuite(t, "agent/issue-8", someSHA, "failure", "github-actions", nil)
	expectStatus(t, e.deliver("check_suite", "ci-nopin", unlabelled), http.StatusOK)

	expectStatus(t, e.deliver("issues", "label-7", labeled(t, 7, writerLogin)), http.StatusAccepted)
	if err := e.queue.Release(t.Context(), issue, "label-7"); err != nil {
		t.Fatal(err)
	}
	forkPull := checkSuite(t, "agent/issue-7", someSHA, "failure", "github-actions", func(cs map[string]any) {
		pr := cs["pull_requests"].([]any)[0].(map[string]any)
		obj(obj(pr, "head"), "repo")["id"] = forkRepoID
	})
	noRepoID := failedRun(t, someSHA, baseRepoID)
	noRepoID = []byte(strings.Replace(string(noRepoID), `"id":186853002`, `"id":null`, 1))
	cases := map[string]struct {
		event string
		body  []byte
		msg   string
	}{
		"a fork's workflow run at the app's head": {"workflow_run", failedRun(t, someSHA, forkRepoID), "a fork's"},
		"a workflow run without a head repository": {"workflow_run", fixturePayload(t, "workflow_run.completed.with-pull-requests.json", func(m map[string]any) {
			m["repository"] = map[string]any{"id": baseRepoID, "name": "Hello-World", "owner": map[string]any{"login": "Codertocat"}}
			wr := obj(m, "workflow_run")
			wr["head_branch"], wr["head_sha"], wr["conclusion"], wr["head_repository"] = "agent/issue-7", someSHA, "failure", nil
			wr["pull_requests"] = []any{}
		}), "a fork's"},
		"a suite for a fork's pull request": {"check_suite", forkPull, "a fork's"},
		"no repository id":                  {"workflow_run", noRepoID, "no repository id"},
		"a head the app did not push":       {"workflow_run", failedRun(t, otherSHA, baseRepoID), "head is now"},
	}
	i := 0
	for name, tc := range cases {
		i++
		t.Run(name, func(t *testing.T) {
			rec := e.deliver(tc.event, "ci-no-"+string(rune('a'+i)), tc.body)
			expectStatus(t, rec, http.StatusOK)
			if !strings.Contains(rec.Body.String(), tc.msg) {
				t.Errorf("answer %q, want it to say %q", rec.Body.String(), tc.msg)
			}
		})
	}
	e.gh.headSHA["agent/issue-7"] = otherSHA // a person pushed on top
	rec := e.deliver("workflow_run", "ci-human", failedRun(t, otherSHA, baseRepoID))
	expectStatus(t, rec, http.StatusOK)
	if !strings.Contains(rec.Body.String(), "not pushed by Patchwright") {
		t.Errorf("a person's head answered %q", rec.Body.String())
	}
	if fixes := e.ciFixes(); len(fixes) != 0 {
		t.Fatalf("CI fixes enqueued: %+v", fixes)
	}

	delete(e.gh.headSHA, "agent/issue-7")
	expectStatus(t, e.deliver("workflow_run", "ci-own", failedRun(t, someSHA, baseRepoID)), http.StatusAccepted)
	fixes := e.ciFixes()
	label := obj(mapOf(t, labeled(t, 7, writerLogin)), "issue")
	want := tasks.IssueHash(label["title"].(string), label["body"].(string))
	if len(fixes) != 1 || fixes[0].CIHead != someSHA || fixes[0].IssueHash != want {
		t.Fatalf("CI fixes %+v, want one at %s pinned to the label's text %s", fixes, someSHA, want)
	}
}

func mapOf(t testing.TB, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// replies decodes the reply tasks.
func (e *env) replies() []tasks.Reply {
	e.t.Helper()
	var out []tasks.Reply
	for _, ti := range e.tasks(tasks.QueueReplies) {
		var p tasks.Reply
		if err := json.Unmarshal(ti.Payload, &p); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// People without write access get one reply per issue between them, and
// a reaction to their comment after that; never a job. A redelivery of the
// first is still the one reply, and a writer is answered as before.
func TestStrangersGetOneReplyPerIssue(t *testing.T) {
	e := newEnv(t)
	retry := issueComment(t, readerLogin, "/agent retry")
	expectStatus(t, e.deliver("issue_comment", "s-1", retry), http.StatusOK)
	expectStatus(t, e.deliver("issue_comment", "s-1", retry), http.StatusOK) // a redelivery
	rec := e.deliver("issue_comment", "s-2", retry)
	expectStatus(t, rec, http.StatusOK)
	if !strings.Contains(rec.Body.String(), "reaction only") {
		t.Errorf("the second command answered %q", rec.Body.String())
	}
	expectStatus(t, e.deliver("issue_comment", "s-3", issueComment(t, readerLogin, "/agent help")), http.StatusOK)
	expectStatus(t, e.deliver("issue_comment", "s-4", issueComment(t, readerLogin, "/agent frobnicate")), http.StatusOK)
	if n := len(e.tasks(tasks.QueueAgent)); n != 0 {
		t.Fatalf("a stranger's commands enqueued %d agent tasks", n)
	}
	var bodies, reactions int
	for _, r := range e.replies() {
		switch {
		case r.Reaction == tasks.ReactionRefused && r.Body == "" && r.CommentID != 0:
			reactions++
		case r.Reaction == "" && strings.Contains(r.Body, "needs write"):
			bodies++
		default:
			t.Errorf("unexpected reply %+v", r)
		}
	}
	if bodies != 1 || reactions != 3 {
		t.Errorf("%d replies and %d reactions, want 1 and 3", bodies, reactions)
	}
	// Another issue has its own one reply; a writer's help is answered.
	expectStatus(t, e.deliver("issue_comment", "s-5", fixturePayload(t, "issue_comment.created.json", func(m map[string]any) {
		obj(m, "issue")["number"] = 8
		obj(m, "issue")["labels"] = []any{map[string]any{"name": "agent"}}
		obj(m, "comment")["body"] = "/agent retry"
		obj(m, "sender")["login"] = readerLogin
	})), http.StatusOK)
	expectStatus(t, e.deliver("issue_comment", "s-6", issueComment(t, writerLogin, "/agent help")), http.StatusOK)
	bodies = 0
	for _, r := range e.replies() {
		if r.Body != "" {
			bodies++
		}
	}
	if bodies != 3 {
		t.Errorf("%d replies after issue 8's and a writer's help, want 3", bodies)
	}
}

// A label from someone without write access is refused the same way: one
// reply on the issue, a reaction to the issue after that.
func TestStrangersLabelOnceReplied(t *testing.T) {
	e := newEnv(t)
	expectStatus(t, e.deliver("issues", "sl-1", labeled(t, 7, readerLogin)), http.StatusOK)
	expectStatus(t, e.deliver("issues", "sl-2", labeled(t, 7, readerLogin)), http.StatusOK)
	rs := e.replies()
	if len(rs) != 2 || len(e.tasks(tasks.QueueAgent)) != 0 {
		t.Fatalf("replies %+v and %d agent tasks, want a reply and a reaction, no job", rs, len(e.tasks(tasks.QueueAgent)))
	}
	var body, reaction int
	for _, r := range rs {
		if r.Body != "" && strings.Contains(r.Body, "label starts Patchwright only") {
			body++
		}
		if r.Reaction == tasks.ReactionRefused && r.CommentID == 0 {
			reaction++
		}
	}
	if body != 1 || reaction != 1 {
		t.Errorf("replies %+v, want one body and one reaction on the issue", rs)
	}
}
