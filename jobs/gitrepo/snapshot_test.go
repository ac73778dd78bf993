package gitrepo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestChangesSeeAnEditThatKeepsSizeAndTime: a command rewrites a tracked
// file with bytes of the same length and puts its modification time back.
// A stat says nothing changed; the change list, read by content, says it
// did, so the commit and the checks see the same file.
func TestChangesSeeAnEditThatKeepsSizeAndTime(t *testing.T) {
	r := clone(t, origin(t))
	p := filepath.Join(r.Worktree(), "pkg", "b.go")
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("package pkh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, info.ModTime(), info.ModTime()); err != nil {
		t.Fatal(err)
	}
	changes, err := r.Changes()
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 1 || changes[0].Path != "pkg/b.go" {
		t.Fatalf("changes = %+v, want pkg/b.go", changes)
	}
	if got, err := r.ReadChange(changes[0]); err != nil || string(got) != "package pkh\n" {
		t.Fatalf("changes = %+v, want pkg/b.go with its new bytes", changes)
	}
}

// TestChangesCoverWhatALinkReplaces: a directory replaced by a link, or by
// a file, decides every base path under it; a link into another directory
// of the tree decides the paths it shows under its own name.
func TestChangesCoverWhatALinkReplaces(t *testing.T) {
	src := origin(t)
	write(t, filepath.Join(src, ".github", "agent.yml"), "verify: []\n")
	write(t, filepath.Join(src, ".github", "CODEOWNERS"), "* @a\n")
	runGit(t, src, "add", "-A")
	runGit(t, src, "commit", "-q", "-m", "config")
	r := clone(t, src)
	wt := r.Worktree()
	write(t, filepath.Join(wt, "docs", "gh", "agent.yml"), "setup: [evil]\n")
	if err := os.RemoveAll(filepath.Join(wt, ".github")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("docs/gh", filepath.Join(wt, ".github")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(wt, "pkg")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(wt, "pkg"), "a file where a directory was\n")

	changes, err := r.Changes()
	if err != nil {
		t.Fatal(err)
	}
	covers := map[string][]string{}
	for _, c := range changes {
		covers[c.Path] = c.Covers
	}
	link := covers[".github"]
	for _, want := range []string{".github/agent.yml", ".github/CODEOWNERS"} {
		if !slices.Contains(link, want) {
			t.Errorf(".github link covers %v, want %s among them", link, want)
		}
	}
	if got := covers["pkg"]; !slices.Equal(got, []string{"pkg/b.go"}) {
		t.Errorf("pkg file covers %v, want [pkg/b.go]", got)
	}
	if got := covers["docs/gh/agent.yml"]; len(got) != 0 {
		t.Errorf("a plain new file covers %v", got)
	}
}

// TestChangesWithinLimits: a change past its byte bound, or a tree past
// its depth, is a *LimitError (the change's failure), read no further.
func TestChangesWithinLimits(t *testing.T) {
	r := clone(t, origin(t))
	for i := range 3 {
		write(t, filepath.Join(r.Worktree(), fmt.Sprintf("big%d.bin", i)), strings.Repeat("x", 1<<20))
	}
	var limit *LimitError
	if _, err := r.ChangesWithin(Limits{MaxBytes: 2 << 20}); !errors.As(err, &limit) {
		t.Errorf("3 MB changed within a 2 MB bound: err = %v, want a LimitError", err)
	}
	if _, err := r.ChangesWithin(Limits{MaxBytes: 4 << 20}); err != nil {
		t.Errorf("3 MB changed within a 4 MB bound: %v", err)
	}
	deep := r.Worktree()
	for range 12 {
		deep = filepath.Join(deep, "d")
	}
	write(t, filepath.Join(deep, "f"), "x")
	if _, err := r.ChangesWithin(Limits{MaxDepth: 10}); !errors.As(err, &limit) {
		t.Errorf("a tree 13 deep within 10: err = %v, want a LimitError", err)
	}
}
