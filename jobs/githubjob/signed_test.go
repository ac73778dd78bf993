package githubjob

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/report/marker"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/githubtest"
	"github.com/patchwright/patchwright/jobs/gitrepo"
	"github.com/patchwright/patchwright/jobs/pipeline"
	"github.com/patchwright/patchwright/jobs/tasks"
)

type signedEnv struct {
	fake   *githubtest.Server
	remote *githubtest.GitRemote
	app    *githubapi.App
	repo   tasks.Issue
}

func newSignedEnv(t *testing.T) *signedEnv {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	e := &signedEnv{fake: githubtest.New(t, &key.PublicKey), repo: tasks.Issue{InstallationID: 1, Owner: "acme", Repo: "widgets", Number: 1}}
	e.remote = githubtest.NewGitRemote(t, e.fake.ValidToken)
	e.remote.Create(t, "acme", "widgets", "main", map[string]string{
		"a.txt": "a\n", "run.sh": "#!/bin/sh\necho hi\n", "old.txt": "going\n", "docs/keep.md": "kept\n",
	})
	e.fake.AddRepo(githubtest.Repo{Owner: "acme", Name: "widgets", DefaultBranch: "main", CloneURL: e.remote.CloneURL("acme", "widgets"),
		Heads: func(b string) string { return e.remote.Head(t, "acme", "widgets", b) }})
	e.fake.AddIssue(githubtest.Issue{Owner: "acme", Repo: "widgets", Number: 1, Title: "Fix it", Author: "acme"})
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if e.app, err = githubapi.NewApp(githubtest.AppID, pemKey, e.fake.URL, nil); err != nil {
		t.Fatal(err)
	}
	return e
}

