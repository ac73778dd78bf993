package gitrepo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/patchwright/patchwright/jobs/githubtest"
)

// runGit runs the real git in dir and returns its trimmed output.
func runGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return strings.TrimSpace(githubtest.Git(t, dir, args...))
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// origin makes a repository with a few files and an uncommitted edit in
// its working tree, as a user's checkout would have.
func origin(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	runGit(t, dir, "init", "-q", "-b", "main")
	write(t, filepath.Join(dir, "a.txt"), "one\ntwo\nthree\n")
	write(t, filepath.Join(dir, "gone.txt"), "x\ny\n")
	write(t, filepath.Join(dir, "pkg", "b.go"), "package pkg\n")
	write(t, filepath.Join(dir, ".gitignore"), "*.log\nbuild/\n")
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-q", "-m", "initial")
	write(t, filepath.Join(dir, "a.txt"), "user's uncommitted edit\n")
	return dir
}

func clone(t *testing.T, url string) *Repo {
	t.Helper()
	tmp := t.TempDir()
	r, err := Clone(context.Background(), CloneOptions{
		URL: url, Depth: 1,
		Worktree: filepath.Join(tmp, "work"), GitDir: filepath.Join(tmp, "git"),
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestCloneKeepsGitDirOutOfWorktree(t *testing.T) {
	src := origin(t)
	r := clone(t, src)
	if _, err := os.Stat(filepath.Join(r.Worktree(), ".git")); !os.IsNotExist(err) {
		t.Errorf(".git in the work tree: %v", err)
	}
	got, err := os.ReadFile(filepath.Join(r.Worktree(), "a.txt"))
	if err != nil || string(got) != "one\ntwo\nthree\n" {
		t.Errorf("a.txt = %q, %v; want the committed content, not the user's edit", got, err)
	}
	if r.BaseBranch() != "main" || r.Base().String() != runGit(t, src, "rev-parse", "HEAD") {
		t.Errorf("base = %s %s", r.BaseBranch(), r.Base())
	}
}

func TestChangesFindsExactlyWhatChanged(t *testing.T) {
	r := clone(t, origin(t))
	wt := r.Worktree()
	write(t, filepath.Join(wt, "a.txt"), "one\nTWO\nthree\nfour\n")
	write(t, filepath.Join(wt, "new", "c.go"), "package new\n\nfunc C() {}\n")
	write(t, filepath.Join(wt, "debug.log"), "ignored\n")
	write(t, filepath.Join(wt, "build", "out"), "ignored\n")
	write(t, filepath.Join(wt, ".git", "config"), "[core]\n\tfsmonitor = evil\n")
	if err := os.Remove(filepath.Join(wt, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(wt, "link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(wt, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Same content rewritten: a new mtime but no change.
	write(t, filepath.Join(wt, "pkg", "b.go"), "package pkg\n")

	got, err := r.Changes()
	if err != nil {
		t.Fatal(err)
	}
	want := []Change{
		{Path: "a.txt", Kind: Modified, Added: 2, Removed: 1},
		{Path: "gone.txt", Kind: Deleted, Removed: 2},
		{Path: "link", Kind: Added, Added: 1, Symlink: true},
		{Path: "new/c.go", Kind: Added, Added: 3},
	}
	if len(got) != len(want) {
		t.Fatalf("Changes = %+v\nwant %+v", got, want)
	}
	for i := range want {
		g := got[i]
		g.mode, g.blob, g.size, g.target = 0, plumbing.ZeroHash, 0, "" // what Commit writes, compared below
		if !reflect.DeepEqual(g, want[i]) {
			t.Errorf("change %d = %+v, want %+v", i, g, want[i])
		}
	}
	a, err := r.ReadChange(got[0])
	if err != nil {
		t.Fatal(err)
	}
	link, err := r.ReadChange(got[2])
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != "one\nTWO\nthree\nfour\n" || string(link) != "/etc/passwd" || got[2].Target() != "/etc/passwd" {
		t.Errorf("blobs stored: %q and %q (target %q)", a, link, got[2].Target())
	}
}

func TestCommitAndPushLeaveTheUsersTreeAlone(t *testing.T) {
	src := origin(t)
	before := snapshot(t, src)
	r := clone(t, src)
	write(t, filepath.Join(r.Worktree(), "a.txt"), "one\n2\nthree\n")
	changes, err := r.Changes()
	if err != nil {
		t.Fatal(err)
	}
	hash, err := r.Commit(changes, CommitOptions{
		Branch: "agent/fix-two", Message: "Fix two",
		Author: Signature{Name: "patchwright[bot]", Email: "bot@example.com"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Push(context.Background(), "agent/fix-two", plumbing.ZeroHash); err != nil {
		t.Fatal(err)
	}
	if got := runGit(t, src, "rev-parse", "agent/fix-two"); got != hash.String() {
		t.Errorf("branch at %s, want %s", got, hash)
	}
	if got := runGit(t, src, "show", "agent/fix-two:a.txt"); got != "one\n2\nthree" {
		t.Errorf("a.txt on the branch = %q", got)
	}
	if got := runGit(t, src, "diff", "--name-only", "main", "agent/fix-two"); got != "a.txt" {
		t.Errorf("branch changes %q, want only a.txt", got)
	}
	if after := snapshot(t, src); after != before {
		t.Errorf("user's working tree or index changed:\nbefore %s\nafter  %s", before, after)
	}
}

func TestPushIsCompareAndSwap(t *testing.T) {
	src := origin(t)
	r := clone(t, src)
	write(t, filepath.Join(r.Worktree(), "a.txt"), "first attempt\n")
	changes, _ := r.Changes()
	first, err := r.Commit(changes, CommitOptions{Branch: "agent/issue-1", Message: "attempt 1", Author: Signature{Name: "b", Email: "b@x"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Push(context.Background(), "agent/issue-1", plumbing.ZeroHash); err != nil {
		t.Fatal(err)
	}

	// A person pushes to the branch.
	runGit(t, src, "branch", "-f", "human", "agent/issue-1")
	human := filepath.Join(t.TempDir(), "human")
	runGit(t, src, "worktree", "add", "-q", human, "agent/issue-1")
	write(t, filepath.Join(human, "human.txt"), "mine\n")
	runGit(t, human, "add", "human.txt")
	runGit(t, human, "commit", "-q", "-m", "human commit")
	humanHead := runGit(t, human, "rev-parse", "HEAD")
	runGit(t, src, "worktree", "remove", "--force", human)

	// Pushing as if the branch were new, or as if it were still at our
	// first commit, must not overwrite the person's commit.
	write(t, filepath.Join(r.Worktree(), "a.txt"), "second attempt\n")
	changes, _ = r.Changes()
	if _, err := r.Commit(changes, CommitOptions{Branch: "agent/issue-1", Message: "attempt 2", Author: Signature{Name: "b", Email: "b@x"}}); err != nil {
		t.Fatal(err)
	}
	for _, expected := range []plumbing.Hash{plumbing.ZeroHash, first} {
		err := r.Push(context.Background(), "agent/issue-1", expected)
		if !errors.Is(err, ErrRemoteMoved) {
			t.Errorf("push expecting %s: %v, want ErrRemoteMoved", expected, err)
		}
	}
	if got := runGit(t, src, "rev-parse", "agent/issue-1"); got != humanHead {
		t.Errorf("branch moved to %s; the human commit %s was overwritten", got, humanHead)
	}
	// Expecting the person's head, the force-update goes through.
	if err := r.Push(context.Background(), "agent/issue-1", plumbing.NewHash(humanHead)); err != nil {
		t.Errorf("push expecting the current head: %v", err)
	}
}

func TestCommitRefusesEmptyChange(t *testing.T) {
	r := clone(t, origin(t))
	if _, err := r.Commit(nil, CommitOptions{Branch: "b", Message: "m"}); !errors.Is(err, ErrNothingToCommit) {
		t.Errorf("Commit(nil) = %v", err)
	}
}

func TestCloneErrors(t *testing.T) {
	tmp := t.TempDir()
	_, err := Clone(context.Background(), CloneOptions{URL: filepath.Join(tmp, "nope"), Worktree: filepath.Join(tmp, "w"), GitDir: filepath.Join(tmp, "g")})
	if err == nil {
		t.Error("clone of a missing repository succeeded")
	}
	if _, err := Clone(context.Background(), CloneOptions{URL: "x"}); err == nil {
		t.Error("clone without directories succeeded")
	}
	if got := redactURL("https://x-access-token:ghs_secret@github.com/o/r.git"); strings.Contains(got, "ghs_secret") {
		t.Errorf("redactURL kept the token: %s", got)
	}
}

// snapshot is the user's visible state: status, index and file contents.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	a, _ := os.ReadFile(filepath.Join(dir, "a.txt"))
	return runGit(t, dir, "status", "--porcelain") + "|" + runGit(t, dir, "ls-files", "-s") + "|" + string(a)
}

// TestReadBranchFile reads a file as another branch's commit has it, not
// as the cloned branch or any work tree does.
func TestReadBranchFile(t *testing.T) {
	dir := origin(t)
	runGit(t, dir, "checkout", "-q", "-b", "agent/issue-1")
	write(t, filepath.Join(dir, "pkg", "b.go"), "package pkg // rewritten\n")
	runGit(t, dir, "commit", "-q", "-am", "attempt")
	runGit(t, dir, "checkout", "-q", "main")
	ctx := context.Background()
	got, err := ReadBranchFile(ctx, CloneOptions{URL: dir}, "main", "pkg/b.go")
	if err != nil || string(got) != "package pkg\n" {
		t.Fatalf("main's pkg/b.go = %q, %v", got, err)
	}
	got, err = ReadBranchFile(ctx, CloneOptions{URL: dir}, "agent/issue-1", "pkg/b.go")
	if err != nil || string(got) != "package pkg // rewritten\n" {
		t.Fatalf("agent branch's pkg/b.go = %q, %v", got, err)
	}
	if got, err := ReadBranchFile(ctx, CloneOptions{URL: dir}, "main", ".github/agent.yml"); got != nil || err != nil {
		t.Fatalf("missing file = %q, %v; want nil, nil", got, err)
	}
	if _, err := ReadBranchFile(ctx, CloneOptions{URL: dir}, "no-such-branch", "a.txt"); err == nil {
		t.Fatal("a missing branch gave no error")
	}
}

// TestChangesSurvivesHostileFiles: a FIFO named .gitignore (in the root
// and in a subdirectory) neither hangs the scan nor counts as a change,
// and a sparse file of a gigabyte is reported TooLarge without being read.
func TestChangesSurvivesHostileFiles(t *testing.T) {
	r := clone(t, origin(t))
	wt := r.Worktree()
	if err := os.Remove(filepath.Join(wt, ".gitignore")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".gitignore", "pkg/.gitignore"} {
		if err := syscall.Mkfifo(filepath.Join(wt, p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Create(filepath.Join(wt, "data.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	changes, err := r.Changes()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Change{}
	for _, c := range changes {
		got[c.Path] = c
	}
	if c := got["data.bin"]; !c.TooLarge || c.Kind != Added {
		t.Errorf("data.bin = %+v, want added and TooLarge", c)
	}
	if c, ok := got[".gitignore"]; !ok || c.Kind != Deleted {
		t.Errorf(".gitignore = %+v, %v; want deleted (the FIFO is no file)", c, ok)
	}
	if _, ok := got["pkg/.gitignore"]; ok {
		t.Error("a FIFO counted as a change")
	}
}

// TestCommitWritesTheScannedBytes: the commit holds what Changes read,
// even when the work tree is changed afterwards, a file swapped for a
// symlink out of the tree included; nested directories are rebuilt, and a
// directory left empty disappears.
func TestCommitWritesTheScannedBytes(t *testing.T) {
	src := origin(t)
	r := clone(t, src)
	wt := r.Worktree()
	write(t, filepath.Join(wt, "a.txt"), "scanned\n")
	write(t, filepath.Join(wt, "deep", "er", "x.sh"), "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(wt, "deep", "er", "x.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(wt, "pkg", "b.go")); err != nil {
		t.Fatal(err)
	}
	changes, err := r.Changes()
	if err != nil {
		t.Fatal(err)
	}
	// After the scan: a.txt becomes a link to a host file.
	os.Remove(filepath.Join(wt, "a.txt"))
	if err := os.Symlink("/etc/passwd", filepath.Join(wt, "a.txt")); err != nil {
		t.Fatal(err)
	}
	hash, err := r.Commit(changes, CommitOptions{Branch: "agent/issue-1", Message: "m", Author: Signature{Name: "b", Email: "b@x"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Push(context.Background(), "agent/issue-1", plumbing.ZeroHash); err != nil {
		t.Fatal(err)
	}
	if got := runGit(t, src, "show", hash.String()+":a.txt"); got != "scanned" {
		t.Errorf("committed a.txt = %q, want the scanned bytes", got)
	}
	if got := runGit(t, src, "ls-tree", "-r", hash.String()); !strings.Contains(got, "100755 blob") || strings.Contains(got, "pkg/") || strings.Contains(got, "120000") {
		t.Errorf("tree:\n%s", got)
	}
	if out := runGit(t, src, "fsck", "--strict"); strings.Contains(out, "error") {
		t.Errorf("git fsck: %s", out)
	}
	// A second commit builds on the first.
	write(t, filepath.Join(wt, "deep", "er", "x.sh"), "#!/bin/sh\necho 2\n")
	changes, err = r.Changes()
	if err != nil || len(changes) != 2 { // x.sh, and a.txt now a symlink
		t.Fatalf("changes after the commit = %+v, %v", changes, err)
	}
}

// TestIgnores: a directory a .gitignore excludes is ignored, one it does
// not is not, and a .gitignore the work tree gains later counts.
func TestIgnores(t *testing.T) {
	r := clone(t, origin(t))
	for dir, want := range map[string]bool{"build": true, "pkg/build": true, "pkg": false, "node_modules": false} {
		if got, err := r.Ignores(dir); err != nil || got != want {
			t.Errorf("Ignores(%q) = %v, %v; want %v", dir, got, err, want)
		}
	}
	write(t, filepath.Join(r.Worktree(), "web", ".gitignore"), "node_modules/\n")
	if got, err := r.Ignores("web/node_modules"); err != nil || !got {
		t.Errorf("Ignores(web/node_modules) = %v, %v after web/.gitignore names it", got, err)
	}
	if got, _ := r.Ignores("node_modules"); got {
		t.Errorf("web/.gitignore ignores the root's node_modules")
	}
}
