package gitrepo

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/patchwright/patchwright/jobs/githubtest"
)

// TestOverlaySwapsTrees: a retry's clone of an agent branch is turned
// into the default branch's tree (for its first setup) and back, with
// what setup wrote kept; the second overlay's changes are the agent
// branch's own against the default branch. The trees are compared with
// the real git's checkouts of each branch.
func TestOverlaySwapsTrees(t *testing.T) {
	dir := origin(t)
	runGit(t, dir, "checkout", "-q", "--", "a.txt")
	runGit(t, dir, "checkout", "-q", "-b", "agent")
	write(t, filepath.Join(dir, "a.txt"), "edited by the last attempt\n")
	write(t, filepath.Join(dir, "new", "tool.sh"), "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(dir, "new", "tool.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	runGit(t, dir, "rm", "-q", "gone.txt", "pkg/b.go")
	write(t, filepath.Join(dir, "pkg"), "a file where a directory was\n")
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-q", "-m", "the last attempt")
	agentTree := listing(t, dir)
	runGit(t, dir, "checkout", "-q", "main")
	mainTree := listing(t, dir)

	tmp := t.TempDir()
	r, err := Clone(context.Background(), CloneOptions{URL: dir, Branch: "agent", Depth: 1,
		Worktree: filepath.Join(tmp, "work"), GitDir: filepath.Join(tmp, "git")})
	if err != nil {
		t.Fatal(err)
	}
	tip, err := r.FetchTip(context.Background(), "main")
	if err != nil {
		t.Fatal(err)
	}
	if want := runGit(t, dir, "rev-parse", "main"); tip.String() != want {
		t.Fatalf("tip %s, want main's %s", tip, want)
	}
	root, err := os.OpenRoot(r.Worktree())
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if _, err := r.Overlay(root, r.Base(), tip); err != nil {
		t.Fatal(err)
	}
	if got := listing(t, r.Worktree()); got != mainTree {
		t.Fatalf("after the first overlay:\n%s\nwant main's:\n%s", got, mainTree)
	}
	write(t, filepath.Join(r.Worktree(), "setup.out"), "what setup made\n")
	changes, err := r.Overlay(root, tip, r.Base())
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(r.Worktree(), "setup.out"))
	if got := listing(t, r.Worktree()); got != agentTree {
		t.Fatalf("after the second overlay:\n%s\nwant the agent branch's:\n%s", got, agentTree)
	}
	var got []string
	for _, c := range changes {
		got = append(got, c.Path+" "+string(c.Kind))
	}
	slices.Sort(got)
	want := []string{"a.txt modified", "gone.txt deleted", "link added", "new/tool.sh added", "pkg added", "pkg/b.go deleted"}
	if !slices.Equal(got, want) {
		t.Errorf("changes %q, want %q", got, want)
	}
}

// listing is every file and link under dir (.git left out): its path,
// mode and content or target.
func listing(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			if d != nil && d.Name() == ".git" {
				return filepath.SkipDir
			}
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		content := ""
		if d.Type()&fs.ModeSymlink != 0 {
			content, err = os.Readlink(p)
		} else if d.Name() != ".git" {
			var data []byte
			data, err = os.ReadFile(p)
			content = string(data)
		}
		fmt.Fprintf(&b, "%s %v %q\n", rel, info.Mode()&(fs.ModeSymlink|0o100), content)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestFetchTipOverHTTP: a retry's depth-1 clone of the agent branch
// fetches the default branch's tip from a smart-HTTP remote (the real
// git http-backend, behind basic auth, as GitHub serves it) and can
// overlay it.
func TestFetchTipOverHTTP(t *testing.T) {
	remote := githubtest.NewGitRemote(t, func(token, owner, repo string) bool { return token == "tok" })
	remote.Create(t, "o", "r", "main", map[string]string{"a.txt": "main\n"})
	work := t.TempDir()
	runGit(t, work, "clone", "-q", remote.Dir("o", "r"), ".")
	runGit(t, work, "checkout", "-q", "-b", "agent")
	write(t, filepath.Join(work, "a.txt"), "agent\n")
	runGit(t, work, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qam", "agent")
	runGit(t, work, "push", "-q", "origin", "agent")
	tmp := t.TempDir()
	auth := &githttp.BasicAuth{Username: "x-access-token", Password: "tok"}
	r, err := Clone(context.Background(), CloneOptions{URL: remote.CloneURL("o", "r"), Auth: auth, Branch: "agent", Depth: 1,
		Worktree: filepath.Join(tmp, "work"), GitDir: filepath.Join(tmp, "git")})
	if err != nil {
		t.Fatal(err)
	}
	tip, err := r.FetchTip(context.Background(), "main")
	if err != nil {
		t.Fatal(err)
	}
	if want := remote.Head(t, "o", "r", "main"); tip.String() != want {
		t.Fatalf("tip %s, want %s", tip, want)
	}
	root, err := os.OpenRoot(r.Worktree())
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if _, err := r.Overlay(root, r.Base(), tip); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(r.Worktree(), "a.txt")); string(b) != "main\n" {
		t.Errorf("a.txt %q after the overlay, want main's", b)
	}
}
