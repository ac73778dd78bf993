package githubjob_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/githubjob"
	"github.com/patchwright/patchwright/jobs/githubtest"
)

// The end-to-end tests of this file drive GitHub's real behaviours, as
// the fake models them, through the webhook, the queue, the worker, the
// sandbox and the git remote (issue 16).

// fixGreeting is a model run that verifies: three turns, one conversation.
func fixGreeting() []pt.Turn {
	return []pt.Turn{
		call("read_file", `{"path":"greeting.txt"}`),
		call("edit", `{"edits":[{"path":"greeting.txt","old_text":"helo","new_text":"hello"}]}`),
		call("finish", `{"summary":"Fixed the spelling in greeting.txt."}`),
	}
}

// addRepo registers the test repository again with edit applied.
func (e *e2e) addRepo(edit func(*githubtest.Repo)) {
	r := githubtest.Repo{Owner: owner, Name: repoName, DefaultBranch: "master", CloneURL: e.remote.CloneURL(owner, repoName),
		Heads: func(b string) string { return e.remote.Head(e.t, owner, repoName, b) }}
	edit(&r)
	e.fake.AddRepo(r)
}

var issue1 = jobs.Issue{InstallationID: e2eInst, Owner: owner, Repo: repoName, Number: 1}

// An installation without pull_requests: write gets its change pushed and
// then a 403 on opening the pull request. That ends the job at once: one
// model conversation, no retry, and a status comment that names the
// permission and what to do.
func TestPermissionDeniedEndsTheJobOnce(t *testing.T) {
	turns := fixGreeting()
	e := newE2E(t, turns...)
	e.fake.SetInstallationPermissions(e2eInst, map[string]string{
		"metadata": "read", "contents": "write", "issues": "write", "checks": "write", "pull_requests": "read",
	})
	e.startWorker()
	if code := e.label(1, "delivery-denied-1"); code != http.StatusAccepted {
		t.Fatalf("label: %d, want 202", code)
	}
	info := e.waitTask("delivery-denied-1", asynq.TaskStateCompleted, asynq.TaskStateArchived, asynq.TaskStateRetry)
	if info.State != asynq.TaskStateArchived || info.Retried != 0 {
		t.Fatalf("task is %s after %d retries (%s); want archived on its first try", info.State, info.Retried, info.LastErr)
	}
	if n := len(e.model.Requests()); n != len(turns) || e.model.Remaining() != 0 {
		t.Errorf("%d model requests, %d turns left: want exactly one conversation of %d", n, e.model.Remaining(), len(turns))
	}
	if n := len(e.fake.Pulls(owner, repoName)); n != 0 {
		t.Errorf("%d pull requests", n)
	}
	st := e.statusComments(1)
	want := "Patchwright cannot open pull requests here: the app lacks pull_requests: write"
	text := "" // as read, without the comment's Markdown escapes
	if len(st) == 1 {
		text = strings.ReplaceAll(st[0].Body, `\`, "")
	}
	if !strings.Contains(text, want) || !strings.Contains(text, "accept the new permissions") ||
		!strings.Contains(text, "pushed to agent/issue-1") || strings.Contains(text, "tries again by itself") {
		t.Errorf("status comments: %+v\nwant one saying %q, what to do, and where the change is", st, want)
	}
	if e.remote.Head(t, owner, repoName, "agent/issue-1") == "" {
		t.Error("the change was not pushed before the refusal")
	}
	if id, err := e.queue.Active(context.Background(), issue1); err != nil || id != "" {
		t.Errorf("issue lock after the refusal: %q, %v", id, err)
	}
}

// A repository without draft pull requests (GitHub Free, private) refuses
// the draft an unverified change asks for; the change is opened ready for
// review, and its body says it is not verified and why it is no draft.
func TestDraftRefusedFallsBackToReady(t *testing.T) {
	e := newE2E(t,
		call("write_file", `{"path":"NOTES.md","content":"Looked at it.\n"}`),
		call("finish", `{"summary":"Added notes."}`),
	)
	e.addRepo(func(r *githubtest.Repo) { r.NoDrafts = true })
	e.startWorker()
	if code := e.label(1, "delivery-nodraft-1"); code != http.StatusAccepted {
		t.Fatalf("label: %d, want 202", code)
	}
	if info := e.waitTask("delivery-nodraft-1", asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted || info.Retried != 0 {
		t.Fatalf("task ended %s after %d retries: %s", info.State, info.Retried, info.LastErr)
	}
	pulls := e.fake.Pulls(owner, repoName)
	if len(pulls) != 1 || pulls[0].Draft {
		t.Fatalf("pull requests: %+v, want one, ready for review", pulls)
	}
	for _, want := range []string{"does not allow draft pull requests", "**not verified**", "**Outcome: unverified**", "## Not verified"} {
		if !strings.Contains(pulls[0].Body, want) {
			t.Errorf("body lacks %q:\n%s", want, pulls[0].Body)
		}
	}
	if st := e.statusComments(1); len(st) != 1 || !strings.Contains(st[0].Body, fmt.Sprintf("/pull/%d", pulls[0].Number)) {
		t.Errorf("status comments: %+v", st)
	}
}

// The first attempt meets GitHub at its worst: the status comment's POST
// is stored but answered 502, the pull request's POST hits the primary
// rate limit, and the check run's POST is stored but answered 504. The
// job waits for the limit's reset, finds what was stored instead of
// posting it again, and ends with one pull request, one status comment
// and one check run, on its first try.
func TestRateLimitAndLostAnswers(t *testing.T) {
	e := newE2E(t, fixGreeting()...)
	base := fmt.Sprintf("/repos/%s/%s", owner, repoName)
	e.fake.Fail(githubtest.Fault{Method: http.MethodPost, Path: base + "/issues/1/comments", Status: 502, Landed: true, Body: `{"message":"Server Error"}`})
	reset := time.Now().Add(4 * time.Minute)
	e.fake.Fail(githubtest.PrimaryRateLimit(http.MethodPost, base+"/pulls", reset))
	e.fake.Fail(githubtest.Fault{Method: http.MethodPost, Path: base + "/check-runs", Status: 504, Landed: true})
	e.startWorker()
	if code := e.label(1, "delivery-limits-1"); code != http.StatusAccepted {
		t.Fatalf("label: %d, want 202", code)
	}
	if info := e.waitTask("delivery-limits-1", asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted || info.Retried != 0 {
		t.Fatalf("task ended %s after %d retries: %s", info.State, info.Retried, info.LastErr)
	}
	var waited bool
	for _, w := range e.waits.all() {
		// Until x-ratelimit-reset, not a flat minute.
		waited = waited || w > 3*time.Minute && w <= 4*time.Minute+time.Second
	}
	if !waited {
		t.Errorf("waits %v: none until the reset about 4 minutes away", e.waits.all())
	}
	pulls := e.fake.Pulls(owner, repoName)
	if len(pulls) != 1 || !strings.Contains(pulls[0].Body, "**Outcome: verified**") {
		t.Fatalf("pull requests: %+v, want one, verified", pulls)
	}
	if st := e.statusComments(1); len(st) != 1 || !strings.Contains(st[0].Body, "finished") {
		t.Errorf("status comments: %+v, want one that says finished", st)
	}
	head := e.remote.Head(t, owner, repoName, "agent/issue-1")
	if runs := e.fake.CheckRuns(owner, repoName, head); len(runs) != 1 || runs[0].Name != githubjob.CheckRunPrefix+"greeting" {
		t.Errorf("check runs: %+v, want one", runs)
	}
	if e.model.Remaining() != 0 || len(e.model.Requests()) != 3 {
		t.Errorf("model: %d requests, %d turns left; want one conversation", len(e.model.Requests()), e.model.Remaining())
	}
}
