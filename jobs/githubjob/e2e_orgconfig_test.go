package githubjob_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/patchwright/patchwright/agent/config"
	"github.com/patchwright/patchwright/jobs/githubtest"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// TestOrgDefaultAndPolicy is issue 45's organisation default and policy
// through the whole label-to-pull-request path: the owner's `.github`
// repository holds a default .github/agent.yml, read through the app's
// installation client from its default branch; the repository's own
// file wins key by key (its verify runs, so the fix is verified), the
// default fills the rest (draft: always makes a verified pull request a
// draft), and the operator's policy takes back the default's
// network: open, which the body's Configuration line says.
func TestOrgDefaultAndPolicy(t *testing.T) {
	sandboxtest.EndToEnd(t)
	e := newE2E(t,
		call("read_file", `{"path":"greeting.txt"}`),
		call("edit", `{"edits":[{"path":"greeting.txt","old_text":"helo","new_text":"hello"}]}`),
		call("finish", `{"summary":"Fixed the spelling."}`),
	)
	e.remote.Create(t, owner, ".github", "main", map[string]string{
		".github/agent.yml": "draft: always\nnetwork: open\nverify:\n  - name: never\n    run: exit 1\n",
	})
	e.fake.AddRepo(githubtest.Repo{Owner: owner, Name: ".github", DefaultBranch: "main",
		File: func(ref, p string) ([]byte, bool) { return e.remote.File(t, owner, ".github", ref, p) }})
	e.pipe.Policy = &config.PolicyFile{Defaults: config.Policy{OpenNetwork: new(bool)}}
	e.startWorker()
	if code := e.label(1, "delivery-org-1"); code != http.StatusAccepted {
		t.Fatalf("label: %d, want 202", code)
	}
	if info := e.waitTask("delivery-org-1", asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted {
		t.Fatalf("solve task ended %s: %s", info.State, info.LastErr)
	}
	pulls := e.fake.Pulls(owner, repoName)
	if len(pulls) != 1 {
		t.Fatalf("pull requests: %+v, want one", pulls)
	}
	body := pulls[0].Body
	if !strings.Contains(body, "**Outcome: verified**") || !strings.Contains(body, "| `greeting` |") || strings.Contains(body, "| `never` |") {
		t.Errorf("the repository's verify did not win over the organisation's:\n%s", body)
	}
	if !pulls[0].Draft {
		t.Error("the organisation's draft: always did not apply: the pull request is not a draft")
	}
	want := "Configuration: the operator's policy (defaults) applied; it tightened `.github/agent.yml`: `network: open` is not allowed; the allowlist applies."
	if !strings.Contains(body, want) {
		t.Errorf("no Configuration line %q:\n%s", want, body)
	}
	var asked bool
	for _, r := range e.fake.Requests() {
		asked = asked || r.Path == "/repos/"+owner+"/.github/contents/.github/agent.yml" && r.Status == http.StatusOK
	}
	if !asked {
		t.Error("the organisation's default was not read through the contents API")
	}
}

// TestPolicyWithoutPullRequests: under a policy with pull_requests:
// false the fix is pushed to its branch and reported on the issue, and
// no pull request is opened.
func TestPolicyWithoutPullRequests(t *testing.T) {
	sandboxtest.EndToEnd(t)
	e := newE2E(t,
		call("read_file", `{"path":"greeting.txt"}`),
		call("edit", `{"edits":[{"path":"greeting.txt","old_text":"helo","new_text":"hello"}]}`),
		call("finish", `{"summary":"Fixed the spelling."}`),
	)
	e.pipe.Policy = &config.PolicyFile{Installations: map[int64]config.Policy{e2eInst: {PullRequests: new(bool)}}}
	e.startWorker()
	if code := e.label(1, "delivery-nopr-1"); code != http.StatusAccepted {
		t.Fatalf("label: %d, want 202", code)
	}
	if info := e.waitTask("delivery-nopr-1", asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted {
		t.Fatalf("solve task ended %s: %s", info.State, info.LastErr)
	}
	if pulls := e.fake.Pulls(owner, repoName); len(pulls) != 0 {
		t.Errorf("pull requests: %+v, want none", pulls)
	}
	if head := e.remote.Head(t, owner, repoName, "agent/issue-1"); head == "" {
		t.Error("the change was not pushed to agent/issue-1")
	} else if got, ok := e.remote.File(t, owner, repoName, head, "greeting.txt"); !ok || string(got) != "hello\n" {
		t.Errorf("agent/issue-1 holds greeting.txt %q", got)
	}
	st := e.waitComment(1, "The operator's policy allows no pull requests")
	body := st[len(st)-1].Body
	for _, want := range []string{"`agent/issue-1`", "**Outcome: verified**",
		"Configuration: the operator's policy (installation " + strconv.FormatInt(e2eInst, 10) + ") applied; it tightened `.github/agent.yml`: pull requests are not allowed"} {
		if !strings.Contains(body, want) {
			t.Errorf("the issue's report does not say %q:\n%s", want, body)
		}
	}
}
