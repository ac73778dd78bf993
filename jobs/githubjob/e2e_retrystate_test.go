package githubjob_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/patchwright/patchwright/jobs/githubtest"
	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/patchwright/patchwright/report"
	"github.com/patchwright/patchwright/report/marker"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// A `/agent retry` that changes nothing keeps the pull request's hidden
// state: afterwards a CI failure on Patchwright's head is still fixed, and
// closing the pull request still deletes the branch. The issue's status
// links the open pull request after each step. The solve leaves the
// greeting check failing, so the retry's model is told which check failed
// after the previous attempt.
func TestRetryWithoutChangeKeepsPushedState(t *testing.T) {
	sandboxtest.EndToEnd(t)
	e := newE2E(t,
		// The solve: a wrong fix, so the greeting check fails.
		call("read_file", `{"path":"greeting.txt"}`),
		call("edit", `{"edits":[{"path":"greeting.txt","old_text":"helo","new_text":"hullo"}]}`),
		call("finish", `{"summary":"Fixed the spelling in greeting.txt."}`),
		// The retry: the model finds nothing to change.
		call("finish", `{"summary":"The greeting is already right; nothing to change."}`),
		// The CI fix.
		call("write_file", `{"path":"CHANGELOG.md","content":"- Fixed the greeting.\n"}`),
		call("finish", `{"summary":"Added the changelog entry CI asked for."}`),
	)
	e.startWorker()
	if code := e.label(1, "delivery-state-label"); code != http.StatusAccepted {
		t.Fatalf("label: %d, want 202", code)
	}
	if info := e.waitTask("delivery-state-label", asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted {
		t.Fatalf("solve ended %s: %s", info.State, info.LastErr)
	}
	pr := e.fake.Pulls(owner, repoName)[0]
	head := e.remote.Head(t, owner, repoName, "agent/issue-1")
	e.statusLinks(t, "after the solve", pr)
	solveRequests := len(e.model.Requests())

	// The retry ends with no change: the body gains the attempt and keeps
	// every marker.
	if code := e.comment(pr.Number, true, "/agent retry", "delivery-state-retry"); code != http.StatusAccepted {
		t.Fatalf("retry: %d, want 202", code)
	}
	if info := e.waitTask("delivery-state-retry", asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted {
		t.Fatalf("retry ended %s: %s", info.State, info.LastErr)
	}
	prompt := promptText(t, e.model.Requests()[solveRequests].Body)
	if !strings.Contains(prompt, "Checks that failed after the previous attempt:\n- greeting") {
		t.Errorf("the retry's prompt does not name the check the solve failed:\n%s", prompt)
	}
	pr = e.fake.Pulls(owner, repoName)[0]
	if got := marker.ParsePushed(pr.Body); got != head {
		t.Fatalf("after a retry with no change the body records pushed %q, want %s:\n%s", got, head, pr.Body)
	}
	if _, _, ok := marker.ParseRun(pr.Body); !ok {
		t.Error("the run marker was lost")
	}
	if n := len(report.ParseHistory(pr.Body).Attempts); n != 2 {
		t.Errorf("history has %d attempts, want 2", n)
	}
	st := e.statusLinks(t, "after the retry with no change", pr)
	if strings.Contains(st, "did not open a pull request") || !strings.Contains(st, "stays open") {
		t.Errorf("status after a retry with no change:\n%s", st)
	}

	// CI fails on Patchwright's head: fixed.
	e.fake.AddForeignCheckRun(githubtest.CheckRun{Owner: owner, Repo: repoName, Name: "changelog", HeadSHA: head, App: "github-actions",
		Conclusion: "failure", Title: "changelog check failed", Log: actionsLog})
	if code := e.checkSuite(head, "failure", "delivery-state-ci"); code != http.StatusAccepted {
		t.Fatalf("red suite on Patchwright's head after the retry: %d, want 202", code)
	}
	if info := e.waitTask(tasks.CIFixID(issue1, head), asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted {
		t.Fatalf("CI fix ended %s: %s", info.State, info.LastErr)
	}
	newHead := e.remote.Head(t, owner, repoName, "agent/issue-1")
	pr = e.fake.Pulls(owner, repoName)[0]
	if newHead == head || marker.ParsePushed(pr.Body) != newHead {
		t.Fatalf("after the CI fix the branch is at %s (was %s), the body records %q", newHead, head, marker.ParsePushed(pr.Body))
	}
	e.statusLinks(t, "after the CI fix", pr)

	// Closed: the branch holds only Patchwright's push, so it goes.
	if code := e.closePR(pr, "delivery-state-close"); code != http.StatusAccepted {
		t.Fatalf("close: %d, want 202", code)
	}
	deadline := time.Now().Add(time.Minute)
	for e.remote.Head(t, owner, repoName, "agent/issue-1") != "" {
		if time.Now().After(deadline) {
			t.Fatal("the branch was never deleted")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if e.model.Remaining() != 0 {
		t.Errorf("%d scripted model turns unused", e.model.Remaining())
	}
}

// statusLinks fails unless the issue has one status comment and it links
// pr; it returns the comment.
func (e *e2e) statusLinks(t *testing.T, when string, pr githubtest.Pull) string {
	t.Helper()
	st := e.statusComments(1)
	if len(st) != 1 {
		t.Fatalf("%s: %d status comments, want 1", when, len(st))
	}
	if !strings.Contains(st[0].Body, fmt.Sprintf("/pull/%d", pr.Number)) {
		t.Errorf("%s: the status does not link pull request #%d:\n%s", when, pr.Number, st[0].Body)
	}
	return st[0].Body
}
