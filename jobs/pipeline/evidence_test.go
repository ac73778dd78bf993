package pipeline

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/sandbox/sandboxtest"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/provider"
	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/verify"
)

// TestPipelineProtectedPathsDropped: a command (which no file-tool check
// binds) rewrites .github/agent.yml and adds a workflow; both changes are
// left out of the commit, each with a protected_path finding, while the
// real fix is committed.
func TestPipelineProtectedPathsDropped(t *testing.T) {
	files := calcFiles(true)
	files[".github/agent.yml"] = cheapConfig
	repo := gitRepo(t, files)
	res, out, _ := scenario{
		repo:  repo,
		issue: agent.Issue{Title: "Add is wrong", Body: "Add subtracts."},
		wire:  provider.NameOpenAI,
		turns: []pt.Turn{
			call("run", `{"command":"mkdir -p .github/workflows && echo 'on: push' > .github/workflows/x.yml && echo 'verify: [{name: t, run: \"true\"}]' > .github/agent.yml"}`),
			call("read_file", `{"path":"calc.go"}`),
			call("edit", `{"edits":[{"path":"calc.go","old_text":"return a - b","new_text":"return a + b"}]}`),
			call("finish", `{"summary":"Fixed Add."}`),
		},
	}.run(t)
	if res.HeadCommit == "" {
		t.Fatalf("nothing committed: %s (%s)", res.Outcome, res.Reason)
	}
	if got := strings.Join(res.FilesChanged, ","); got != "calc.go" {
		t.Errorf("files changed = %q, want only calc.go", got)
	}
	protected := map[string]bool{}
	for _, f := range res.Findings {
		if f.Kind == KindProtectedPath {
			protected[f.Path] = true
		}
	}
	if !protected[".github/agent.yml"] || !protected[".github/workflows/x.yml"] {
		t.Errorf("findings = %+v, want protected_path for agent.yml and the workflow\n%s", res.Findings, readLedger(t, out))
	}
	if show := gitIn(t, repo, "show", res.HeadCommit+":.github/agent.yml"); show != strings.TrimSpace(cheapConfig) {
		t.Errorf("committed agent.yml = %q, want the base's", show)
	}
	if body := readBody(t, out); !strings.Contains(body, "left out of the commit") {
		t.Errorf("pr.md does not say the protected changes were dropped:\n%s", body)
	}
	readResult(t, out)
}

func readLedger(t *testing.T, out string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(out, FileLedger))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestPipelineLargeFileLeftOut: a 1 GiB sparse file made with a command is
// left out of the commit with a large_file finding; the fix is committed.
func TestPipelineLargeFileLeftOut(t *testing.T) {
	files := calcFiles(true)
	files[".github/agent.yml"] = cheapConfig
	repo := gitRepo(t, files)
	res, out, _ := scenario{
		repo:  repo,
		issue: agent.Issue{Title: "Add is wrong", Body: "Add subtracts."},
		wire:  provider.NameOpenAI,
		turns: []pt.Turn{
			call("run", `{"command":"truncate -s 1G data.bin"}`),
			call("read_file", `{"path":"calc.go"}`),
			call("edit", `{"edits":[{"path":"calc.go","old_text":"return a - b","new_text":"return a + b"}]}`),
			call("finish", `{"summary":"Fixed Add."}`),
		},
	}.run(t)
	if got := strings.Join(res.FilesChanged, ","); got != "calc.go" || res.HeadCommit == "" {
		t.Fatalf("files changed %q, head %q: want calc.go committed alone", got, res.HeadCommit)
	}
	found := false
	for _, f := range res.Findings {
		found = found || (f.Kind == KindLargeFile && f.Path == "data.bin")
	}
	if !found {
		t.Errorf("findings = %+v, want large_file for data.bin", res.Findings)
	}
	readResult(t, out)
}

// TestVerifyToolTellsFindings: the model deletes the failing test and
// calls verify; the tool's result names the finding, so the model hears it
// before it finishes, and the outcome is not verified.
func TestVerifyToolTellsFindings(t *testing.T) {
	sandboxtest.EndToEnd(t)
	repo := gitRepo(t, calcFiles(true))
	res, _, srv := scenario{
		repo:  repo,
		issue: agent.Issue{Title: "Add is wrong", Body: "Add returns the wrong result."},
		wire:  provider.NameOpenAI,
		turns: []pt.Turn{
			call("delete_file", `{"path":"calc_test.go"}`),
			call("verify", `{}`),
			call("finish", `{"summary":"Fixed."}`),
		},
	}.run(t)
	reqs := srv.Requests()
	last := string(reqs[len(reqs)-1].Body)
	if !strings.Contains(last, "findings") || !strings.Contains(last, "calc_test.go") {
		t.Errorf("the model did not hear of the finding; last request:\n%s", last)
	}
	if res.Outcome == "verified" {
		t.Errorf("outcome verified with the only test deleted (%s)", res.Reason)
	}
}

