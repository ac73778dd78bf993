package gitrepo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/patchwright/patchwright/jobs/githubtest"
)

// conflictRemote is a smart-HTTP remote (as GitHub serves it) whose
// branch "agent" and "main" both changed since their merge base: both
// changed the same line of a.txt and different lines of b.txt, only the
// agent changed c.txt and only main added d.txt. It returns the
// remote, the merge base and main's head.
func conflictRemote(t *testing.T, extra func(work string)) (*githubtest.GitRemote, string, string) {
	t.Helper()
	remote := githubtest.NewGitRemote(t, func(token, owner, repo string) bool { return token == "tok" })
	remote.Create(t, "o", "r", "main", map[string]string{"a.txt": "one\ntwo\nthree\n", "b.txt": "1\n2\n3\n4\n5\n", "c.txt": "c\n"})
	base := remote.Head(t, "o", "r", "main")
	work := t.TempDir()
	commit := func(msg string) {
		runGit(t, work, "add", "-A")
		runGit(t, work, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", msg)
	}
	runGit(t, work, "clone", "-q", remote.Dir("o", "r"), ".")
	runGit(t, work, "checkout", "-q", "-b", "agent")
	write(t, filepath.Join(work, "a.txt"), "one\nTWO\nthree\n")
	write(t, filepath.Join(work, "b.txt"), "1 agent\n2\n3\n4\n5\n")
	write(t, filepath.Join(work, "c.txt"), "c agent\n")
	commit("agent")
	runGit(t, work, "push", "-q", "origin", "agent")
	runGit(t, work, "checkout", "-q", "main")
	write(t, filepath.Join(work, "a.txt"), "one\n2\nthree\n")
	write(t, filepath.Join(work, "b.txt"), "1\n2\n3\n4\n5 main\n")
	write(t, filepath.Join(work, "d.txt"), "new on main\n")
	if extra != nil {
		extra(work)
	}
	commit("main")
	runGit(t, work, "push", "-q", "origin", "main")
	return remote, base, remote.Head(t, "o", "r", "main")
}

func cloneAgent(t *testing.T, remote *githubtest.GitRemote) *Repo {
	t.Helper()
	tmp := t.TempDir()
	r, err := Clone(context.Background(), CloneOptions{URL: remote.CloneURL("o", "r"), Branch: "agent", Depth: 1,
		Auth:     &githttp.BasicAuth{Username: "x-access-token", Password: "tok"},
		Worktree: filepath.Join(tmp, "work"), GitDir: filepath.Join(tmp, "git")})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestLayMerge: a depth-1 clone of the pull request's head fetches the
// merge base and the new base by SHA, lays the merge (markers where
// both changed the same lines), reads the model's edit against the merge
// alone, and commits a merge of both heads.
func TestLayMerge(t *testing.T) {
	remote, base, main := conflictRemote(t, nil)
	r := cloneAgent(t, remote)
	head := r.Base()
	m, err := r.LayMerge(context.Background(), MergeInput{Base: plumbing.NewHash(base), Theirs: plumbing.NewHash(main),
		Labels: Labels{Ours: "agent", Base: "merge base", Theirs: "main"}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Conflicts, []string{"a.txt"}) || !slices.Equal(m.Ours, []string{"a.txt", "b.txt", "c.txt"}) || !slices.Equal(m.Theirs, []string{"a.txt", "b.txt", "d.txt"}) {
		t.Fatalf("merged %+v", m)
	}
	for name, want := range map[string]string{
		"a.txt": "one\n<<<<<<< agent\nTWO\n||||||| merge base\ntwo\n=======\n2\n>>>>>>> main\nthree\n",
		"b.txt": "1 agent\n2\n3\n4\n5 main\n", "c.txt": "c agent\n", "d.txt": "new on main\n",
	} {
		if b, _ := os.ReadFile(filepath.Join(r.Worktree(), name)); string(b) != want {
			t.Errorf("%s in the work tree: %q, want %q", name, b, want)
		}
	}
	if r.Base() != m.Commit || r.Cloned() != head {
		t.Errorf("after the merge: base %s, cloned %s; want the merge %s and the head %s (where the remote branch is)", r.Base(), r.Cloned(), m.Commit, head)
	}
	if changes, err := r.Changes(); err != nil || len(changes) != 0 {
		t.Fatalf("changes right after the merge: %+v, %v (the merge is the base)", changes, err)
	}
	write(t, filepath.Join(r.Worktree(), "a.txt"), "one\nTWO and 2\nthree\n")
	changes, err := r.Changes()
	if err != nil || len(changes) != 1 || changes[0].Path != "a.txt" || changes[0].Kind != Modified {
		t.Fatalf("changes after the resolution: %+v, %v", changes, err)
	}
	got, err := r.Commit(changes, CommitOptions{Branch: "agent", Message: "merge main", Author: Signature{Name: "a", Email: "a@b"}, Time: time.Unix(1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.repo.CommitObject(got)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.ParentHashes, []plumbing.Hash{head, plumbing.NewHash(main)}) {
		t.Errorf("the commit's parents: %v, want the head %s and main %s", c.ParentHashes, head, main)
	}
	d, err := r.Delta(got)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, f := range d.Files {
		files = append(files, f.Path)
	}
	// Against main: the pull request's side and the resolution.
	if d.Parent != head || d.Merged.String() != main || strings.Join(files, ",") != "a.txt,b.txt,c.txt" {
		t.Errorf("delta parent %s merged %s files %v", d.Parent, d.Merged, files)
	}
}

// A binary file both sides changed cannot hold markers: the merge says
// which file, and nothing is laid.
func TestLayMergeRefusesBinary(t *testing.T) {
	remote, base, main := conflictRemote(t, func(work string) {
		write(t, filepath.Join(work, "c.txt"), "c\x00main\n")
	})
	r := cloneAgent(t, remote)
	_, err := r.LayMerge(context.Background(), MergeInput{Base: plumbing.NewHash(base), Theirs: plumbing.NewHash(main)})
	if !errors.Is(err, ErrUnmergeable) || !strings.Contains(err.Error(), "c.txt") {
		t.Fatalf("LayMerge: %v, want c.txt unmergeable", err)
	}
	if b, _ := os.ReadFile(filepath.Join(r.Worktree(), "a.txt")); string(b) != "one\nTWO\nthree\n" {
		t.Errorf("the work tree changed on a refused merge: a.txt %q", b)
	}
}
