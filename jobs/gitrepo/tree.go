package gitrepo

import (
	"fmt"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// writeTree stores the tree that is base with changes applied: the blobs
// Changes wrote, trees rebuilt along their paths, and returns its
// hash. Directories left empty disappear, as in git.
func (r *Repo) writeTree(base plumbing.Hash, changes []Change) (plumbing.Hash, error) {
	edits := map[string]*Change{}
	for i := range changes {
		c := &changes[i]
		if c.Kind != Deleted && c.TooLarge {
			return plumbing.ZeroHash, fmt.Errorf("%s is too large to commit", c.Path)
		}
		edits[c.Path] = c
	}
	h, _, err := r.rewrite(base, "", edits)
	return h, err
}

// rewrite rebuilds the tree at dir (hash h, zero for a new directory) with
// the edits under it; empty reports a tree left with no entries.
func (r *Repo) rewrite(h plumbing.Hash, dir string, edits map[string]*Change) (plumbing.Hash, bool, error) {
	entries := map[string]object.TreeEntry{}
	if !h.IsZero() {
		t, err := r.repo.TreeObject(h)
		if err != nil {
			return plumbing.ZeroHash, false, fmt.Errorf("read tree %s: %w", dir, err)
		}
		for _, e := range t.Entries {
			entries[e.Name] = e
		}
	}
	subdirs := map[string]bool{}
	for p, c := range edits {
		rest, ok := strings.CutPrefix(p, dir)
		if !ok {
			continue
		}
		name, deeper, nested := strings.Cut(rest, "/")
		if nested && deeper != "" {
			subdirs[name] = true
			continue
		}
		if c.Kind == Deleted {
			delete(entries, name)
			continue
		}
		// The blob Changes wrote as it read (and the scan read) the file.
		entries[name] = object.TreeEntry{Name: name, Mode: c.mode, Hash: c.blob}
	}
	for name := range subdirs {
		var sub plumbing.Hash
		if e, ok := entries[name]; ok && e.Mode == filemode.Dir {
			sub = e.Hash
		}
		nh, empty, err := r.rewrite(sub, dir+name+"/", edits)
		if err != nil {
			return plumbing.ZeroHash, false, err
		}
		if empty {
			delete(entries, name)
		} else {
			entries[name] = object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: nh}
		}
	}
	if len(entries) == 0 {
		return plumbing.ZeroHash, true, nil
	}
	nh, err := r.storeTree(entries)
	return nh, false, err
}

// storeTree stores a tree of entries in git's order and returns its hash.
func (r *Repo) storeTree(entries map[string]object.TreeEntry) (plumbing.Hash, error) {
	t := &object.Tree{}
	for _, e := range entries {
		t.Entries = append(t.Entries, e)
	}
	// git orders entries by name, a tree's name as if it ended in "/".
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(t.Entries, func(i, j int) bool { return key(t.Entries[i]) < key(t.Entries[j]) })
	return r.store(t)
}

// encoder is a tree or a commit, which encode themselves.
type encoder interface {
	Encode(plumbing.EncodedObject) error
}

func (r *Repo) store(o encoder) (plumbing.Hash, error) {
	obj := r.repo.Storer.NewEncodedObject()
	if err := o.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return r.repo.Storer.SetEncodedObject(obj)
}

func (r *Repo) storeBlob(content []byte) (plumbing.Hash, error) {
	obj := r.repo.Storer.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := w.Write(content); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return r.repo.Storer.SetEncodedObject(obj)
}

// updateIndex records the committed versions in the index, so the next
// Changes compares with them. The entries carry no stat data, so Changes
// hashes those files again rather than trusting a size and time.
func (r *Repo) updateIndex(changes []Change) error {
	idx, err := r.repo.Storer.Index()
	if err != nil {
		return fmt.Errorf("read index: %w", err)
	}
	for _, c := range changes {
		if c.Kind == Deleted {
			idx.Remove(c.Path)
			continue
		}
		e, err := idx.Entry(c.Path)
		if err != nil {
			e = idx.Add(c.Path)
		}
		*e = index.Entry{Name: c.Path, Mode: c.mode, Hash: c.blob, Size: uint32(c.size)}
	}
	sort.Slice(idx.Entries, func(i, j int) bool { return idx.Entries[i].Name < idx.Entries[j].Name })
	if err := r.repo.Storer.SetIndex(idx); err != nil {
		return fmt.Errorf("write index: %w", err)
	}
	return nil
}
