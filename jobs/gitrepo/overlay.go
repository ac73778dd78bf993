package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"

	"github.com/go-git/go-git/v5"
	gitconfig "github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/utils/merkletrie"
)

// A retry clones the agent branch, whose commits a model wrote; its first
// setup runs on the default branch's commit instead (docs/design.md,
// trust), and the agent branch's files are laid over what that setup
// made. FetchTip and Overlay are the two steps git does for it.

// FetchTip fetches the tip of branch from the clone's remote, depth 1,
// into the clone's objects, and returns its commit. Nothing is checked
// out and no branch of the clone moves.
func (r *Repo) FetchTip(ctx context.Context, branch string) (plumbing.Hash, error) {
	ref := plumbing.ReferenceName("refs/patchwright/tip/" + branch)
	err := r.repo.FetchContext(ctx, &git.FetchOptions{
		RemoteName: git.DefaultRemoteName, Auth: r.auth, Depth: 1, Tags: git.NoTags,
		RefSpecs: []gitconfig.RefSpec{gitconfig.RefSpec("+" + plumbing.NewBranchReferenceName(branch).String() + ":" + ref.String())},
	})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return plumbing.ZeroHash, fmt.Errorf("fetch %s: %w", branch, err)
	}
	got, err := r.repo.Reference(ref, true)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("fetch %s: %w", branch, err)
	}
	return got.Hash(), nil
}

// Overlay makes every path whose file differs between the commits from
// and to hold to's version under root (a path to does not hold is
// removed), and returns those differences as changes from from to to
// (path and kind only: nothing was read as a change of the work tree).
// Paths the two commits hold alike, and files of no commit, are left as
// they are. Submodules are left out, as a clone leaves them.
func (r *Repo) Overlay(root *os.Root, from, to plumbing.Hash) ([]Change, error) {
	diff, err := r.treeDiff(from, to)
	if err != nil {
		return nil, err
	}
	// Removals first: a file may become a directory, or the reverse.
	sort.SliceStable(diff, func(i, j int) bool {
		di, dj := diff[i].Action == merkletrie.Delete, diff[j].Action == merkletrie.Delete
		return di && !dj
	})
	var out []Change
	for _, d := range diff {
		if err := root.RemoveAll(d.Name); err != nil {
			return nil, fmt.Errorf("overlay %s: %w", d.Name, err)
		}
		kind := Modified
		switch d.Action {
		case merkletrie.Delete:
			out = append(out, Change{Path: d.Name, Kind: Deleted})
			continue
		case merkletrie.Insert:
			kind = Added
		}
		if err := r.writeEntry(root, d.Name, d.Entry); err != nil {
			return nil, fmt.Errorf("overlay %s: %w", d.Name, err)
		}
		out = append(out, Change{Path: d.Name, Kind: kind, Symlink: d.Entry.Mode == filemode.Symlink})
	}
	return out, nil
}

// treeEdit is one path of a tree diff: what happens to it, and its entry
// in the new tree (zero for a removal).
type treeEdit struct {
	Name   string
	Action merkletrie.Action
	Entry  object.TreeEntry
}

func (r *Repo) treeDiff(from, to plumbing.Hash) ([]treeEdit, error) {
	var trees [2]*object.Tree
	for i, h := range []plumbing.Hash{from, to} {
		c, err := r.repo.CommitObject(h)
		if err != nil {
			return nil, fmt.Errorf("read commit %s: %w", h, err)
		}
		if trees[i], err = c.Tree(); err != nil {
			return nil, fmt.Errorf("read the tree of %s: %w", h, err)
		}
	}
	changes, err := object.DiffTree(trees[0], trees[1])
	if err != nil {
		return nil, fmt.Errorf("compare %s with %s: %w", from, to, err)
	}
	var out []treeEdit
	for _, c := range changes {
		a, err := c.Action()
		if err != nil {
			return nil, err
		}
		e := treeEdit{Name: c.To.Name, Action: a, Entry: c.To.TreeEntry}
		if a == merkletrie.Delete {
			e = treeEdit{Name: c.From.Name, Action: a}
		}
		if e.Entry.Mode == filemode.Submodule || (a == merkletrie.Delete && c.From.TreeEntry.Mode == filemode.Submodule) {
			continue
		}
		out = append(out, e)
	}
	return out, nil
}

// writeEntry writes a tree entry's blob at p under root: a link as a
// link, a file streamed from its blob with its mode.
func (r *Repo) writeEntry(root *os.Root, p string, e object.TreeEntry) error {
	if err := root.MkdirAll(path.Dir(p), 0o755); err != nil {
		return err
	}
	in, err := r.blobReader(e.Hash)
	if err != nil {
		return err
	}
	defer in.Close()
	if e.Mode == filemode.Symlink {
		target, err := io.ReadAll(io.LimitReader(in, 4096))
		if err != nil {
			return err
		}
		return root.Symlink(string(target), p)
	}
	perm := os.FileMode(0o644)
	if e.Mode == filemode.Executable {
		perm = 0o755
	}
	out, err := root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	return errors.Join(err, out.Close())
}
