package githubjob_test

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/patchwright/patchwright/jobs/githubjob"
	"github.com/patchwright/patchwright/jobs/githubtest"
	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// reviewAs submits a review of pr by login on GitHub (the fake records it
// on the head as it is now) and delivers its pull_request_review event.
func (e *e2e) reviewAs(pr githubtest.Pull, login, state, delivery string) int {
	e.fake.AddReview(owner, repoName, pr.Number, login, state, "")
	return e.deliver("pull_request_review", "pull_request_review.submitted.json", delivery, func(m map[string]any) {
		r := m["review"].(map[string]any)
		r["state"], r["body"] = state, ""
		r["user"] = map[string]any{"login": login, "type": "User"}
		m["sender"] = map[string]any{"login": login, "type": "User"}
		p := m["pull_request"].(map[string]any)
		p["number"], p["state"], p["body"] = pr.Number, "open", pr.Body
		p["user"] = map[string]any{"login": githubtest.BotLogin, "type": "Bot"}
		hd := p["head"].(map[string]any)
		hd["ref"] = pr.Head
		hd["repo"].(map[string]any)["full_name"] = owner + "/" + repoName
	})
}

// synchronize delivers pull_request.synchronize for pr at head.
func (e *e2e) synchronize(pr githubtest.Pull, head, delivery string) int {
	return e.deliver("pull_request", "pull_request.closed.json", delivery, func(m map[string]any) {
		m["action"] = "synchronize"
		p := m["pull_request"].(map[string]any)
		p["number"], p["state"], p["merged"], p["body"] = pr.Number, "open", false, pr.Body
		p["user"] = map[string]any{"login": githubtest.BotLogin, "type": "Bot"}
		hd := p["head"].(map[string]any)
		hd["ref"], hd["sha"] = pr.Head, head
		hd["repo"].(map[string]any)["full_name"] = owner + "/" + repoName
	})
}

// waitApproval waits for the approval task of delivery to complete.
func (e *e2e) waitApproval(delivery string) {
	e.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		info, err := e.insp.GetTaskInfo(tasks.QueueReplies, "approval:"+delivery)
		if err == nil && info.State == asynq.TaskStateCompleted {
			return
		}
		if err == nil && info.State == asynq.TaskStateArchived || time.Now().After(deadline) {
			e.t.Fatalf("approval task of %s: %+v, %v", delivery, info, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// approvalOn is the newest approval check run on sha.
func (e *e2e) approvalOn(sha string) githubtest.CheckRun {
	var last githubtest.CheckRun
	for _, c := range e.fake.CheckRuns(owner, repoName, sha) {
		if c.Name == githubjob.ApprovalCheck && c.ID > last.ID {
			last = c
		}
	}
	return last
}

// `approval: independent`: the pull request opens with its approval check
// pending; the requester's approval leaves it pending, another writer's
// passes it, a push makes the new head pending again, and a reader's
// approval of the new head is ignored. A repository without the key gets
// no check: TestGitHubEndToEnd counts one check run on its head.
func TestIndependentApproval(t *testing.T) {
	sandboxtest.EndToEnd(t)
	e := newE2E(t, fixGreeting()...)
	e.fake.SetPermission(owner, repoName, "maintainer", "write")
	e.fake.SetPermission(owner, repoName, "reader", "read")
	e.pushMaster(t, "approval", map[string]string{".github/agent.yml": "verify:\n  - name: greeting\n    run: grep -qx hello greeting.txt\n" +
		"approval: independent\n"})
	e.startWorker()
	if code := e.label(1, "delivery-approval-label"); code != http.StatusAccepted {
		t.Fatalf("label: %d, want 202", code)
	}
	if info := e.waitTask("delivery-approval-label", asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted {
		t.Fatalf("solve ended %s: %s", info.State, info.LastErr)
	}
	head := e.remote.Head(t, owner, repoName, "agent/issue-1")
	pr := e.fake.Pulls(owner, repoName)[0]
	if c := e.approvalOn(head); c.ID == 0 || c.Status != "in_progress" || c.Conclusion != "" {
		t.Fatalf("approval check on the new pull request: %+v, want pending", c)
	}

	// The labeller (an admin) approves: it is their own request.
	if code := e.reviewAs(pr, owner, "approved", "d-approve-requester"); code != http.StatusAccepted {
		t.Fatalf("requester's review: %d, want 202", code)
	}
	e.waitApproval("d-approve-requester")
	if c := e.approvalOn(head); c.Status != "in_progress" {
		t.Errorf("after the requester's approval: %+v, want still pending", c)
	}

	// Another writer approves: passed.
	if code := e.reviewAs(pr, "maintainer", "approved", "d-approve-writer"); code != http.StatusAccepted {
		t.Fatalf("writer's review: %d, want 202", code)
	}
	e.waitApproval("d-approve-writer")
	if c := e.approvalOn(head); c.Conclusion != "success" || c.Title != "Approved by @maintainer" {
		t.Errorf("after another writer's approval: %+v, want success", c)
	}
	// The same delivery again changes nothing.
	writes := e.approvalOn(head).Writes
	if code := e.reviewAs(pr, "maintainer", "approved", "d-approve-writer"); code != http.StatusOK {
		t.Errorf("redelivered review: %d, want 200", code)
	}

	// Someone pushes: the new head waits for its own approval.
	work := t.TempDir()
	githubtest.Git(t, "", "clone", "-q", "-b", "agent/issue-1", e.remote.Dir(owner, repoName), work)
	if err := os.WriteFile(filepath.Join(work, "greeting.txt"), []byte("hello\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	githubtest.Git(t, work, "commit", "-q", "-am", "a blank line")
	githubtest.Git(t, work, "push", "-q", "origin", "agent/issue-1")
	pushed := e.remote.Head(t, owner, repoName, "agent/issue-1")
	if code := e.synchronize(pr, pushed, "d-sync"); code != http.StatusAccepted {
		t.Fatalf("synchronize: %d, want 202", code)
	}
	e.waitApproval("d-sync")
	if c := e.approvalOn(pushed); c.ID == 0 || c.Status != "in_progress" {
		t.Errorf("after a push: %+v, want pending on %s", c, pushed)
	}
	if c := e.approvalOn(head); c.Conclusion != "success" || c.Writes != writes {
		t.Errorf("the old head's check changed: %+v", c)
	}

	// A reader's approval of the new head counts for nothing.
	if code := e.reviewAs(pr, "reader", "approved", "d-approve-reader"); code != http.StatusAccepted {
		t.Fatalf("reader's review: %d, want 202", code)
	}
	e.waitApproval("d-approve-reader")
	if c := e.approvalOn(pushed); c.Status != "in_progress" {
		t.Errorf("after a reader's approval: %+v, want pending", c)
	}
}
