package gitrepo

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestWriteBaseWritesTheBaseCommit: the base tree is the commit the job
// started from, not the work tree the sandbox changed, and its links are
// left out.
func TestWriteBaseWritesTheBaseCommit(t *testing.T) {
	src := origin(t)
	if err := os.Symlink("/etc/passwd", filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(src, "run.sh"), "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(src, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	runGit(t, src, "add", "link", "run.sh")
	runGit(t, src, "commit", "-q", "-m", "link")
	r := clone(t, src)
	write(t, filepath.Join(r.Worktree(), "pkg", "b.go"), "package changed\n")
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if err := r.WriteBase(root); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "pkg", "b.go")); err != nil || string(b) != "package pkg\n" {
		t.Errorf("pkg/b.go = %q, %v; want the base commit's", b, err)
	}
	if info, err := os.Stat(filepath.Join(dir, "run.sh")); err != nil || info.Mode().Perm()&0o100 == 0 {
		t.Errorf("run.sh lost its executable bit: %v, %v", info, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "link")); !os.IsNotExist(err) {
		t.Errorf("the symbolic link was written: %v", err)
	}
}

// TestBasePathsListsTheBaseCommit: the base commit's files and links by
// path, not what the work tree holds now.
func TestBasePathsListsTheBaseCommit(t *testing.T) {
	src := origin(t)
	if err := os.Symlink("pkg", filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	runGit(t, src, "add", "link")
	runGit(t, src, "commit", "-q", "-m", "link")
	r := clone(t, src)
	write(t, filepath.Join(r.Worktree(), "new.txt"), "not committed\n")
	got, err := r.BasePaths()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(got, "link") || !slices.Contains(got, "pkg/b.go") || slices.Contains(got, "new.txt") || slices.Contains(got, "pkg") {
		t.Errorf("BasePaths = %q, want the commit's files and links only", got)
	}
}

// TestBaseHasBinary: the base commit's files are judged by their first
// bytes at the base, not by the work tree; a path the base does not hold
// is not binary.
func TestBaseHasBinary(t *testing.T) {
	src := origin(t)
	write(t, filepath.Join(src, "fixture"), "ELF\x00\x01")
	write(t, filepath.Join(src, "LICENSE"), "text\n")
	runGit(t, src, "add", "fixture", "LICENSE")
	runGit(t, src, "commit", "-q", "-m", "fixture")
	r := clone(t, src)
	write(t, filepath.Join(r.Worktree(), "LICENSE"), "now\x00binary")
	for _, tc := range []struct {
		paths []string
		want  bool
	}{
		{[]string{"LICENSE"}, false},
		{[]string{"LICENSE", "fixture"}, true},
		{[]string{"missing"}, false},
		{nil, false},
	} {
		if got, err := r.BaseHasBinary(tc.paths); err != nil || got != tc.want {
			t.Errorf("BaseHasBinary(%q) = %v, %v; want %v", tc.paths, got, err, tc.want)
		}
	}
}