// TestPipelineShallowRepository: `patchwright run` on a repository that is
// itself a shallow clone clones it at depth 1, commits and pushes the
// branch back.
func TestPipelineShallowRepository(t *testing.T) {
	files := calcFiles(true)
	files[".github/agent.yml"] = cheapConfig
	full := gitRepo(t, files)
	gitIn(t, full, "commit", "--allow-empty", "-q", "-m", "second")
	shallow := filepath.Join(t.TempDir(), "shallow")
	gitIn(t, full, "clone", "-q", "--depth", "1", "file://"+full, shallow)
	if got := gitIn(t, shallow, "rev-parse", "--is-shallow-repository"); got != "true" {
		t.Fatalf("setup: %s is not shallow (%s)", shallow, got)
	}
	res, _, _ := scenario{
		repo:  shallow,
		issue: agent.Issue{Title: "Add is wrong", Body: "Add subtracts."},
		wire:  provider.NameOpenAI,
		turns: []pt.Turn{
			call("read_file", `{"path":"calc.go"}`),
			call("edit", `{"edits":[{"path":"calc.go","old_text":"return a - b","new_text":"return a + b"}]}`),
			call("finish", `{"summary":"Fixed Add."}`),
		},
	}.run(t)
	if res.HeadCommit == "" || gitIn(t, shallow, "rev-parse", res.Branch) != res.HeadCommit {
		t.Fatalf("branch %q head %q not in the shallow repository (%s: %s)", res.Branch, res.HeadCommit, res.Outcome, res.Reason)
	}
}

// TestFinalChecksSeeTheCommittedTree: the model breaks Add and, with a
// command, rewrites a protected test so that it passes. The test's change
// is left out of the commit, so the final checks must run without it too:
// the outcome is failed, not a verified change whose evidence was never
// committed.
func TestFinalChecksSeeTheCommittedTree(t *testing.T) {
	sandboxtest.EndToEnd(t)
	files := calcFiles(false)
	files[".github/agent.yml"] = "protected_paths: [\"calc_test.go\"]\n"
	repo := gitRepo(t, files)
	res, out, _ := scenario{
		repo:  repo,
		issue: agent.Issue{Title: "Double is slow", Body: "Make Double faster."},
		wire:  provider.NameOpenAI,
		turns: []pt.Turn{
			call("read_file", `{"path":"calc.go"}`),
			call("edit", `{"edits":[{"path":"calc.go","old_text":"return a + b","new_text":"return a - b"}]}`),
			call("run", `{"command":"printf 'package calc\\n\\nimport \"testing\"\\n\\nfunc TestAdd(t *testing.T) {}\\n' > calc_test.go"}`),
			call("finish", `{"summary":"Faster."}`),
		},
	}.run(t)
	if res.Outcome != verify.Failed {
		t.Fatalf("outcome %s (%s), want failed: the checks ran on a tree that is not committed\n%s", res.Outcome, res.Reason, readBody(t, out))
	}
	if got := strings.Join(res.FilesChanged, ","); got != "calc.go" {
		t.Errorf("files changed = %q, want only calc.go", got)
	}
}

// TestVerifyToolQuietOnAGoodChange: during the loop no final check has run,
// so a correct fix must not be told that every check was dropped
// (test_skipped), which the model would then try to "restore".
func TestVerifyToolQuietOnAGoodChange(t *testing.T) {
	repo := gitRepo(t, calcFiles(true))
	fix, _ := json.Marshal(map[string]any{"path": "calc.go", "content": calcFiles(false)["calc.go"]})
	res, _, srv := scenario{
		repo:  repo,
		issue: agent.Issue{Title: "Add is wrong", Body: "Add returns the wrong result."},
		wire:  provider.NameOpenAI,
		turns: []pt.Turn{
			call("read_file", `{"path":"calc.go"}`),
			call("write_file", string(fix)),
			call("verify", `{}`),
			call("finish", `{"summary":"Fixed."}`),
		},
	}.run(t)
	reqs := srv.Requests()
	last := string(reqs[len(reqs)-1].Body)
	if strings.Contains(last, "test_skipped") || strings.Contains(last, "FAIL findings") {
		t.Errorf("the verify tool reported findings on a correct change; last request:\n%s", last)
	}
	if res.Outcome != "verified" {
		t.Errorf("outcome %s (%s), want verified", res.Outcome, res.Reason)
	}
}
