package githubjob_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/patchwright/patchwright/jobs/githubtest"
	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/patchwright/patchwright/report/marker"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// actionsLog is a GitHub Actions job log in its real shape: a timestamp
// on every line, a "##[group]Run" line starting each step, "##[error]"
// in the failed one.
const actionsLog = "2026-01-01T00:00:01.0000000Z ##[group]Run actions/checkout@v4\n" +
	"2026-01-01T00:00:01.1000000Z Syncing repository: Codertocat/Hello-World\n" +
	"2026-01-01T00:00:02.0000000Z ##[endgroup]\n" +
	"2026-01-01T00:00:03.0000000Z ##[group]Run ./check-changelog.sh\n" +
	"2026-01-01T00:00:03.1000000Z ##[endgroup]\n" +
	"2026-01-01T00:00:03.2000000Z CHANGELOG.md is missing an entry for the greeting fix\n" +
	"2026-01-01T00:00:03.3000000Z ##[error]Process completed with exit code 1.\n" +
	"2026-01-01T00:00:04.0000000Z ##[group]Run actions/upload-artifact@v4\n" +
	"2026-01-01T00:00:04.1000000Z Uploaded 3 files\n"

// checkSuite delivers a completed check_suite of GitHub Actions on
// agent/issue-1 at head with conclusion, as GitHub sends it to the app.
func (e *e2e) checkSuite(head, conclusion, delivery string) int {
	return e.deliver("check_suite", "check_suite.completed.json", delivery, func(m map[string]any) {
		cs := m["check_suite"].(map[string]any)
		cs["head_branch"], cs["head_sha"], cs["conclusion"] = "agent/issue-1", head, conclusion
		cs["app"] = map[string]any{"id": 15368, "slug": "github-actions", "name": "GitHub Actions"}
		m["repository"].(map[string]any)["owner"].(map[string]any)["login"] = owner
		m["repository"].(map[string]any)["name"] = repoName
	})
}

