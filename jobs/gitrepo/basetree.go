package gitrepo

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// WriteBase writes every regular file of the base commit under root, the
// original tree on which verify runs the new tests (Repo is its
// verify.BaseTree, with BaseContent). Symbolic links and submodules are
// left out: they could point anywhere. Writes go through root, so no
// path of the tree can reach outside it.
func (r *Repo) WriteBase(root *os.Root) error {
	commit, err := r.repo.CommitObject(r.base)
	if err != nil {
		return fmt.Errorf("read base commit: %w", err)
	}
	files, err := commit.Files()
	if err != nil {
		return fmt.Errorf("list base tree: %w", err)
	}
	return files.ForEach(func(f *object.File) error {
		perm := fs.FileMode(0o644)
		switch f.Mode {
		case filemode.Regular:
		case filemode.Executable:
			perm = 0o755
		default:
			return nil
		}
		s, err := f.Contents()
		if err != nil {
			return fmt.Errorf("read %s at base: %w", f.Name, err)
		}
		if dir := path.Dir(f.Name); dir != "." {
			if err := root.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("write base tree: %w", err)
			}
		}
		if err := root.WriteFile(f.Name, []byte(s), perm); err != nil {
			return fmt.Errorf("write base tree: %w", err)
		}
		return nil
	})
}

// BasePaths are the paths of the base commit's files and symbolic links
// (not its submodules), read from the tree objects alone: no blob is
// opened. The pipeline puts these back after a setup that ran on a copy
// of a tree, so that a check sees every path of the commit as the commit
// holds it.
func (r *Repo) BasePaths() ([]string, error) {
	commit, err := r.repo.CommitObject(r.base)
	if err != nil {
		return nil, fmt.Errorf("read base commit: %w", err)
	}
	tree, err := commit.Tree()
	if err != nil {
		return nil, fmt.Errorf("read base tree: %w", err)
	}
	w := object.NewTreeWalker(tree, true, nil)
	defer w.Close()
	var out []string
	for {
		name, e, err := w.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("list base tree: %w", err)
		}
		switch e.Mode {
		case filemode.Regular, filemode.Executable, filemode.Deprecated, filemode.Symlink:
			out = append(out, name)
		}
	}
}

// BaseHasBinary reports whether any of paths is a binary file of the base
// commit (sandbox.IsBinary on its first bytes; a path the commit does not
// hold counts as not). Only each blob's head is read, so a caller can ask
// it of every extensionless file of a large tree.
func (r *Repo) BaseHasBinary(paths []string) (bool, error) {
	commit, err := r.repo.CommitObject(r.base)
	if err != nil {
		return false, fmt.Errorf("read base commit: %w", err)
	}
	for _, p := range paths {
		f, err := commit.File(p)
		if err != nil {
			continue
		}
		rd, err := f.Reader()
		if err != nil {
			return false, fmt.Errorf("read %s at base: %w", p, err)
		}
		head := make([]byte, binaryHead)
		n, err := io.ReadFull(rd, head)
		rd.Close()
		if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
			return false, fmt.Errorf("read %s at base: %w", p, err)
		}
		if isBinary(head[:n]) {
			return true, nil
		}
	}
	return false, nil
}

// binaryHead is how much of a file isBinary needs to look at.
const binaryHead = 8000
