package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/patchwright/patchwright/jobs/gitrepo"
)

// TestFindingFilesBounded: the findings read each changed file's new text
// whole, so what they hold is bounded however large the change: a sparse
// file of zeros (binary) is judged by its path, and so is the text past
// findingsBytes, the largest files first; the rest is read.
func TestFindingFilesBounded(t *testing.T) {
	repoURL := gitRepo(t, map[string]string{"README.md": "A repository.\n"})
	dir := t.TempDir()
	repo, err := gitrepo.Clone(context.Background(), gitrepo.CloneOptions{URL: repoURL, Worktree: filepath.Join(dir, "work"), GitDir: filepath.Join(dir, "git")})
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	if err := os.Truncate(filepath.Join(work, "README.md"), 0); err != nil {
		t.Fatal(err)
	}
	sparse, err := os.Create(filepath.Join(work, "zeros.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(sparse.Truncate(gitrepo.MaxFileBytes), sparse.Close()); err != nil {
		t.Fatal(err)
	}
	// Seven text files of 9.5 MiB: together past 64 MiB.
	line := []byte("abcdefghijklmnopqrstuvwxyz0123456789 text line\n")
	text := bytes.Repeat(line, (19<<19)/len(line))
	for i := range 7 {
		if err := os.WriteFile(filepath.Join(work, fmt.Sprintf("text%d.txt", i)), text, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A 7.5 MiB test file, last in path order, is read before the larger
	// text files, which then leave no room for the last two of them.
	if err := os.WriteFile(filepath.Join(work, "zz_test.go"), text[:15<<19], 0o644); err != nil {
		t.Fatal(err)
	}
	changes, err := repo.ChangesWithin(gitrepo.Limits{MaxBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	files, err := findingFiles(repo, changes)
	if err != nil {
		t.Fatal(err)
	}
	var held int64
	read := map[string]bool{}
	for _, f := range files {
		held += int64(len(f.New))
		read[f.Path] = !f.Unread
		if f.Unread != (f.New == nil) {
			t.Errorf("%s: Unread %v with %d bytes read", f.Path, f.Unread, len(f.New))
		}
	}
	if held > findingsBytes {
		t.Errorf("the findings hold %d MiB, over their bound of %d MiB", held>>20, findingsBytes>>20)
	}
	want := map[string]bool{"README.md": true, "zeros.bin": false, "text5.txt": false, "text6.txt": false, "zz_test.go": true}
	for i := range 5 {
		want[fmt.Sprintf("text%d.txt", i)] = true
	}
	for p, w := range want {
		if got, ok := read[p]; !ok || got != w {
			t.Errorf("%s: read %v (listed %v), want read %v", p, got, ok, w)
		}
	}
}
