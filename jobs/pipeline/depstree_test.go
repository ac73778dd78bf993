package pipeline

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/patchwright/patchwright/jobs/gitrepo"
	"github.com/patchwright/patchwright/sandbox"
)

// TestInstallIntoWorkTree: of the dependency directories a setup copy
// holds, only those the work tree ignores and the base commit has nothing
// under replace the work tree's own; nothing else of the copy comes back.
func TestInstallIntoWorkTree(t *testing.T) {
	origin := gitRepo(t, map[string]string{
		".gitignore":       "node_modules/\n.venv/\nvendor/\n",
		"package.json":     "{}\n",
		"web/package.json": "{}\n",
		"web/.gitignore":   "!node_modules/\n",
	})
	// A committed file under a directory the repository ignores.
	if err := os.MkdirAll(filepath.Join(origin, "vendored", ".venv"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(origin, "vendored", ".venv", "keep"), []byte("committed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, origin, "add", "-f", "vendored/.venv/keep")
	gitIn(t, origin, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "vendored")
	trees := t.TempDir()
	repo, err := gitrepo.Clone(context.Background(), gitrepo.CloneOptions{URL: origin, Worktree: filepath.Join(trees, "work"), GitDir: filepath.Join(t.TempDir(), "git")})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := sandbox.OpenWorkspace(repo.Worktree())
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	r := &run{repo: repo, ws: ws, clone: cloneResult{trees: trees}}
	work := repo.Worktree()
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(work, "node_modules", "old", "index.js"), "the model's\n")
	out := filepath.Join(trees, "deps-1")
	if err := copyTree(work, out); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(out, "node_modules", "old"))
	write(filepath.Join(out, "node_modules", "textcase", "index.js"), "setup's\n")
	write(filepath.Join(out, "node_modules", "textcase", "node_modules", "inner", "x.js"), "nested\n")
	write(filepath.Join(out, "web", "node_modules", "w", "index.js"), "not ignored\n")
	write(filepath.Join(out, "vendored", ".venv", "new"), "under a committed path\n")
	write(filepath.Join(out, ".venv", "bin", "python"), "venv\n")
	write(filepath.Join(out, "vendor", "acme", "lib.php"), "composer's\n")
	write(filepath.Join(out, "package.json"), "setup rewrote it\n")

	got, err := r.installIntoWorkTree(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{".venv", "node_modules", "vendor"}; !slices.Equal(got, want) {
		t.Errorf("installed %q, want %q", got, want)
	}
	for p, want := range map[string]string{
		"node_modules/textcase/index.js":                "setup's\n",
		"node_modules/textcase/node_modules/inner/x.js": "nested\n",
		".venv/bin/python":                              "venv\n",
		"vendor/acme/lib.php":                           "composer's\n",
		"package.json":                                  "{}\n",
		"vendored/.venv/keep":                           "committed\n",
		"node_modules/old/index.js":                     "",
		"web/node_modules/w/index.js":                   "",
		"vendored/.venv/new":                            "",
	} {
		b, err := os.ReadFile(filepath.Join(work, p))
		if want == "" {
			if err == nil {
				t.Errorf("%s is in the work tree: %q", p, b)
			}
			continue
		}
		if string(b) != want {
			t.Errorf("%s = %q, %v; want %q", p, b, err, want)
		}
	}
}

// TestVirtualenvs (issue 24): the checks run with each .venv setup made
// (with a bin/python), by its directory; not with one the base commit or
// the change wrote into, one without python, or one whose bin is a link.
func TestVirtualenvs(t *testing.T) {
	// Not ignored here, so the base can hold a path under one.
	origin := gitRepo(t, map[string]string{
		"pyproject.toml":      "\n",
		"vendored/.venv/keep": "committed\n",
	})
	trees := t.TempDir()
	repo, err := gitrepo.Clone(context.Background(), gitrepo.CloneOptions{URL: origin, Worktree: filepath.Join(trees, "work"), GitDir: filepath.Join(t.TempDir(), "git")})
	if err != nil {
		t.Fatal(err)
	}
	r := &run{repo: repo, clone: cloneResult{trees: trees}, fin: finalResult{changes: []gitrepo.Change{{Path: "changed/.venv/bin/python", Kind: gitrepo.Added}}}}
	dir := filepath.Join(trees, "check")
	if err := copyTree(repo.Worktree(), dir); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".venv/bin/python", "api/.venv/bin/python", "vendored/.venv/bin/python", "changed/.venv/bin/python", "nopython/.venv/bin/pip", "linked/elsewhere/python"} {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "linked", ".venv"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../elsewhere", filepath.Join(dir, "linked", ".venv", "bin")); err != nil {
		t.Fatal(err)
	}
	got, err := r.virtualenvs(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{".": ".venv", "api": "api/.venv"}
	if !maps.Equal(got, want) {
		t.Errorf("virtualenvs = %v, want %v", got, want)
	}
}
