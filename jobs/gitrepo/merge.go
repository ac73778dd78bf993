package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"

	"github.com/go-git/go-git/v5"
	gitconfig "github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/utils/merkletrie"
)

// A pull request's base moved and GitHub could not merge it (a
// conflict): the clone, the pull request's head at depth 1, becomes the
// merge of the new base into it, computed here (merge3.go), and that
// merge is the clone's base from then on. So the pristine tree is the
// merge, what the model changes is read against it (never the base's own
// changes), and Commit makes the merge commit: the merge's tree with the
// change, and the merge's two parents.

// MergeInput is the merge of commit Theirs (the new base) into the
// clone's base (ours), whose merge base is Base. Both are fetched.
type MergeInput struct {
	Base, Theirs plumbing.Hash
	Labels       Labels
}

// Merged is what LayMerge made.
type Merged struct {
	// Commit is the merge before anyone edited it, markers and all: the
	// clone's base from now on. Nobody pushes it.
	Commit plumbing.Hash
	// Conflicts are the paths that hold conflict markers, in order.
	Conflicts []string
	// Ours and Theirs are the paths each side changed since the merge
	// base.
	Ours, Theirs []string
}

// ErrUnmergeable wraps the reason a path both sides changed cannot be
// merged line by line (a binary file or a symbolic link).
var ErrUnmergeable = errors.New("cannot be merged line by line")

// FetchCommit fetches commit h, depth 1, into the clone's objects (GitHub
// serves any commit reachable from a branch by its SHA).
func (r *Repo) FetchCommit(ctx context.Context, h plumbing.Hash) error {
	if _, err := r.repo.CommitObject(h); err == nil {
		return nil
	}
	ref := "refs/patchwright/commit/" + h.String()
	err := r.repo.FetchContext(ctx, &git.FetchOptions{
		RemoteName: git.DefaultRemoteName, Auth: r.auth, Depth: 1, Tags: git.NoTags,
		RefSpecs: []gitconfig.RefSpec{gitconfig.RefSpec(h.String() + ":" + ref)},
	})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return fmt.Errorf("fetch commit %s: %w", h, err)
	}
	return nil
}

// LayMerge merges in.Theirs into the clone's base, writes the result
// over the work tree, and makes it the clone's base (Base, the index and
// the parent of the next Commit). Every path only the clone's base
// changed since in.Base is taken from it, every path only Theirs changed
// from Theirs, and a path both changed is merged line by line, with
// markers where the changes collide.
func (r *Repo) LayMerge(ctx context.Context, in MergeInput) (Merged, error) {
	for _, h := range []plumbing.Hash{in.Base, in.Theirs} {
		if err := r.FetchCommit(ctx, h); err != nil {
			return Merged{}, err
		}
	}
	ours, err := r.treeDiff(in.Base, r.base)
	if err != nil {
		return Merged{}, err
	}
	theirs, err := r.treeDiff(in.Base, in.Theirs)
	if err != nil {
		return Merged{}, err
	}
	m := Merged{Ours: editNames(ours), Theirs: editNames(theirs)}
	edits, err := r.mergeEdits(in, ours, theirs, &m)
	if err != nil {
		return Merged{}, err
	}
	if m.Commit, err = r.storeMerge(in.Theirs, edits); err != nil {
		return Merged{}, err
	}
	root, err := os.OpenRoot(r.worktree)
	if err != nil {
		return Merged{}, err
	}
	defer root.Close()
	if _, err := r.Overlay(root, r.base, m.Commit); err != nil {
		return Merged{}, fmt.Errorf("lay the merge over the work tree: %w", err)
	}
	if err := r.indexTree(m.Commit); err != nil {
		return Merged{}, err
	}
	r.base, r.merge = m.Commit, m.Commit
	return m, nil
}

// mergeEdits are the changes that turn Theirs' tree into the merge: the
// clone's own paths, and the merged ones (recorded in m.Conflicts when
// they hold markers).
func (r *Repo) mergeEdits(in MergeInput, ours, theirs []treeEdit, m *Merged) ([]Change, error) {
	byPath := map[string]treeEdit{}
	for _, e := range theirs {
		byPath[e.Name] = e
	}
	var out []Change
	for _, o := range ours {
		t, both := byPath[o.Name]
		switch {
		case !both:
			out = append(out, editChange(o))
		case o.Action == t.Action && o.Entry.Hash == t.Entry.Hash && o.Entry.Mode == t.Entry.Mode:
			// The same change on both sides.
		default:
			c, conflicts, err := r.mergeFile(in, o, t)
			if err != nil {
				return nil, err
			}
			if conflicts > 0 {
				m.Conflicts = append(m.Conflicts, o.Name)
			}
			out = append(out, c)
		}
	}
	sort.Strings(m.Conflicts)
	return out, nil
}

