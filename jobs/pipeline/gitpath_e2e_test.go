package pipeline

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/provider"
	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
	"github.com/patchwright/patchwright/verify"
	"github.com/patchwright/patchwright/verify/findings"
)

// TestGitPathIsLeftOutOfTheCommit: beside a real fix, a command writes
// .GIT/config, which git treats as its own directory on case-insensitive
// file systems. That path alone is left out of the commit, with a
// finding the body lists; the fix is committed and verified.
func TestGitPathIsLeftOutOfTheCommit(t *testing.T) {
	sandboxtest.EndToEnd(t)
	repo := gitRepo(t, calcFiles(true))
	res, out, _ := scenario{
		repo:  repo,
		issue: agent.Issue{Title: "Add is wrong", Body: "Add subtracts."},
		wire:  provider.NameOpenAI,
		turns: []pt.Turn{
			call("read_file", `{"path":"calc.go"}`),
			call("edit", `{"edits":[{"path":"calc.go","old_text":"return a - b","new_text":"return a + b"}]}`),
			call("run", `{"command":"mkdir -p .GIT && printf '[core]\\n\\thooksPath = /tmp/evil\\n' > .GIT/config"}`),
			call("finish", `{"summary":"Add adds."}`),
		},
	}.run(t)
	if res.Outcome != verify.Verified || res.HeadCommit == "" {
		t.Fatalf("outcome %s (%s), head %q: want the fix verified and committed\n%s", res.Outcome, res.Reason, res.HeadCommit, readLedger(t, out))
	}
	if !slices.Equal(res.FilesChanged, []string{"calc.go"}) {
		t.Errorf("files_changed %v, want [calc.go]", res.FilesChanged)
	}
	tree, err := exec.Command("git", "-C", repo, "ls-tree", "-r", "--name-only", res.HeadCommit).Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.ToLower(string(tree)), ".git/") {
		t.Errorf("the commit holds a git path:\n%s", tree)
	}
	if !slices.ContainsFunc(res.Findings, func(f findings.Finding) bool { return f.Kind == KindProtectedPath && f.Path == ".GIT/config" }) {
		t.Errorf("no finding for .GIT/config: %+v", res.Findings)
	}
	if body := readBody(t, out); !strings.Contains(body, ".GIT/config") || !strings.Contains(body, "left out of the commit") {
		t.Errorf("the body does not list the path left out:\n%s", body)
	}
}
