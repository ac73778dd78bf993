package ignore

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/patchwright/patchwright/sandbox"
)

func TestIgnored(t *testing.T) {
	files := map[string]string{
		".gitignore":     "*.log\n# comment\n\nbuild/\n!keep.log\n",
		"sub/.gitignore": "secret.txt\r\n/local-only\n",
	}
	read := func(name string) ([]byte, error) {
		if s, ok := files[name]; ok {
			return []byte(s), nil
		}
		return nil, fs.ErrNotExist
	}
	m := New(read)
	for _, tc := range []struct {
		path  string
		isDir bool
		want  bool
	}{
		{"a.log", false, true},
		{"keep.log", false, false},
		{"deep/x/y.log", false, true},
		{"build", true, true},
		{"src/build", true, true},
		{"build", false, false}, // a file named build is not the directory rule
		{"main.go", false, false},
		{"sub/secret.txt", false, true},
		{"secret.txt", false, false}, // sub's rule is scoped to sub
		{"sub/local-only", false, true},
		{"sub/x/local-only", false, false}, // anchored to sub
	} {
		if got := m.Ignored(tc.path, tc.isDir); got != tc.want {
			t.Errorf("Ignored(%q, dir=%v) = %v, want %v", tc.path, tc.isDir, got, tc.want)
		}
	}
}

// TestHostileIgnoreFiles: with a workspace's reader, a FIFO named
// .gitignore (a blocking open would hang the worker for good), a
// .gitignore that is a symlink out of the tree and a directory named
// .gitignore add no rules and do not stop the rules beside them.
func TestHostileIgnoreFiles(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "rules")
	for name, content := range map[string]string{"b/.gitignore": "*.tmp\n", "c/.gitignore/x": "", outside: "*.go\n"} {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, name)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, ".gitignore"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "a", ".gitignore")); err != nil {
		t.Fatal(err)
	}
	ws, err := sandbox.OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	m := New(ws.ReadFile)
	for path, want := range map[string]bool{"x.go": false, "a/x.go": false, "b/x.tmp": true, "c/x.go": false} {
		if got := m.Ignored(path, false); got != want {
			t.Errorf("Ignored(%q) = %v, want %v", path, got, want)
		}
	}
}
