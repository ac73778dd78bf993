// Package gitrepo is the job's git workspace, on go-git: clone a remote (a
// local path or GitHub over HTTP), find exactly what changed in the work
// tree, commit those paths, and push as compare-and-swap.
//
// The git directory lives apart from the work tree and is never mounted in
// the sandbox: a command in the sandbox can change any file of the work
// tree, but it cannot plant hooks, alternates or configuration that the
// host-side git code would then act on.
package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// Repo is a clone with its work tree and its separate git directory.
type Repo struct {
	repo       *git.Repository
	worktree   string
	gitDir     string
	base       plumbing.Hash
	cloned     plumbing.Hash // the commit checked out; base until LayMerge
	last       plumbing.Hash // the latest Commit; zero before the first
	merge      plumbing.Hash // the merge LayMerge made; zero for none
	baseBranch string
	auth       transport.AuthMethod
}

// largeObject is the size past which go-git streams an object rather than
// reading it into memory.
const largeObject = 1 << 20

// CloneOptions says what to clone where.
type CloneOptions struct {
	// URL is the remote: a local path or an https URL. Required.
	URL string
	// Auth authenticates to the remote; nil for none. For GitHub it is
	// basic auth with user "x-access-token" and an installation token; it
	// is kept in memory only.
	Auth transport.AuthMethod
	// Branch to clone; empty means the remote's HEAD.
	Branch string
	// Depth limits history; zero means full history.
	Depth int
	// Worktree is the directory the files are checked out into (what the
	// sandbox mounts). It must be empty or absent. Required.
	Worktree string
	// GitDir holds the repository's objects and refs. It must be empty or
	// absent and outside Worktree. Required.
	GitDir string
}

// Clone clones one branch without tags (a depth-1 clone with tags fails on
// some real repositories: docs/design.md §6) and checks it out.
func Clone(ctx context.Context, opts CloneOptions) (*Repo, error) {
	if opts.URL == "" || opts.Worktree == "" || opts.GitDir == "" {
		return nil, errors.New("clone: URL, Worktree and GitDir are required")
	}
	// A blob over largeObject is streamed from its file when read, never
	// loaded whole (the change's blobs are read back to scan them).
	storage := filesystem.NewStorageWithOptions(osfs.New(opts.GitDir), cache.NewObjectLRUDefault(),
		filesystem.Options{LargeObjectThreshold: largeObject})
	co := &git.CloneOptions{
		URL:          opts.URL,
		Auth:         opts.Auth,
		Depth:        opts.Depth,
		SingleBranch: true,
		Tags:         git.NoTags,
	}
	if opts.Branch != "" {
		co.ReferenceName = plumbing.NewBranchReferenceName(opts.Branch)
	}
	repo, err := git.CloneContext(ctx, storage, osfs.New(opts.Worktree, osfs.WithBoundOS()), co)
	if err != nil {
		return nil, fmt.Errorf("clone %s: %w", redactURL(opts.URL), err)
	}
	// go-git leaves a ".git" file in the work tree that points at GitDir.
	// The sandbox has no use for it and should not learn host paths.
	if err := os.Remove(filepath.Join(opts.Worktree, ".git")); err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("clone: remove .git pointer: %w", err)
	}
	head, err := repo.Head()
	if err != nil {
		return nil, fmt.Errorf("clone %s: read HEAD: %w", redactURL(opts.URL), err)
	}
	return &Repo{
		repo:       repo,
		worktree:   opts.Worktree,
		gitDir:     opts.GitDir,
		base:       head.Hash(),
		cloned:     head.Hash(),
		baseBranch: head.Name().Short(),
		auth:       opts.Auth,
	}, nil
}

// Base is the commit the change is read against and the next Commit is
// made on: the commit the clone checked out, or the merge LayMerge made
// of it, which exists only in the clone.
func (r *Repo) Base() plumbing.Hash { return r.base }

// Cloned is the commit the clone checked out: where the remote branch was
// when it was cloned, whatever LayMerge made since.
func (r *Repo) Cloned() plumbing.Hash { return r.cloned }

// BaseBranch is the branch the clone checked out.
func (r *Repo) BaseBranch() string { return r.baseBranch }

// GitDir is the repository's git directory, outside the work tree; it can
// be opened with git.PlainOpen.
func (r *Repo) GitDir() string { return r.gitDir }

// Worktree is the work tree's directory.
func (r *Repo) Worktree() string { return r.worktree }

// redactURL drops credentials from a URL before it goes into an error.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	u.User = nil
	return u.String()
}
