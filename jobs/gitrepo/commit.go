package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// CommitOptions describe the commit of a change.
type CommitOptions struct {
	// Branch receives the commit, for example "agent/issue-41". Required.
	Branch string
	// Message is the commit message. Required.
	Message string
	// Author signs the commit; Committer defaults to Author.
	Author    Signature
	Committer Signature
	// Time of the commit; zero means now.
	Time time.Time
}

// Signature is a name and e-mail address.
type Signature struct {
	Name  string
	Email string
}

// ErrNothingToCommit is returned by Commit for an empty change list.
var ErrNothingToCommit = errors.New("nothing to commit")

// Commit writes exactly the given changes, with the bytes Changes read
// (never reading the work tree again, which untrusted code may have
// written since), as a tree on top of the last commit (the base, then the
// previous Commit), commits it and points Branch at it. On a merge
// LayMerge made, the commit takes the merge's place: its parents are the
// merge's two. The index is
// updated so that a later Changes compares with this commit. A change
// to a path git treats as its own is refused (ErrGitPath).
func (r *Repo) Commit(changes []Change, opts CommitOptions) (plumbing.Hash, error) {
	if len(changes) == 0 {
		return plumbing.ZeroHash, ErrNothingToCommit
	}
	if opts.Branch == "" || strings.TrimSpace(opts.Message) == "" {
		return plumbing.ZeroHash, errors.New("commit: Branch and Message are required")
	}
	if err := checkGitPaths(changes); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("commit: %w", err)
	}
	parent, err := r.repo.CommitObject(r.head())
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("commit: read parent: %w", err)
	}
	tree, err := r.writeTree(parent.TreeHash, changes)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("commit: %w", err)
	}
	when := opts.Time
	if when.IsZero() {
		when = time.Now()
	}
	committer := opts.Committer
	if committer.Name == "" {
		committer = opts.Author
	}
	c := &object.Commit{
		Author:       object.Signature{Name: opts.Author.Name, Email: opts.Author.Email, When: when},
		Committer:    object.Signature{Name: committer.Name, Email: committer.Email, When: when},
		Message:      opts.Message,
		TreeHash:     tree,
		ParentHashes: r.parentsOf(parent),
	}
	hash, err := r.store(c)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("commit: %w", err)
	}
	if err := r.updateIndex(changes); err != nil {
		return plumbing.ZeroHash, err
	}
	ref := plumbing.NewHashReference(plumbing.NewBranchReferenceName(opts.Branch), hash)
	if err := r.repo.Storer.SetReference(ref); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("set branch %s: %w", opts.Branch, err)
	}
	r.last = hash
	return hash, nil
}

// head is the last commit: the base, or the latest Commit.
func (r *Repo) head() plumbing.Hash {
	if !r.last.IsZero() {
		return r.last
	}
	return r.base
}

// ErrRemoteMoved is returned by Push when the remote branch is not where
// the caller expected it: someone else pushed to it.
var ErrRemoteMoved = errors.New("remote branch moved")

// Push sends Branch to the remote as compare-and-swap. With a zero
// expected hash the branch must not exist on the remote (a plain push, so a
// branch that appeared meanwhile with other commits is refused); otherwise
// the remote branch must still be at expected, and is then force-updated.
// A remote that is a local repository (`patchwright run --repo`) gets the
// objects copied and its branch set directly (see pushLocal).
func (r *Repo) Push(ctx context.Context, branch string, expected plumbing.Hash) error {
	if remote, err := r.repo.Remote("origin"); err == nil && len(remote.Config().URLs) > 0 {
		if dir, ok := localPath(remote.Config().URLs[0]); ok {
			return r.pushLocal(dir, branch, expected)
		}
	}
	ref := plumbing.NewBranchReferenceName(branch)
	spec := config.RefSpec(ref.String() + ":" + ref.String())
	opts := &git.PushOptions{RemoteName: "origin", Auth: r.auth}
	if !expected.IsZero() {
		spec = "+" + spec
		opts.RequireRemoteRefs = []config.RefSpec{config.RefSpec(expected.String() + ":" + ref.String())}
	}
	opts.RefSpecs = []config.RefSpec{spec}
	err := r.repo.PushContext(ctx, opts)
	switch {
	case err == nil, errors.Is(err, git.NoErrAlreadyUpToDate):
		return nil
	case errors.Is(err, git.ErrNonFastForwardUpdate),
		strings.Contains(err.Error(), "required to be"),
		strings.Contains(err.Error(), "non-fast-forward"):
		return fmt.Errorf("push %s: %w: %v", branch, ErrRemoteMoved, err)
	}
	return fmt.Errorf("push %s: %w", branch, err)
}

// RemoteBranches lists the remote's branch names.
func (r *Repo) RemoteBranches(ctx context.Context) (map[string]plumbing.Hash, error) {
	remote, err := r.repo.Remote("origin")
	if err != nil {
		return nil, fmt.Errorf("remote origin: %w", err)
	}
	refs, err := remote.ListContext(ctx, &git.ListOptions{Auth: r.auth})
	if err != nil {
		return nil, fmt.Errorf("list remote refs: %w", err)
	}
	out := map[string]plumbing.Hash{}
	for _, ref := range refs {
		if ref.Name().IsBranch() {
			out[ref.Name().Short()] = ref.Hash()
		}
	}
	return out, nil
}
