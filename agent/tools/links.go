package tools

import (
	"context"
	"io/fs"
	"os"
	"sync"
	"syscall"

	"github.com/patchwright/patchwright/sandbox"
)

// secretLinks answers whether a file is a hard link to a secret-bearing
// file. The path rules refuse .env, but `ln .env notes.txt` in the
// sandbox gives the same bytes an innocent name. The secret scan catches
// the credentials gitleaks recognises; this catches the rest (a short
// password, a key in a format no rule knows).
//
// It indexes the device and inode of every secret-bearing regular file
// that has more than one link. The index is built when a file with
// several links is first read, and again after any command ran: only
// commands make links or files at secret paths, since the tools refuse
// those paths. A file whose every other name is gone (`ln .env x; rm
// .env`) has one link again and only the scan protects it.
type secretLinks struct {
	dir   string // the workspace root on the host; "" disables the check
	mu    sync.Mutex
	stale bool
	index map[fileID]bool
}

type fileID struct{ dev, ino uint64 }

func newSecretLinks(fsys files) *secretLinks {
	l := &secretLinks{stale: true}
	if d, ok := fsys.(interface{ Dir() string }); ok {
		l.dir = d.Dir()
	}
	return l
}

// invalidate drops the index after a command, which may have made links.
func (l *secretLinks) invalidate() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stale = true
}

// check reports whether info, from an Lstat, is a regular file with other
// names, one of them secret-bearing. Most files have one link, which costs
// nothing more than the Lstat the caller made.
func (l *secretLinks) check(ctx context.Context, info fs.FileInfo) (bool, error) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok || !info.Mode().IsRegular() || st.Nlink < 2 || l.dir == "" {
		return false, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stale {
		index, err := buildSecretLinks(ctx, l.dir)
		if err != nil {
			return false, err
		}
		l.index, l.stale = index, false
	}
	return l.index[idOf(st)], nil
}

func idOf(st *syscall.Stat_t) fileID { return fileID{dev: uint64(st.Dev), ino: st.Ino} }

// buildSecretLinks walks the whole work tree but .git, ignored
// directories included (a link can be anywhere), through os.Root, so a
// symlink planted in the tree is never followed. It stats only entries at
// secret-bearing paths.
func buildSecretLinks(ctx context.Context, dir string) (map[fileID]bool, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	index := map[fileID]bool{}
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable entries hold nothing to index
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !sandbox.IsSecretPath(p) {
			return nil
		}
		info, err := root.Lstat(p)
		if err != nil {
			return nil
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
			index[idOf(st)] = true
		}
		return nil
	})
	return index, err
}

// afterCommands marks the link index stale once a tool that runs
// commands returns.
func afterCommands[P any](s *Set, f func(context.Context, P) (Result, error)) func(context.Context, P) (Result, error) {
	return func(ctx context.Context, p P) (Result, error) {
		defer s.links.invalidate()
		return f(ctx, p)
	}
}
