package gitrepo

import (
	"fmt"
	"io"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/utils/merkletrie"
)

// Delta is what a commit of this clone changed against its parent, in the
// terms GitHub's Git Data API takes to make the same commit on the
// remote: a tree built on the parent's tree by path entries, then a
// commit of it. Its files are read from the clone's own objects, the
// bytes Changes scanned.
type Delta struct {
	Parent plumbing.Hash
	// Merged is a merge commit's second parent (the base merged in),
	// whose tree BaseTree is then: the files are what the merge changed
	// against it. Zero for a commit with one parent.
	Merged   plumbing.Hash
	BaseTree plumbing.Hash
	// Tree is the commit's tree; the remote's tree has the same hash when
	// it was built from the same entries.
	Tree    plumbing.Hash
	Message string
	// Files are deletions first (so a file may replace a directory),
	// then the rest, each group by path.
	Files []DeltaFile
}

// DeltaFile is one path of a Delta.
type DeltaFile struct {
	Path string
	// Mode is git's mode: regular, executable or a symlink; zero for a
	// deletion.
	Mode filemode.FileMode
	Blob plumbing.Hash
	Size int64
}

// Deleted reports a path the commit removed.
func (f DeltaFile) Deleted() bool { return f.Mode == filemode.Empty }

// Delta reads what commit changed against its only parent, or, for a
// merge of two, against the second (the base merged in: the files are
// then the pull request's side and the resolution, usually fewer than
// what the base brought).
func (r *Repo) Delta(commit plumbing.Hash) (Delta, error) {
	c, err := r.repo.CommitObject(commit)
	if err != nil {
		return Delta{}, fmt.Errorf("read commit %s: %w", commit, err)
	}
	if c.NumParents() != 1 && c.NumParents() != 2 {
		return Delta{}, fmt.Errorf("commit %s has %d parents, want 1 or 2", commit, c.NumParents())
	}
	parent, err := c.Parent(c.NumParents() - 1)
	if err != nil {
		return Delta{}, fmt.Errorf("read the parent of %s: %w", commit, err)
	}
	from, err := parent.Tree()
	if err != nil {
		return Delta{}, fmt.Errorf("read tree of %s: %w", parent.Hash, err)
	}
	to, err := c.Tree()
	if err != nil {
		return Delta{}, fmt.Errorf("read tree of %s: %w", commit, err)
	}
	changes, err := object.DiffTree(from, to)
	if err != nil {
		return Delta{}, fmt.Errorf("compare %s with its parent: %w", commit, err)
	}
	d := Delta{Parent: parent.Hash, BaseTree: from.Hash, Tree: to.Hash, Message: c.Message}
	if c.NumParents() == 2 {
		d.Parent, d.Merged = c.ParentHashes[0], parent.Hash
	}
	for _, ch := range changes {
		action, err := ch.Action()
		if err != nil {
			return Delta{}, err
		}
		if action == merkletrie.Delete {
			d.Files = append(d.Files, DeltaFile{Path: ch.From.Name})
			continue
		}
		f := DeltaFile{Path: ch.To.Name, Mode: ch.To.TreeEntry.Mode, Blob: ch.To.TreeEntry.Hash}
		if f.Size, err = r.repo.Storer.EncodedObjectSize(f.Blob); err != nil {
			return Delta{}, fmt.Errorf("size of %s: %w", f.Path, err)
		}
		d.Files = append(d.Files, f)
	}
	sort.SliceStable(d.Files, func(i, j int) bool {
		a, b := d.Files[i], d.Files[j]
		if a.Deleted() != b.Deleted() {
			return a.Deleted()
		}
		return a.Path < b.Path
	})
	return d, nil
}

// OpenBlob reads a blob of the clone, such as a DeltaFile's.
func (r *Repo) OpenBlob(h plumbing.Hash) (io.ReadCloser, error) { return r.blobReader(h) }
