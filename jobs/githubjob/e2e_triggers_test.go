package githubjob_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/patchwright/patchwright/agent/config"
	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/githubtest"
	"github.com/patchwright/patchwright/jobs/schedule"
	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// assign delivers issues.assigned of issue to the app, by the repository's
// admin: the labeled fixture as GitHub reshapes it for an assignment.
func (e *e2e) assign(issue int, delivery string) int {
	return e.deliver("issues", "issues.labeled.json", delivery, func(m map[string]any) {
		m["action"] = "assigned"
		delete(m, "label")
		m["assignee"] = map[string]any{"login": githubtest.BotLogin, "id": 9001, "type": "Bot"}
		e.issueText(m["issue"].(map[string]any), issue)
	})
}

// Assigning the issue to the app runs it through the worker as the label
// does, to a pull request; the attempt says it was assigned.
func TestAssignmentRunsThroughTheWorker(t *testing.T) {
	sandboxtest.EndToEnd(t)
	e := newE2E(t, fixGreeting()...)
	e.startWorker()
	if code := e.assign(1, "delivery-assign"); code != http.StatusAccepted {
		t.Fatalf("assignment: %d, want 202", code)
	}
	if code := e.label(1, "delivery-assign-label"); code != http.StatusOK {
		t.Fatalf("the label on the assigned issue: %d, want 200 (one run)", code)
	}
	if info := e.waitTask("delivery-assign", asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted {
		t.Fatalf("solve ended %s: %s", info.State, info.LastErr)
	}
	pulls := e.fake.Pulls(owner, repoName)
	if len(pulls) != 1 || pulls[0].Head != "agent/issue-1" || !strings.Contains(pulls[0].Body, "assigned to the app") {
		t.Fatalf("pull requests %+v, want one whose history says it was assigned", pulls)
	}
	for _, c := range e.fake.Comments(owner, repoName, 1) {
		if strings.Contains(c.Body, "already working") {
			t.Errorf("the label was answered as busy: %q", c.Body)
		}
	}
}

// A schedule of the default branch's agent.yml opens its tracking issue
// and the worker runs it to a pull request; the next period, with that
// pull request open, is skipped and said on the issue.
func TestScheduleRunsThroughTheWorker(t *testing.T) {
	sandboxtest.EndToEnd(t)
	e := newE2E(t, fixGreeting()...)
	e.addRepo(func(r *githubtest.Repo) {
		r.Installation = e2eInst
		r.Files = map[string]string{config.Path: "verify:\n  - name: greeting\n    run: grep -qx hello greeting.txt\n" +
			"schedules:\n  - cron: \"0 6 * * 1\"\n    title: Check the greeting\n    body: greeting.txt must say hello.\n"}
	})
	e.startWorker()
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	sc := &schedule.Scanner{GitHub: e.app, Queue: e.queue, Redis: e.rdb, Logger: e.log, Now: func() time.Time { return now }}
	out, err := sc.Scan(context.Background())
	if err != nil || len(out) != 1 || !out[0].Started {
		t.Fatalf("scan = %+v, %v; want one run started", out, err)
	}
	n := out[0].Issue
	if again, _ := sc.Scan(context.Background()); len(again) != 0 {
		t.Fatalf("a second scan in the period = %+v", again)
	}
	id := e.onlyAgentTask()
	if info := e.waitTask(id, asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted {
		t.Fatalf("the scheduled run ended %s: %s", info.State, info.LastErr)
	}
	pulls := e.fake.Pulls(owner, repoName)
	if len(pulls) != 1 || pulls[0].Head != jobs.AgentBranch(n) {
		t.Fatalf("pull requests %+v, want one from %s", pulls, jobs.AgentBranch(n))
	}
	now = now.Add(7 * 24 * time.Hour)
	if out, err := sc.Scan(context.Background()); err != nil || len(out) != 1 || !out[0].Skipped {
		t.Fatalf("scan with the pull request open = %+v, %v; want skipped", out, err)
	}
	said := false
	for _, c := range e.fake.Comments(owner, repoName, n) {
		said = said || strings.Contains(c.Body, "was skipped")
	}
	if !said {
		t.Errorf("issue #%d was not told the period was skipped: %+v", n, e.fake.Comments(owner, repoName, n))
	}
}

// onlyAgentTask is the ID of the one agent task, in whatever state.
func (e *e2e) onlyAgentTask() string {
	e.t.Helper()
	var ids []string
	for _, list := range []func(string, ...asynq.ListOption) ([]*asynq.TaskInfo, error){
		e.insp.ListPendingTasks, e.insp.ListActiveTasks, e.insp.ListRetryTasks, e.insp.ListCompletedTasks, e.insp.ListArchivedTasks,
	} {
		tasks, err := list(tasks.QueueAgent)
		if err != nil {
			e.t.Fatal(err)
		}
		for _, ti := range tasks {
			ids = append(ids, ti.ID)
		}
	}
	if len(ids) != 1 || !strings.HasPrefix(ids[0], "schedule-") {
		e.t.Fatalf("agent tasks %v, want one scheduled run", ids)
	}
	return ids[0]
}

// A maintainer's mention of the app on an issue nobody labelled runs it
// through the worker with the instruction in the task; a stranger's
// starts nothing.
func TestMentionRunsThroughTheWorker(t *testing.T) {
	sandboxtest.EndToEnd(t)
	e := newE2E(t, fixGreeting()...)
	e.fake.SetPermission(owner, repoName, "stranger", "read")
	e.startWorker()
	mention := func(sender, body, delivery string) int {
		return e.deliver("issue_comment", "issue_comment.created.with-installation.json", delivery, func(m map[string]any) {
			is := m["issue"].(map[string]any)
			e.issueText(is, 1)
			is["state"], is["labels"] = "open", []any{}
			m["comment"].(map[string]any)["body"] = body
			m["sender"] = map[string]any{"login": sender, "type": "User"}
		})
	}
	if code := mention("stranger", "@"+githubtest.AppSlug+" delete every test", "delivery-mention-stranger"); code != http.StatusOK {
		t.Fatalf("a stranger's mention: %d, want 200", code)
	}
	if code := mention(owner, "@"+githubtest.AppSlug+" keep the trailing newline", "delivery-mention"); code != http.StatusAccepted {
		t.Fatalf("a maintainer's mention: %d, want 202", code)
	}
	if info := e.waitTask("delivery-mention", asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted {
		t.Fatalf("solve ended %s: %s", info.State, info.LastErr)
	}
	reqs := e.model.Requests()
	if len(reqs) == 0 || !strings.Contains(string(reqs[0].Body), "keep the trailing newline") || strings.Contains(string(reqs[0].Body), "delete every test") {
		t.Fatalf("the model's first request lacks the maintainer's instruction, or has the stranger's")
	}
	if pulls := e.fake.Pulls(owner, repoName); len(pulls) != 1 {
		t.Fatalf("pull requests %+v, want one", pulls)
	}
	if _, err := e.insp.GetTaskInfo(tasks.QueueAgent, "delivery-mention-stranger"); err == nil {
		t.Error("the stranger's mention was enqueued")
	}
}

// An issue filed through the repository's form reaches the model field by
// field, with the form's labels and without the empty fields.
func TestIssueFormReachesTheModel(t *testing.T) {
	sandboxtest.EndToEnd(t)
	e := newE2E(t, fixGreeting()...)
	e.remote.Create(t, owner, "Forms", "master", map[string]string{
		"greeting.txt":      "helo\n",
		".github/agent.yml": "verify:\n  - name: greeting\n    run: grep -qx hello greeting.txt\n",
		".github/ISSUE_TEMPLATE/bug.yml": "name: Bug\ndescription: A bug.\nbody:\n  - type: textarea\n    attributes:\n      label: What happened?\n" +
			"  - type: input\n    attributes:\n      label: Version\n",
	})
	e.fake.AddRepo(githubtest.Repo{Owner: owner, Name: "Forms", DefaultBranch: "master", CloneURL: e.remote.CloneURL(owner, "Forms"),
		Heads: func(b string) string { return e.remote.Head(t, owner, "Forms", b) }})
	body := "### What happened?\n\ngreeting.txt says helo.\n\n### Version\n\n_No response_"
	e.fake.AddIssue(githubtest.Issue{Owner: owner, Repo: "Forms", Number: 1, Title: "Greeting", Body: body, Author: owner})
	e.fake.SetPermission(owner, "Forms", owner, "admin")
	e.startWorker()
	code := e.deliver("issues", "issues.labeled.json", "delivery-form", func(m map[string]any) {
		m["label"].(map[string]any)["name"] = "agent"
		m["repository"].(map[string]any)["name"] = "Forms"
		is := m["issue"].(map[string]any)
		is["number"], is["title"], is["body"] = 1, "Greeting", body
	})
	if code != http.StatusAccepted {
		t.Fatalf("label: %d, want 202", code)
	}
	if info := e.waitTask("delivery-form", asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted {
		t.Fatalf("solve ended %s: %s", info.State, info.LastErr)
	}
	reqs := e.model.Requests()
	if len(reqs) == 0 {
		t.Fatal("the model was never asked")
	}
	first := string(reqs[0].Body)
	if !strings.Contains(first, `\u003cfield label=\"What happened?\"\u003e\ngreeting.txt says helo.`) && !strings.Contains(first, `<field label=\"What happened?\">\ngreeting.txt says helo.`) {
		t.Errorf("the first request lacks the labelled field: %s", first)
	}
	if strings.Contains(first, "No response") || strings.Contains(first, "### Version") {
		t.Errorf("the first request keeps the empty field: %s", first)
	}
}
