package githubjob_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/patchwright/patchwright/jobs/githubtest"
	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/patchwright/patchwright/report/marker"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// A workflow that passed on Patchwright's head fails when someone
// re-runs it (run_attempt 2, GitHub's workflow_run payload as it is sent
// for a re-run on the pull request): that failure is CI like any other,
// and one fix attempt runs on the pull request and pushes its fix.
func TestReRunFailureIsFixed(t *testing.T) {
	sandboxtest.EndToEnd(t)
	e := newE2E(t, append(fixGreeting(),
		call("write_file", `{"path":"CHANGELOG.md","content":"- Fixed the greeting.\n"}`),
		call("finish", `{"summary":"Added the changelog entry the re-run asked for."}`),
	)...)
	e.startWorker()
	if code := e.label(1, "delivery-rerun-label"); code != http.StatusAccepted {
		t.Fatalf("label: %d, want 202", code)
	}
	if info := e.waitTask("delivery-rerun-label", asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted {
		t.Fatalf("solve ended %s: %s", info.State, info.LastErr)
	}
	head := e.remote.Head(t, owner, repoName, "agent/issue-1")
	pr := e.fake.Pulls(owner, repoName)[0].Number

	e.fake.AddForeignCheckRun(githubtest.CheckRun{Owner: owner, Repo: repoName, Name: "changelog", HeadSHA: head, App: "github-actions",
		Conclusion: "failure", Title: "changelog check failed", Summary: "1 error", Log: actionsLog})
	code := e.deliver("workflow_run", "workflow_run.completed.with-pull-requests.json", "delivery-rerun-red", func(m map[string]any) {
		repo := m["repository"].(map[string]any)
		repo["owner"].(map[string]any)["login"], repo["name"] = owner, repoName
		run := m["workflow_run"].(map[string]any)
		run["head_branch"], run["head_sha"], run["conclusion"], run["event"] = "agent/issue-1", head, "failure", "pull_request"
		run["name"], run["run_attempt"] = "CI", 2
		run["head_repository"].(map[string]any)["id"] = repo["id"]
		p := run["pull_requests"].([]any)[0].(map[string]any)
		p["number"] = pr
		p["head"].(map[string]any)["ref"], p["head"].(map[string]any)["sha"] = "agent/issue-1", head
		p["head"].(map[string]any)["repo"].(map[string]any)["id"] = repo["id"]
		p["base"].(map[string]any)["repo"].(map[string]any)["id"] = repo["id"]
	})
	if code != http.StatusAccepted {
		t.Fatalf("a re-run's failure on Patchwright's head: %d, want 202", code)
	}
	if info := e.waitTask(tasks.CIFixID(issue1, head), asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted {
		t.Fatalf("CI fix ended %s: %s", info.State, info.LastErr)
	}
	fixed := e.remote.Head(t, owner, repoName, "agent/issue-1")
	if fixed == head {
		t.Fatal("the fix pushed nothing")
	}
	if got := githubtest.Git(t, e.remote.Dir(owner, repoName), "show", fixed+":CHANGELOG.md"); got != "- Fixed the greeting.\n" {
		t.Errorf("CHANGELOG.md after the fix: %q", got)
	}
	body := e.fake.Pulls(owner, repoName)[0].Body
	if marker.ParsePushed(body) != fixed || !strings.Contains(body, "CI failed on "+head[:7]+": changelog") {
		t.Errorf("the body's pushed marker %q (want %s) or history does not name the re-run's failure:\n%s", marker.ParsePushed(body), fixed, body)
	}
}