// setCIFixAttempts commits ci_fix_attempts to the default branch's
// .github/agent.yml, as a maintainer would.
func (e *e2e) setCIFixAttempts(t *testing.T, n string) {
	work := t.TempDir()
	githubtest.Git(t, "", "clone", "-q", "-b", "master", e.remote.Dir(owner, repoName), work)
	cfg := "verify:\n  - name: greeting\n    run: grep -qx hello greeting.txt\nci_fix_attempts: " + n + "\n"
	if err := os.WriteFile(filepath.Join(work, ".github/agent.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	githubtest.Git(t, work, "commit", "-q", "-am", "ci_fix_attempts")
	githubtest.Git(t, work, "push", "-q", "origin", "master")
}

// A writer's `/agent note` during the first run reaches the model at its
// next step (checkNote). Then the repository's own CI fails on the head Patchwright pushed: one fix
// attempt runs on the same pull request with the failing step's log and
// the annotations in the model's context, and the history and status say
// what CI reported. Its own check runs, a success, and a second delivery
// for the same head start nothing; CI failing again past ci_fix_attempts
// starts no attempt and the status says why; a head a person pushed is
// never "fixed".
func TestCIFailureStartsOneFixAttempt(t *testing.T) {
	sandboxtest.EndToEnd(t)
	e := newE2E(t, append(fixGreeting(),
		// The CI fix: adds the changelog entry CI asked for.
		call("write_file", `{"path":"CHANGELOG.md","content":"- Fixed the greeting.\n"}`),
		call("finish", `{"summary":"Added the changelog entry CI asked for."}`),
	)...)
	e.setCIFixAttempts(t, "1")
	codes := make(chan int, 1)
	e.gate.before = func(n int) {
		if n == 2 {
			// The loop has sent its second request: the note arrives
			// during that turn and must be in the third.
			codes <- e.comment(1, false, "/agent note keep the file's trailing newline", "delivery-note-1")
		}
	}
	e.startWorker()
	if code := e.label(1, "delivery-ci-label"); code != http.StatusAccepted {
		t.Fatalf("label: %d, want 202", code)
	}
	if info := e.waitTask("delivery-ci-label", asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted {
		t.Fatalf("solve ended %s: %s", info.State, info.LastErr)
	}
	head := e.remote.Head(t, owner, repoName, "agent/issue-1")
	solveRequests := len(e.model.Requests())
	checkNote(t, e, <-codes)

	// Nothing to do: a success, and Patchwright's own (failed) suite.
	if code := e.checkSuite(head, "success", "delivery-ci-green"); code != http.StatusOK {
		t.Errorf("green suite: %d, want 200", code)
	}
	if code := e.deliver("check_suite", "check_suite.completed.json", "delivery-ci-own", func(m map[string]any) {
		cs := m["check_suite"].(map[string]any)
		cs["head_branch"], cs["head_sha"], cs["conclusion"] = "agent/issue-1", head, "failure"
		cs["app"] = map[string]any{"id": githubtest.AppID, "slug": githubtest.AppSlug}
		m["repository"].(map[string]any)["owner"].(map[string]any)["login"] = owner
		m["repository"].(map[string]any)["name"] = repoName
	}); code != http.StatusOK {
		t.Errorf("Patchwright's own failed suite: %d, want 200", code)
	}

	// CI fails on Patchwright's head.
	e.fake.AddForeignCheckRun(githubtest.CheckRun{Owner: owner, Repo: repoName, Name: "changelog", HeadSHA: head, App: "github-actions",
		Conclusion: "failure", Title: "changelog check failed", Summary: "1 error",
		AnnotationList: []githubtest.Annotation{{Path: "CHANGELOG.md", Line: 1, Level: "failure", Message: "no entry for #1"}},
		Log:            actionsLog})
	if code := e.checkSuite(head, "failure", "delivery-ci-red"); code != http.StatusAccepted {
		t.Fatalf("red suite on Patchwright's head: %d, want 202", code)
	}
	// The same failure again, as a check_run: the same task, not a second.
	if code := e.deliver("check_run", "check_run.completed.json", "delivery-ci-red-run", func(m map[string]any) {
		cr := m["check_run"].(map[string]any)
		cr["head_sha"], cr["conclusion"], cr["name"] = head, "failure", "changelog"
		cr["check_suite"].(map[string]any)["head_branch"] = "agent/issue-1"
		cr["app"] = map[string]any{"id": 15368, "slug": "github-actions"}
		m["repository"].(map[string]any)["owner"].(map[string]any)["login"] = owner
		m["repository"].(map[string]any)["name"] = repoName
	}); code != http.StatusOK {
		t.Errorf("the same failure as a check_run: %d, want 200 (one attempt per head)", code)
	}
	fixID := tasks.CIFixID(issue1, head)
	if info := e.waitTask(fixID, asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted {
		t.Fatalf("CI fix ended %s: %s", info.State, info.LastErr)
	}
	reqs := e.model.Requests()
	if len(reqs) != solveRequests+2 {
		t.Fatalf("%d model requests, want %d: one CI fix of two turns", len(reqs), solveRequests+2)
	}
	first := promptText(t, reqs[solveRequests].Body)
	for _, want := range []string{"CI failed", "changelog", "CHANGELOG.md is missing an entry", "##[error]Process completed with exit code 1.",
		"CHANGELOG.md:1: failure: no entry for #1", "changelog check failed"} {
		if !strings.Contains(first, want) {
			t.Errorf("the CI fix's prompt lacks %q:\n%s", want, first)
		}
	}
	for _, unwanted := range []string{"Syncing repository", "Uploaded 3 files", "2026-01-01T00:00:03"} {
		if strings.Contains(first, unwanted) {
			t.Errorf("the prompt holds %q, outside the failing step", unwanted)
		}
	}
	pulls := e.fake.Pulls(owner, repoName)
	newHead := e.remote.Head(t, owner, repoName, "agent/issue-1")
	if len(pulls) != 1 || newHead == head || marker.ParsePushed(pulls[0].Body) != newHead {
		t.Fatalf("after the fix: %d pull requests, head %s (was %s)", len(pulls), newHead, head)
	}
	if !strings.Contains(pulls[0].Body, "CI failed on "+head[:7]) || !strings.Contains(pulls[0].Body, "changelog (github-actions): failure") {
		t.Errorf("the body's history does not say what CI reported:\n%s", pulls[0].Body)
	}
	st := e.statusComments(1)
	if len(st) != 1 || !strings.Contains(st[0].Body, "CI failed on "+head[:7]) || !strings.Contains(st[0].Body, "/pull/") {
		t.Errorf("status comments: %+v", st)
	}

	// CI fails again on the fix's head: ci_fix_attempts 1 is spent.
	e.fake.AddForeignCheckRun(githubtest.CheckRun{Owner: owner, Repo: repoName, Name: "changelog", HeadSHA: newHead, App: "github-actions",
		Conclusion: "failure", Title: "still failing", Log: actionsLog})
	if code := e.checkSuite(newHead, "failure", "delivery-ci-red-2"); code != http.StatusAccepted {
		t.Fatalf("red suite on the fix's head: %d, want 202", code)
	}
	if info := e.waitTask(tasks.CIFixID(issue1, newHead), asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateArchived {
		t.Fatalf("the CI fix past the limit ended %s, want archived (refused)", info.State)
	}
	if n := len(e.model.Requests()); n != solveRequests+2 {
		t.Errorf("%d model requests after the limit, want %d: no attempt past ci_fix_attempts", n, solveRequests+2)
	}
	if st := e.waitComment(1, "automatic fix attempts"); len(st) != 1 || !strings.Contains(st[0].Body, "/agent retry") {
		t.Errorf("status after the limit: %+v", st)
	}

	// A person pushes; CI fails on their head: nothing is enqueued.
	work := t.TempDir()
	githubtest.Git(t, "", "clone", "-q", "-b", "agent/issue-1", e.remote.Dir(owner, repoName), work)
	if err := os.WriteFile(filepath.Join(work, "HUMAN.md"), []byte("by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	githubtest.Git(t, work, "add", "HUMAN.md")
	githubtest.Git(t, work, "commit", "-q", "-m", "by hand")
	githubtest.Git(t, work, "push", "-q", "origin", "agent/issue-1")
	human := e.remote.Head(t, owner, repoName, "agent/issue-1")
	if code := e.checkSuite(human, "failure", "delivery-ci-human"); code != http.StatusOK {
		t.Errorf("red suite on a person's head: %d, want 200", code)
	}
	if _, err := e.insp.GetTaskInfo(tasks.QueueAgent, tasks.CIFixID(issue1, human)); err == nil {
		t.Error("a CI fix was enqueued for a head a person pushed")
	}
}

// promptText is the text of every message of an OpenAI request.
func promptText(t *testing.T, body []byte) string {
	t.Helper()
	var req struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, m := range req.Messages {
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			b.WriteString(s + "\n")
			continue
		}
		b.Write(m.Content)
		b.WriteString("\n")
	}
	return b.String()
}

// checkNote checks that the `/agent note` (answered code) sent during the
// second model turn of the solve is in the third request, not the
// second, and in the run's ledger as a user_message; and that a note with
// nothing running is stored nowhere.
func checkNote(t *testing.T, e *e2e, code int) {
	t.Helper()
	if code != http.StatusOK {
		t.Errorf("/agent note during the run: %d, want 200", code)
	}
	reqs := e.model.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	const note = "keep the file's trailing newline"
	if strings.Contains(promptText(t, reqs[1].Body), note) || !strings.Contains(promptText(t, reqs[2].Body), note) {
		t.Errorf("the note is not in exactly the request after it arrived:\nsecond: %s\nthird: %s", reqs[1].Body, reqs[2].Body)
	}
	logs, _ := filepath.Glob(filepath.Join(e.pipe.DataDir, "runs", "*", "ledger.jsonl"))
	found := false
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			t.Fatal(err)
		}
		found = found || (strings.Contains(string(b), `"user_message"`) && strings.Contains(string(b), note))
	}
	if !found {
		t.Errorf("no ledger of %v records the note as a user_message", logs)
	}
	if code := e.comment(1, false, "/agent note too late", "delivery-note-2"); code != http.StatusOK {
		t.Errorf("/agent note with nothing running: %d, want 200", code)
	}
	if n, err := e.queue.TakeNotes(context.Background(), issue1); err != nil || len(n) != 0 {
		t.Errorf("a note with nothing running was stored: %v, %v", n, err)
	}
}
