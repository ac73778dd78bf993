package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/patchwright/patchwright/agent/config"
	"github.com/patchwright/patchwright/jobs/gitrepo"
	"github.com/patchwright/patchwright/sandbox"
)

// TestEarlierAttemptsCountAsTheChange: on a retry whose setup ran on the
// default branch's commit, a go.mod only the earlier attempt changed is a
// manifest dependency setup after the change reinstalls, and the module
// it added is new against the default branch's go.mod, so the Go proxy
// rule judges it; this run's own change to a file counts as this run
// left it.
func TestEarlierAttemptsCountAsTheChange(t *testing.T) {
	gomod := "module example.com/names\n\ngo 1.22\n"
	repo := gitRepo(t, map[string]string{"go.mod": gomod, "README.md": "Names.\n"})
	gitIn(t, repo, "checkout", "-q", "-b", "agent/issue-1")
	if err := os.WriteFile(filepath.Join(repo, "go.mod"), []byte(gomod+"\nrequire leak.example/data v1.0.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "README.md"), []byte("Names, again.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qam", "the last attempt")
	gitIn(t, repo, "checkout", "-q", "main")
	trees := t.TempDir()
	clone, err := gitrepo.Clone(context.Background(), gitrepo.CloneOptions{URL: repo, Branch: "agent/issue-1", Depth: 1,
		Worktree: filepath.Join(trees, "work"), GitDir: filepath.Join(t.TempDir(), "git")})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := sandbox.OpenWorkspace(clone.Worktree())
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	r := &run{e: &Executor{}, repo: clone, ws: ws, job: Job{Branch: "agent/issue-1", ConfigBranch: "main"},
		clone: cloneResult{trees: trees, cfg: config.Config{Setup: []string{"true"}}}}
	if r.first.retry.defaultTip, err = r.setupOnDefault(context.Background()); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws.Dir(), "go.mod")); string(b) != gomod {
		t.Fatalf("setup's go.mod %q, want the default branch's", b)
	}
	if r.first.retry, err = r.layEarlierAttempts(r.first.retry); err != nil {
		t.Fatal(err)
	}
	r.fin.changes, r.fin.changesRead = []gitrepo.Change{{Path: "README.md", Kind: gitrepo.Modified}}, true
	var paths []string
	for _, c := range r.modelChanges() {
		paths = append(paths, c.Path)
	}
	slices.Sort(paths)
	if !slices.Equal(paths, []string{"README.md", "go.mod"}) {
		t.Fatalf("model's changes %q, want README.md and go.mod once each", paths)
	}
	changed := manifestChanges(r.modelChanges())
	files, err := r.depsFiles(changed)
	if err != nil {
		t.Fatal(err)
	}
	if got := newGoModules(files); !slices.Equal(got, []string{"leak.example/data"}) {
		t.Errorf("new Go modules %q, want the earlier attempt's leak.example/data", got)
	}
}