// editChange is a tree edit as the Change Commit writes.
func editChange(e treeEdit) Change {
	if e.Action == merkletrie.Delete {
		return Change{Path: e.Name, Kind: Deleted}
	}
	return Change{Path: e.Name, Kind: Modified, mode: e.Entry.Mode, blob: e.Entry.Hash}
}

// mergeFile merges one path both sides changed; a side that deleted it
// is empty, so keeping or dropping the other side's edit is a conflict
// to decide.
func (r *Repo) mergeFile(in MergeInput, o, t treeEdit) (Change, int, error) {
	for _, e := range []treeEdit{o, t} {
		if e.Entry.Mode == filemode.Symlink {
			return Change{}, 0, fmt.Errorf("%s: a symbolic link both sides changed %w", e.Name, ErrUnmergeable)
		}
	}
	var texts [3][]byte
	for i, e := range []treeEdit{{Name: o.Name, Entry: r.entryAt(in.Base, o.Name)}, o, t} {
		if e.Entry.Hash.IsZero() || e.Action == merkletrie.Delete {
			continue
		}
		b, err := r.blob(e.Entry.Hash)
		if err != nil {
			return Change{}, 0, err
		}
		if isBinary(b) {
			return Change{}, 0, fmt.Errorf("%s: a binary file both sides changed %w", o.Name, ErrUnmergeable)
		}
		texts[i] = b
	}
	merged, n := Merge3(texts[0], texts[1], texts[2], in.Labels)
	blob, err := r.storeBlob(merged)
	if err != nil {
		return Change{}, 0, err
	}
	mode := t.Entry.Mode
	if o.Action != merkletrie.Delete && (mode == filemode.Empty || o.Entry.Mode != r.entryAt(in.Base, o.Name).Mode) {
		mode = o.Entry.Mode
	}
	if mode == filemode.Empty {
		mode = filemode.Regular
	}
	return Change{Path: o.Name, Kind: Modified, mode: mode, blob: blob, size: int64(len(merged))}, n, nil
}

// entryAt is path's entry in commit h; zero when it holds none.
func (r *Repo) entryAt(h plumbing.Hash, p string) object.TreeEntry {
	c, err := r.repo.CommitObject(h)
	if err != nil {
		return object.TreeEntry{}
	}
	t, err := c.Tree()
	if err != nil {
		return object.TreeEntry{}
	}
	e, err := t.FindEntry(p)
	if err != nil {
		return object.TreeEntry{}
	}
	return *e
}

// storeMerge stores the merge commit before any edit: Theirs' tree with
// edits, the clone's base and Theirs as parents.
func (r *Repo) storeMerge(theirs plumbing.Hash, edits []Change) (plumbing.Hash, error) {
	tc, err := r.repo.CommitObject(theirs)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	tree, err := r.writeTree(tc.TreeHash, edits)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write the merged tree: %w", err)
	}
	sig := object.Signature{Name: "Patchwright", Email: "merge@patchwright.invalid", When: tc.Committer.When}
	return r.store(&object.Commit{Author: sig, Committer: sig, Message: "merge before conflicts are resolved\n",
		TreeHash: tree, ParentHashes: []plumbing.Hash{r.base, theirs}})
}

// indexTree makes the index hold commit h's tree, so that Changes
// compares the work tree with it.
func (r *Repo) indexTree(h plumbing.Hash) error {
	c, err := r.repo.CommitObject(h)
	if err != nil {
		return err
	}
	t, err := c.Tree()
	if err != nil {
		return err
	}
	idx := &index.Index{Version: 2}
	w := object.NewTreeWalker(t, true, nil)
	defer w.Close()
	for {
		name, e, err := w.Next()
		if err != nil {
			break
		}
		if e.Mode == filemode.Dir {
			continue
		}
		idx.Entries = append(idx.Entries, &index.Entry{Name: name, Mode: e.Mode, Hash: e.Hash})
	}
	sort.Slice(idx.Entries, func(i, j int) bool { return idx.Entries[i].Name < idx.Entries[j].Name })
	if err := r.repo.Storer.SetIndex(idx); err != nil {
		return fmt.Errorf("write index: %w", err)
	}
	return nil
}

func editNames(es []treeEdit) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Name
	}
	sort.Strings(out)
	return out
}

// parentsOf are the parents of a commit on top of parent: parent, or,
// on the merge LayMerge made, that merge's own parents (the commit
// replaces it).
func (r *Repo) parentsOf(parent *object.Commit) []plumbing.Hash {
	if !r.merge.IsZero() && parent.Hash == r.merge {
		return parent.ParentHashes
	}
	return []plumbing.Hash{parent.Hash}
}
