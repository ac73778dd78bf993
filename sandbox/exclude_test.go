package sandbox_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/patchwright/patchwright/sandbox"
)

// prefixExcluder excludes what lies under one of its directories, or is
// one of its files: enough to test the workspace's side of the rule
// without agent/ignore's patterns.
type prefixExcluder struct{ dirs, files []string }

func (p prefixExcluder) Excluded(rel string, isDir bool) bool {
	return (isDir && slices.Contains(p.dirs, rel)) || slices.Contains(p.files, rel)
}

func excludeTree(t *testing.T) *sandbox.Workspace {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"main.go", "data/customers.csv", "data/deep/more.csv", "docs/private.md", "docs/public.md"} {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("secret customer list\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := sandbox.OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	ws.Exclude(prefixExcluder{dirs: []string{"data"}, files: []string{"docs/private.md", "docs/absent.md"}})
	return ws
}

func TestExcludedIsNotVisible(t *testing.T) {
	ws := excludeTree(t)
	for _, p := range []string{"data", "data/customers.csv", "data/deep/more.csv", "docs/private.md", "./docs/private.md", "docs/absent.md"} {
		err := ws.Visible(p)
		var nv *sandbox.NotVisibleError
		if !errors.As(err, &nv) || nv.Why != sandbox.WhyExcluded || !errors.Is(err, sandbox.ErrPathDenied) {
			t.Errorf("Visible(%q) = %v, want excluded", p, err)
		}
	}
	for _, p := range []string{".", "docs", "docs/public.md", "main.go"} {
		if err := ws.Visible(p); err != nil {
			t.Errorf("Visible(%q) = %v, want nil", p, err)
		}
	}
	if err := ws.Visible("docs/missing.md"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Visible(missing, not excluded) = %v, want not exist", err)
	}
}

func TestExcludedLeftOutOfWalks(t *testing.T) {
	ws := excludeTree(t)
	var got []string
	if err := ws.WalkVisible(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		got = append(got, p)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := []string{".", "docs", "docs/public.md", "main.go"}; !slices.Equal(got, want) {
		t.Errorf("WalkVisible = %q, want %q", got, want)
	}
	// A view of a subdirectory judges by the path from the root.
	sub, err := ws.OpenDir("docs")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if err := sub.Visible("private.md"); !errors.Is(err, sandbox.ErrPathDenied) {
		t.Errorf("OpenDir(docs).Visible(private.md) = %v, want excluded", err)
	}
	if err := sub.Visible("public.md"); err != nil {
		t.Errorf("OpenDir(docs).Visible(public.md) = %v", err)
	}
}
