package gitrepo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// Delta lists what a commit changed against its parent, deletions first,
// with each new version's mode, blob and size, and the blobs read back
// as committed; a root commit or an unknown one is refused.
func TestDeltaOfACommit(t *testing.T) {
	r := clone(t, origin(t))
	w := r.Worktree()
	write(t, filepath.Join(w, "pkg", "b.go"), "package pkg // changed\n")
	if err := os.Remove(filepath.Join(w, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.txt", filepath.Join(w, "link")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(w, "run.sh"), "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(w, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	changes, err := r.Changes()
	if err != nil {
		t.Fatal(err)
	}
	h, err := r.Commit(changes, CommitOptions{Branch: "b", Message: "m\n", Author: Signature{Name: "n", Email: "e@x"}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := r.Delta(h)
	if err != nil {
		t.Fatal(err)
	}
	if d.Parent != r.Base() || d.Message != "m\n" || d.Tree.IsZero() || d.BaseTree.IsZero() {
		t.Fatalf("delta %+v", d)
	}
	var got []string
	for _, f := range d.Files {
		got = append(got, f.Path+":"+f.Mode.String())
	}
	want := "gone.txt:0000000 link:0120000 pkg/b.go:0100644 run.sh:0100755"
	if strings.Join(got, " ") != want {
		t.Fatalf("files %v, want %s", got, want)
	}
	for _, f := range d.Files {
		if f.Mode != filemode.Symlink {
			continue
		}
		rc, err := r.OpenBlob(f.Blob)
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 16)
		n, _ := rc.Read(b)
		rc.Close()
		if string(b[:n]) != "a.txt" || f.Size != 5 {
			t.Errorf("link's blob %q (size %d), want its target", b[:n], f.Size)
		}
	}
	if _, err := r.Delta(r.Base()); err == nil || !strings.Contains(err.Error(), "has 0 parents, want 1") {
		t.Errorf("root commit: %v", err)
	}
	if _, err := r.Delta(plumbing.NewHash(strings.Repeat("1", 40))); err == nil || !strings.Contains(err.Error(), "read commit") {
		t.Errorf("unknown commit: %v", err)
	}
}
