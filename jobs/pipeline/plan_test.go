package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent"
	pt "github.com/patchwright/patchwright/agent/provider/providertest"
)

// A planning run needs no sandbox (the executor has none here), offers
// only the read-only tools, refuses a write and a command the model asks
// for, and ends with the submitted plan; the repository is untouched.
func TestPlanIsReadOnly(t *testing.T) {
	repo := gitRepo(t, map[string]string{"greeting.txt": "helo\n"})
	srv := pt.New(t,
		call("edit", `{"edits":[{"path":"greeting.txt","old_text":"helo","new_text":"hello"}]}`),
		call("run", `{"command":"echo hi > x.txt"}`),
		call("read_file", `{"path":"greeting.txt"}`),
		call("submit_plan", `{"files":["greeting.txt"],"approach":"Fix the spelling.","verification":"grep -qx hello greeting.txt","risks":"None."}`),
	)
	e := &Executor{Provider: srv.OpenAI(t)}
	out := t.TempDir()
	res, err := e.Plan(context.Background(), Job{ID: "plan-test", RepoURL: repo, Issue: agent.Issue{Number: 1, Title: "Greeting is misspelled"}, OutDir: out})
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	if res.Stop != agent.Finished || !strings.Contains(res.Plan, "Fix the spelling.") || !strings.Contains(res.Plan, "greeting.txt") {
		t.Fatalf("plan result %+v", res)
	}
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d model requests, want 4", len(reqs))
	}
	if want := []string{"list_files", "read_file", "search", "submit_plan"}; !slices.Equal(reqs[0].Tools, want) {
		t.Errorf("tools offered %v, want %v", reqs[0].Tools, want)
	}
	for i, tool := range []string{"edit", "run"} {
		last := reqs[i+1].Messages[len(reqs[i+1].Messages)-1]
		got := ""
		for _, r := range last.ToolResults {
			got += r.Content
		}
		if !strings.Contains(got, `no tool named "`+tool+`"`) {
			t.Errorf("answer to %s: %q", tool, got)
		}
	}
	if got := gitIn(t, repo, "status", "--porcelain"); got != "" {
		t.Errorf("source repository changed: %q", got)
	}
	if b := gitIn(t, repo, "branch", "--format=%(refname:short)"); b != "main" {
		t.Errorf("branches after a plan: %q", b)
	}
	if _, err := os.Stat(filepath.Join(out, FileLedger)); err != nil {
		t.Errorf("no ledger: %v", err)
	}
}
