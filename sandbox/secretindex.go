package sandbox

import (
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// MaxSecretFile is the most of one secret-bearing file SecretFiles reads.
const MaxSecretFile = 64 << 10

// SecretFile is a secret-bearing file of the tree (a path IsSecretPath
// names) with its first MaxSecretFile bytes. It is read for host-side
// checks (withholding output that holds one of its values), never for the
// model.
type SecretFile struct {
	Path string
	Data []byte
}

// secretIndex knows the files the model may not see by their own names
// (secret-bearing paths and the files in .git) for the check Clean cannot
// make: a hard link to one of them under an innocent name (`ln .env
// notes.txt`). It is built when first needed and again after Changed:
// only commands make links or files at hidden paths, since the workspace
// refuses those paths. A copy (`cp .env x`) is a new file with one link;
// only the secret scans protect it.
type secretIndex struct {
	root *os.Root // the workspace's root, shared with its OpenDir views

	mu    sync.Mutex
	built bool
	gen   uint64
	// hidden are the hidden regular files with more than one link.
	hidden map[fileID]bool
	files  []SecretFile
}

type fileID struct{ dev, ino uint64 }

func idOf(st *syscall.Stat_t) fileID { return fileID{dev: uint64(st.Dev), ino: st.Ino} }

// links is the link count of info, or 1 when the system does not say.
func links(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// Changed tells the workspace that something other than its own methods,
// a command in the sandbox, may have changed the tree: the index of hidden
// files is rebuilt when next needed.
func (w *Workspace) Changed() {
	w.index.mu.Lock()
	defer w.index.mu.Unlock()
	w.index.built = false
}

// SecretFiles returns the tree's secret-bearing regular files, and a
// generation that changes whenever the list is rebuilt, so a caller can
// keep what it derives from them until then.
func (w *Workspace) SecretFiles() ([]SecretFile, uint64, error) {
	x := w.index
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.fresh(); err != nil {
		return nil, 0, err
	}
	return x.files, x.gen, nil
}

// isHidden reports whether info, from an Lstat, is another name of a
// hidden file.
func (x *secretIndex) isHidden(info fs.FileInfo) (bool, error) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return true, nil // no inode to compare: refuse rather than guess
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.fresh(); err != nil {
		return false, err
	}
	return x.hidden[idOf(st)], nil
}

// hasHidden reports whether any hidden file has a second name. When none
// has, no file can be one, and a walk skips the per-file check.
func (x *secretIndex) hasHidden() (bool, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.fresh(); err != nil {
		return false, err
	}
	return len(x.hidden) > 0, nil
}

// fresh rebuilds the index if the tree may have changed. The caller holds
// x.mu.
func (x *secretIndex) fresh() error {
	if x.built {
		return nil
	}
	b := indexer{hidden: map[fileID]bool{}}
	if err := b.dir(x.root, ".", false, false); err != nil {
		return err
	}
	slices.SortFunc(b.files, func(a, c SecretFile) int { return strings.Compare(a.Path, c.Path) })
	x.hidden, x.files, x.built = b.hidden, b.files, true
	x.gen++
	return nil
}

// indexer walks the whole tree, skipping nothing: a directory left out
// (node_modules, build output) would be a place where a secret file's
// second name goes unnoticed. It stays cheap by doing per entry only what
// the entry needs: one directory read per directory, the name matched
// alone (a directory's verdict passes to what is below it), and a stat
// only for the few files at hidden paths. Each directory is opened from
// its parent's handle through os.Root, so a planted link is never
// followed and no path is resolved from the top again.
type indexer struct {
	hidden map[fileID]bool
	files  []SecretFile
}

// dir indexes the directory r (at rel), which lies inside .git (inGit)
// or under a secret-bearing name (secret), or neither.
func (b *indexer) dir(r *os.Root, rel string, inGit, secret bool) error {
	f, err := r.Open(".")
	if err != nil {
		return nil // unreadable directories hold nothing to index
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return nil
	}
	for _, e := range entries {
		name := e.Name()
		p := path.Join(rel, name)
		git, sec := inGit || name == ".git", secret || isSecretName(name)
		switch {
		case e.IsDir():
			sub, err := r.OpenRoot(name)
			if err != nil {
				continue
			}
			err = b.dir(sub, p, git, sec)
			sub.Close()
			if err != nil {
				return err
			}
		case e.Type().IsRegular() && (git || sec):
			b.file(r, name, p, sec && !git)
		}
	}
	return nil
}

// file records one hidden regular file: its inode if it has other names,
// and its content if read is set: its path is secret-bearing (files in
// .git are only hidden; their content is no secret to look for).
func (b *indexer) file(r *os.Root, name, p string, read bool) {
	if !read {
		if info, err := r.Lstat(name); err == nil && info.Mode().IsRegular() && links(info) > 1 {
			if st, ok := info.Sys().(*syscall.Stat_t); ok {
				b.hidden[idOf(st)] = true
			}
		}
		return
	}
	// O_NONBLOCK: a FIFO swapped in after the directory was read must not
	// hang the worker.
	f, err := r.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
		b.hidden[idOf(st)] = true
	}
	data, _ := io.ReadAll(io.LimitReader(f, MaxSecretFile))
	b.files = append(b.files, SecretFile{Path: p, Data: data})
}
