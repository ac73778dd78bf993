package gitrepo

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
)

// ReadBranchFile reads path as the tip of branch on the remote has it,
// through a depth-1 clone into memory with no work tree: the file is read
// as a git object, never from a tree a command could have written. It
// returns nil, nil when the commit has no such file.
func ReadBranchFile(ctx context.Context, opts CloneOptions, branch, path string) ([]byte, error) {
	repo, err := git.CloneContext(ctx, memory.NewStorage(), nil, &git.CloneOptions{
		URL: opts.URL, Auth: opts.Auth, ReferenceName: plumbing.NewBranchReferenceName(branch),
		SingleBranch: true, Depth: 1, Tags: git.NoTags, NoCheckout: true,
	})
	if err != nil {
		return nil, fmt.Errorf("read %s of %s: clone %s: %w", path, branch, redactURL(opts.URL), err)
	}
	head, err := repo.Head()
	if err != nil {
		return nil, fmt.Errorf("read %s of %s: %w", path, branch, err)
	}
	commit, err := repo.CommitObject(head.Hash())
	if err != nil {
		return nil, fmt.Errorf("read %s of %s: %w", path, branch, err)
	}
	f, err := commit.File(path)
	if errors.Is(err, object.ErrFileNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s of %s: %w", path, branch, err)
	}
	s, err := f.Contents()
	return []byte(s), err
}