// clone clones branch as a run does, with a token for the repository.
func (e *signedEnv) clone(t *testing.T, branch string) *gitrepo.Repo {
	t.Helper()
	token, err := e.app.RepoToken(context.Background(), e.repo)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	r, err := gitrepo.Clone(context.Background(), gitrepo.CloneOptions{URL: e.remote.CloneURL("acme", "widgets"), Branch: branch,
		Auth: &http.BasicAuth{Username: "x-access-token", Password: token}, Worktree: filepath.Join(dir, "work"), GitDir: filepath.Join(dir, "git")})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// commit commits the work tree's changes to agent/issue-1 in the clone.
func commit(t *testing.T, r *gitrepo.Repo) plumbing.Hash {
	t.Helper()
	changes, err := r.Changes()
	if err != nil {
		t.Fatal(err)
	}
	h, err := r.Commit(changes, gitrepo.CommitOptions{Branch: "agent/issue-1", Message: "Fix it\n\nFor issue #1.\n",
		Author: gitrepo.Signature{Name: githubtest.BotLogin, Email: "bot@example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func (e *signedEnv) publisher(expected plumbing.Hash) *publisher {
	return &publisher{gh: e.app, issue: e.repo, title: "Fix it", branch: "agent/issue-1", base: "main",
		log: slog.New(slog.DiscardHandler), expected: expected}
}

// On a repository whose rules require signed commits, the run's commit
// (a binary file, a symlink, an executable bit, a deletion, a new
// directory) is refused as a git push and accepted through GitHub's API:
// GitHub's commit has the clone's tree, is verified, and is the head
// that the branch, the pull request's pushed marker and the result name.
func TestSignedCommitThroughTheAPI(t *testing.T) {
	e := newSignedEnv(t)
	e.remote.RequireSignedCommits(t, "acme", "widgets")
	r := e.clone(t, "main")
	w := r.Worktree()
	binary := make([]byte, 256)
	for i := range binary {
		binary[i] = byte(i)
	}
	must(t, os.WriteFile(filepath.Join(w, "logo.bin"), binary, 0o644))
	must(t, os.Symlink("a.txt", filepath.Join(w, "link")))
	must(t, os.Chmod(filepath.Join(w, "run.sh"), 0o755))
	must(t, os.Remove(filepath.Join(w, "old.txt")))
	must(t, os.MkdirAll(filepath.Join(w, "sub", "deep"), 0o755))
	must(t, os.WriteFile(filepath.Join(w, "sub", "deep", "new.txt"), []byte("new\n"), 0o644))
	local := commit(t, r)

	ctx := context.Background()
	if err := r.Push(ctx, "agent/issue-1", plumbing.ZeroHash); err == nil || !strings.Contains(err.Error(), "hook declined") {
		t.Fatalf("an unsigned git push under the rule: %v", err)
	}
	res := &pipeline.Result{Branch: "agent/issue-1", HeadCommit: local.String()}
	url, err := e.publisher(plumbing.ZeroHash).Publish(ctx, r, res)
	if err != nil {
		t.Fatal(err)
	}
	head := e.remote.Head(t, "acme", "widgets", "agent/issue-1")
	if head == "" || head == local.String() || res.HeadCommit != head {
		t.Fatalf("branch at %q, result names %q, the clone's commit is %s: want GitHub's commit everywhere", head, res.HeadCommit, local)
	}
	if !e.remote.Verified("acme", "widgets", head) {
		t.Error("GitHub's commit is not verified")
	}
	dir := e.remote.Dir("acme", "widgets")
	localTree := localTreeOf(t, r, local)
	if tree := strings.TrimSpace(githubtest.Git(t, dir, "rev-parse", head+"^{tree}")); tree != localTree {
		t.Errorf("GitHub's tree %s differs from the clone's %s:\n%s", tree, localTree, githubtest.Git(t, dir, "ls-tree", "-r", head))
	}
	listing := githubtest.Git(t, dir, "ls-tree", "-r", head)
	for _, want := range []string{"120000 blob", "100755 blob"} {
		if !strings.Contains(listing, want) {
			t.Errorf("tree lacks a %s entry:\n%s", want, listing)
		}
	}
	if parent := strings.TrimSpace(githubtest.Git(t, dir, "rev-parse", head+"^")); parent != r.Base().String() {
		t.Errorf("parent %s, want the base %s", parent, r.Base())
	}
	pulls := e.fake.Pulls("acme", "widgets")
	if len(pulls) != 1 || pulls[0].HeadSHA != head || marker.ParsePushed(pulls[0].Body) != head || url == "" {
		t.Errorf("pull requests %+v: want one, its pushed marker GitHub's commit %s", pulls, head)
	}
}

// The ref update is compare-and-swap, as the push was: a branch someone
// pushed to after the clone, or one that appeared for a new branch, is
// left as it is and the publish says the remote moved.
func TestSignedCommitRefusesAMovedBranch(t *testing.T) {
	e := newSignedEnv(t)
	ctx := context.Background()
	dir := e.remote.Dir("acme", "widgets")
	main := e.remote.Head(t, "acme", "widgets", "main")

	// A new branch that someone created meanwhile.
	r := e.clone(t, "main")
	must(t, os.WriteFile(filepath.Join(r.Worktree(), "a.txt"), []byte("b\n"), 0o644))
	local := commit(t, r)
	githubtest.Git(t, dir, "branch", "agent/issue-1", main)
	res := &pipeline.Result{Branch: "agent/issue-1", HeadCommit: local.String()}
	if _, err := e.publisher(plumbing.ZeroHash).Publish(ctx, r, res); !errors.Is(err, gitrepo.ErrRemoteMoved) {
		t.Fatalf("branch created meanwhile: %v, want ErrRemoteMoved", err)
	}
	if got := e.remote.Head(t, "acme", "widgets", "agent/issue-1"); got != main {
		t.Fatalf("the branch moved to %s", got)
	}

	// A retry's clone of the branch, then someone pushes to it.
	r = e.clone(t, "agent/issue-1")
	must(t, os.WriteFile(filepath.Join(r.Worktree(), "a.txt"), []byte("c\n"), 0o644))
	local = commit(t, r)
	other := strings.TrimSpace(githubtest.Git(t, dir, "commit-tree", main+"^{tree}", "-p", main, "-m", "someone else"))
	githubtest.Git(t, dir, "update-ref", "refs/heads/agent/issue-1", other)
	res = &pipeline.Result{Branch: "agent/issue-1", HeadCommit: local.String()}
	if _, err := e.publisher(r.Base()).Publish(ctx, r, res); !errors.Is(err, gitrepo.ErrRemoteMoved) {
		t.Fatalf("branch pushed to after the clone: %v, want ErrRemoteMoved", err)
	}
	if got := e.remote.Head(t, "acme", "widgets", "agent/issue-1"); got != other {
		t.Fatalf("someone's commit was overwritten: branch at %s", got)
	}
	if len(e.fake.Pulls("acme", "widgets")) != 0 {
		t.Error("a pull request was opened for a refused commit")
	}
}

func localTreeOf(t *testing.T, r *gitrepo.Repo, h plumbing.Hash) string {
	t.Helper()
	d, err := r.Delta(h)
	if err != nil {
		t.Fatal(err)
	}
	return d.Tree.String()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A change past the API's bounds (here more files than
// MaxCommitAPIFiles) is pushed with git as before: the branch holds the
// clone's own commit, unsigned, and the body opens with a note that says
// so. Nothing was sent to the Git Data endpoints.
func TestTooLargeChangeIsPushedUnsigned(t *testing.T) {
	e := newSignedEnv(t)
	r := e.clone(t, "main")
	for i := range githubapi.MaxCommitAPIFiles + 1 {
		must(t, os.WriteFile(filepath.Join(r.Worktree(), fmt.Sprintf("f%04d.txt", i)), []byte(fmt.Sprintln(i)), 0o644))
	}
	local := commit(t, r)
	res := &pipeline.Result{Branch: "agent/issue-1", HeadCommit: local.String()}
	if _, err := e.publisher(plumbing.ZeroHash).Publish(context.Background(), r, res); err != nil {
		t.Fatal(err)
	}
	head := e.remote.Head(t, "acme", "widgets", "agent/issue-1")
	if head != local.String() || res.HeadCommit != head || e.remote.Verified("acme", "widgets", head) {
		t.Fatalf("branch at %s (verified %v), result %s; want the clone's commit %s, unsigned", head, e.remote.Verified("acme", "widgets", head), res.HeadCommit, local)
	}
	pulls := e.fake.Pulls("acme", "widgets")
	if len(pulls) != 1 || !strings.Contains(pulls[0].Body, "This commit is not signed") {
		t.Fatalf("pull requests %+v: want one whose body says the commit is not signed", pulls)
	}
	for _, req := range e.fake.Requests() {
		if strings.Contains(req.Path, "/git/") {
			t.Errorf("a Git Data request was made: %s %s", req.Method, req.Path)
		}
	}
}

// A file over GitHub's blob limit is refused before any request.
func TestOversizedBlobIsRefusedBeforeAnyRequest(t *testing.T) {
	e := newSignedEnv(t)
	before := len(e.fake.Requests())
	_, err := e.app.CreateCommit(context.Background(), e.repo, githubapi.NewCommit{Branch: "agent/issue-1",
		Files: []githubapi.CommitFile{{Path: "huge.bin", Mode: "100644", Size: githubapi.MaxBlobBytes + 1}}})
	if !errors.Is(err, githubapi.ErrTooLargeForAPI) || !strings.Contains(err.Error(), "huge.bin") {
		t.Fatalf("oversized blob: %v", err)
	}
	if n := len(e.fake.Requests()) - before; n != 0 {
		t.Errorf("%d requests made", n)
	}
}

// A stale agent branch (an earlier run's, not under the new commit) is
// replaced by a forced update that holds only while the branch is where
// the run found it: a push that lands between the run's look and its
// update (here as the update request arrives, whichever request that
// is) is kept, and the publish says the remote moved.
func TestSignedCommitReplacesAStaleBranchAtomically(t *testing.T) {
	e := newSignedEnv(t)
	ctx := context.Background()
	dir := e.remote.Dir("acme", "widgets")
	main := e.remote.Head(t, "acme", "widgets", "main")
	staleBranch := func(msg string) string {
		sha := strings.TrimSpace(githubtest.Git(t, dir, "commit-tree", main+"^{tree}", "-p", main, "-m", msg))
		githubtest.Git(t, dir, "update-ref", "refs/heads/agent/issue-1", sha)
		return sha
	}

	// Nobody interferes: the stale branch is replaced.
	stale := staleBranch("an earlier attempt")
	r := e.clone(t, "main")
	must(t, os.WriteFile(filepath.Join(r.Worktree(), "a.txt"), []byte("b\n"), 0o644))
	res := &pipeline.Result{Branch: "agent/issue-1", HeadCommit: commit(t, r).String()}
	if _, err := e.publisher(plumbing.NewHash(stale)).Publish(ctx, r, res); err != nil {
		t.Fatal(err)
	}
	if got := e.remote.Head(t, "acme", "widgets", "agent/issue-1"); got != res.HeadCommit {
		t.Fatalf("the stale branch is at %s, want the new commit %s", got, res.HeadCommit)
	}

	// Someone pushes just before the update.
	stale = staleBranch("another earlier attempt")
	theirs := strings.TrimSpace(githubtest.Git(t, dir, "commit-tree", main+"^{tree}", "-p", stale, "-m", "someone's fix"))
	push := func() { githubtest.Git(t, dir, "update-ref", "refs/heads/agent/issue-1", theirs) }
	e.fake.Fail(githubtest.Fault{Method: "PATCH", Path: "/repos/acme/widgets/git/refs/", Before: push})
	e.fake.Fail(githubtest.Fault{Method: "POST", Path: "/graphql", Before: push})
	r = e.clone(t, "main")
	must(t, os.WriteFile(filepath.Join(r.Worktree(), "a.txt"), []byte("c\n"), 0o644))
	res = &pipeline.Result{Branch: "agent/issue-1", HeadCommit: commit(t, r).String()}
	if _, err := e.publisher(plumbing.NewHash(stale)).Publish(ctx, r, res); !errors.Is(err, gitrepo.ErrRemoteMoved) {
		t.Fatalf("a push before the update: %v, want ErrRemoteMoved", err)
	}
	if got := e.remote.Head(t, "acme", "widgets", "agent/issue-1"); got != theirs {
		t.Fatalf("someone's push was overwritten: the branch is at %s, want %s", got, theirs)
	}
}
