package gitrepo

import (
	"os"
	"path/filepath"
	"slices"
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
	if len(changes) != 1 || changes[0].Path != "pkg/b.go" || string(changes[0].Content()) != "package pkh\n" {
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
