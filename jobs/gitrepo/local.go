package gitrepo

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// localPath returns the directory of a remote that is a local repository
// ("/path", "./path" or "file:///path"), and false for any other URL.
func localPath(remote string) (string, bool) {
	if u, err := url.Parse(remote); err == nil && u.Scheme == "file" {
		return u.Path, true
	}
	if strings.Contains(remote, "://") || !filepath.IsAbs(remote) && !strings.HasPrefix(remote, ".") {
		return "", false
	}
	return remote, true
}

// pushLocal copies the branch's new objects into a local repository and
// moves its branch as compare-and-swap, without go-git's push: that walks
// the history of the remote's refs, which a shallow repository does not
// have ("object not found").
func (r *Repo) pushLocal(dir, branch string, expected plumbing.Hash) error {
	dst, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	if err != nil {
		return fmt.Errorf("push %s: open %s: %w", branch, dir, err)
	}
	name := plumbing.NewBranchReferenceName(branch)
	head, err := r.repo.Reference(name, true)
	if err != nil {
		return fmt.Errorf("push %s: %w", branch, err)
	}
	if err := copyCommit(r.repo.Storer, dst.Storer, head.Hash()); err != nil {
		return fmt.Errorf("push %s: %w", branch, err)
	}
	var old *plumbing.Reference
	if !expected.IsZero() {
		old = plumbing.NewHashReference(name, expected)
	} else if _, err := dst.Reference(name, false); err == nil {
		return fmt.Errorf("push %s: %w: the branch exists", branch, ErrRemoteMoved)
	}
	if err := dst.Storer.CheckAndSetReference(plumbing.NewHashReference(name, head.Hash()), old); err != nil {
		return fmt.Errorf("push %s: %w: %v", branch, ErrRemoteMoved, err)
	}
	return nil
}

// copyCommit copies commit h and what it needs from src into dst, down to
// the commits dst already has.
func copyCommit(src, dst storer.Storer, h plumbing.Hash) error {
	if dst.HasEncodedObject(h) == nil {
		return nil
	}
	c, err := object.GetCommit(src, h)
	if err != nil {
		return err
	}
	if err := copyTree(src, dst, c.TreeHash); err != nil {
		return err
	}
	for _, p := range c.ParentHashes {
		if err := copyCommit(src, dst, p); err != nil {
			return err
		}
	}
	return copyObject(src, dst, h)
}

// copyTree copies tree h and the trees and blobs under it that dst lacks.
func copyTree(src, dst storer.Storer, h plumbing.Hash) error {
	if dst.HasEncodedObject(h) == nil {
		return nil
	}
	t, err := object.GetTree(src, h)
	if err != nil {
		return err
	}
	for _, e := range t.Entries {
		switch {
		case e.Mode == filemode.Submodule:
		case e.Mode == filemode.Dir:
			if err := copyTree(src, dst, e.Hash); err != nil {
				return err
			}
		case dst.HasEncodedObject(e.Hash) != nil:
			if err := copyObject(src, dst, e.Hash); err != nil {
				return err
			}
		}
	}
	return copyObject(src, dst, h)
}

func copyObject(src, dst storer.Storer, h plumbing.Hash) error {
	o, err := src.EncodedObject(plumbing.AnyObject, h)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return fmt.Errorf("object %s is missing from the clone and the remote", h)
	}
	if err != nil {
		return err
	}
	_, err = dst.SetEncodedObject(o)
	return err
}
