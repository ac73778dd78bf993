package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"syscall"
)

// What write_file creates belongs to the sandbox user. The work tree is
// handed to that user before the agent starts (sandbox.HandOver), but
// the tools write as the worker: a directory write_file made for a new
// package was the worker's, mode 0755, and `gofmt -w`, `go mod tidy` or
// a generator run as the sandbox user could not write into it. So what
// a call creates is given to the owner of the workspace root, who is
// that user on every image (the same uid whether or not the image knows
// it), the way HandOver gives the tree: as root by chown, otherwise by
// opening the permissions. All through os.Root, so a link a command
// planted meanwhile is never followed out of the workspace.

// missingDirs lists the directories above rel that do not exist yet,
// outermost first: those the write will create.
func (s *Set) missingDirs(rel string) ([]string, error) {
	var out []string
	for dir := path.Dir(rel); dir != "."; dir = path.Dir(dir) {
		_, err := s.fs.Stat(dir)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		out = append([]string{dir}, out...)
	}
	return out, nil
}

// handOver gives the paths (relative, slash-separated) to the owner of
// the workspace root. Without a workspace directory (a test's seam) it
// does nothing.
func (s *Set) handOver(rels []string) error {
	if s.dir == "" || len(rels) == 0 {
		return nil
	}
	root, err := os.OpenRoot(s.dir)
	if err != nil {
		return fmt.Errorf("hand over %v: %w", rels, err)
	}
	defer root.Close()
	info, err := root.Stat(".")
	if err != nil {
		return fmt.Errorf("hand over %v: %w", rels, err)
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	euid := os.Geteuid()
	if !ok || int(st.Uid) == euid {
		return nil // the tree is the worker's own: nothing to give
	}
	for _, rel := range rels {
		if err := giveTo(root, rel, st, euid); err != nil {
			return fmt.Errorf("hand %s to the sandbox user: %w", rel, err)
		}
	}
	return nil
}

// giveTo gives one path to owner's uid:gid as root, or makes it writable
// for everyone otherwise (as sandbox.HandOver does).
func giveTo(root *os.Root, rel string, owner *syscall.Stat_t, euid int) error {
	if euid == 0 {
		return root.Lchown(rel, int(owner.Uid), int(owner.Gid))
	}
	info, err := root.Lstat(rel)
	if err != nil || info.Mode()&fs.ModeSymlink != 0 {
		return err
	}
	if info.IsDir() {
		return root.Chmod(rel, 0o777)
	}
	return root.Chmod(rel, info.Mode().Perm()|0o666)
}
