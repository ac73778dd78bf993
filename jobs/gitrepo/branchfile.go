package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
)

// ReadBranchFile reads path as the tip of branch on the remote has it,
// through a depth-1 clone into memory with no work tree: the file is read
// as a git object, never from a tree a command could have written. It
// returns nil, nil when the commit has no such file.
func ReadBranchFile(ctx context.Context, opts CloneOptions, branch, path string) ([]byte, error) {
	commit, err := branchCommit(ctx, opts, branch)
	if err != nil {
		return nil, fmt.Errorf("read %s of %s: %w", path, branch, err)
	}
	return commitFile(commit, path)
}

// ReadBranchFirst is ReadBranchFile for the first of patterns the branch's
// tip has (see FirstFile); "" and nil when it has none.
func ReadBranchFirst(ctx context.Context, opts CloneOptions, branch string, patterns []string) (string, []byte, error) {
	commit, err := branchCommit(ctx, opts, branch)
	if err != nil {
		return "", nil, fmt.Errorf("read %s of %s: %w", strings.Join(patterns, ", "), branch, err)
	}
	return firstFile(commit, patterns)
}

// BaseFirst is FirstFile at the base commit.
func (r *Repo) BaseFirst(patterns []string) (string, []byte, error) {
	commit, err := r.repo.CommitObject(r.base)
	if err != nil {
		return "", nil, fmt.Errorf("read base commit: %w", err)
	}
	return firstFile(commit, patterns)
}

func branchCommit(ctx context.Context, opts CloneOptions, branch string) (*object.Commit, error) {
	repo, err := git.CloneContext(ctx, memory.NewStorage(), nil, &git.CloneOptions{
		URL: opts.URL, Auth: opts.Auth, ReferenceName: plumbing.NewBranchReferenceName(branch),
		SingleBranch: true, Depth: 1, Tags: git.NoTags, NoCheckout: true,
	})
	if err != nil {
		return nil, fmt.Errorf("clone %s: %w", redactURL(opts.URL), err)
	}
	head, err := repo.Head()
	if err != nil {
		return nil, err
	}
	return repo.CommitObject(head.Hash())
}

func commitFile(commit *object.Commit, path string) ([]byte, error) {
	f, err := commit.File(path)
	if errors.Is(err, object.ErrFileNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	s, err := f.Contents()
	return []byte(s), err
}

// firstFile finds the first of patterns the commit has, as a git object.
// A pattern is a path whose last element may be "*.md" (the first such
// file of the folder by name); folders and names match without regard to
// case, as GitHub finds its template files.
func firstFile(commit *object.Commit, patterns []string) (string, []byte, error) {
	root, err := commit.Tree()
	if err != nil {
		return "", nil, err
	}
	for _, p := range patterns {
		dir, name := path.Split(p)
		tree, real := root, ""
		for _, part := range strings.Split(strings.Trim(dir, "/"), "/") {
			if part == "" {
				continue
			}
			var found string
			if tree, found = subtree(tree, part); tree == nil {
				break
			}
			real = path.Join(real, found)
		}
		if tree == nil {
			continue
		}
		var names []string
		for _, e := range tree.Entries {
			if !e.Mode.IsFile() {
				continue
			}
			if ok, _ := path.Match(strings.ToLower(name), strings.ToLower(e.Name)); ok {
				names = append(names, e.Name)
			}
		}
		if len(names) == 0 {
			continue
		}
		sort.Strings(names)
		f, err := tree.File(names[0])
		if err != nil {
			return "", nil, err
		}
		s, err := f.Contents()
		return path.Join(real, names[0]), []byte(s), err
	}
	return "", nil, nil
}

// subtree is the folder of t named name without regard to case, and its
// name as written; nil when there is none.
func subtree(t *object.Tree, name string) (*object.Tree, string) {
	for _, e := range t.Entries {
		if e.Mode == filemode.Dir && strings.EqualFold(e.Name, name) {
			sub, err := t.Tree(e.Name)
			if err != nil {
				return nil, ""
			}
			return sub, e.Name
		}
	}
	return nil, ""
}
