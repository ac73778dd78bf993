package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// ErrPathDenied is returned for a path that leaves the workspace (through
// "..", an absolute path or a symlink), names a secret-bearing file, or lies
// inside .git.
var ErrPathDenied = errors.New("path denied")

// ErrTooLarge is returned by ReadFile for a file over the read limit.
var ErrTooLarge = errors.New("file too large")

// ErrNotRegular is returned by ReadFile for anything but a regular file
// (a directory, a FIFO a command planted, a device).
var ErrNotRegular = errors.New("not a regular file")

// DefaultMaxRead is the largest file ReadFile returns when
// Workspace.MaxRead is zero.
const DefaultMaxRead = 8 << 20

// secretNames are matched against every path component. A match makes the
// path unreadable and unwritable for the model (docs/design.md §4.4).
var secretNames = []string{
	".env", ".env.*", "*.pem", "*.key", "*.p12", "*.pfx", "id_rsa*", "id_dsa*",
	"id_ecdsa*", "id_ed25519*", "credentials", "credentials.*", ".netrc",
	".git-credentials", ".npmrc", ".pypirc", ".dockercfg",
}

// IsSecretPath reports whether a workspace-relative path names a
// secret-bearing file.
func IsSecretPath(rel string) bool {
	for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
		if isSecretName(part) {
			return true
		}
	}
	return false
}

// Workspace gives host-side access to a job's workspace directory that
// cannot escape it: every operation goes through os.Root, so a symlink that
// a command in the sandbox planted is never followed outside.
type Workspace struct {
	root *os.Root
	dir  string
	// index is shared by the workspace and its OpenDir views.
	index *secretIndex
	// MaxRead caps ReadFile; zero means DefaultMaxRead.
	MaxRead int64
	// exclude hides paths from Visible (exclude.go); base is this view's
	// path from the repository root ("" for the root), which its
	// patterns are relative to.
	exclude Excluder
	base    string
}

// OpenWorkspace opens dir, which must exist.
func OpenWorkspace(dir string) (*Workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open workspace %s: %w", dir, err)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("open workspace %s: %w", dir, err)
	}
	return &Workspace{root: root, dir: abs, index: &secretIndex{root: root}}, nil
}

// Dir is the workspace's absolute host path.
func (w *Workspace) Dir() string { return w.dir }

// Close releases the workspace's directory handle.
func (w *Workspace) Close() error { return w.root.Close() }

// Clean checks a model-supplied path and returns it relative to the
// workspace root in slash form ("." for the root itself). It refuses
// absolute paths, paths that climb out, secret paths and .git.
func (w *Workspace) Clean(name string) (string, error) {
	if name == "" {
		name = "."
	}
	if filepath.IsAbs(name) || strings.HasPrefix(name, "/") {
		return "", fmt.Errorf("%s: %w: absolute path", name, ErrPathDenied)
	}
	rel := path.Clean(filepath.ToSlash(name))
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("%s: %w: outside the repository", name, ErrPathDenied)
	}
	if rel == ".git" || strings.HasPrefix(rel, ".git/") || strings.Contains(rel, "/.git/") || strings.HasSuffix(rel, "/.git") {
		return "", fmt.Errorf("%s: %w: inside .git", name, ErrPathDenied)
	}
	if IsSecretPath(rel) {
		return "", fmt.Errorf("%s: %w: secret-bearing file", name, ErrPathDenied)
	}
	return rel, nil
}

// ReadFile returns the content of a regular file.
func (w *Workspace) ReadFile(name string) ([]byte, error) {
	rel, err := w.Clean(name)
	if err != nil {
		return nil, err
	}
	// O_NONBLOCK so that opening a FIFO planted in the workspace does not
	// hang the worker; it has no effect on regular files.
	f, err := w.root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, w.classify(rel, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w", rel, ErrNotRegular)
	}
	limit := w.MaxRead
	if limit <= 0 {
		limit = DefaultMaxRead
	}
	if info.Size() > limit {
		return nil, fmt.Errorf("%s is %d bytes: %w (limit %d)", rel, info.Size(), ErrTooLarge, limit)
	}
	// Size the buffer from the stat so a file takes one read, not the
	// doubling reads of io.ReadAll; the file may still grow meanwhile, so
	// read through a limit rather than trust the size. MinRead spare: with
	// less, ReadFrom grows (copies) the buffer before the read that sees
	// the end of the file.
	buf := bytes.NewBuffer(make([]byte, 0, info.Size()+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(f, limit+1)); err != nil {
		return nil, fmt.Errorf("read %s: %w", rel, err)
	}
	if int64(buf.Len()) > limit {
		return nil, fmt.Errorf("%s: %w (limit %d)", rel, ErrTooLarge, limit)
	}
	return buf.Bytes(), nil
}

// OpenDir returns the workspace below a directory, for reading many files
// of one directory: each path is then resolved from the directory, not from
// the root component by component. The caller closes it.
func (w *Workspace) OpenDir(name string) (*Workspace, error) {
	rel, err := w.Clean(name)
	if err != nil {
		return nil, err
	}
	sub, err := w.root.OpenRoot(rel)
	if err != nil {
		return nil, w.classify(rel, err)
	}
	return &Workspace{root: sub, dir: filepath.Join(w.dir, filepath.FromSlash(rel)), index: w.index, MaxRead: w.MaxRead,
		exclude: w.exclude, base: path.Join(w.base, rel)}, nil
}

// WriteFile writes data to a file, creating missing parent directories.
// An existing file keeps its permission bits.
func (w *Workspace) WriteFile(name string, data []byte) error {
	rel, err := w.Clean(name)
	if err != nil {
		return err
	}
	if rel == "." {
		return fmt.Errorf("%s: %w: is the repository root", name, ErrPathDenied)
	}
	if dir := path.Dir(rel); dir != "." {
		if err := w.root.MkdirAll(dir, 0o755); err != nil {
			return w.classify(dir, err)
		}
	}
	if info, err := w.root.Lstat(rel); err == nil && !info.Mode().IsRegular() {
		return fmt.Errorf("%s: %w", rel, ErrNotRegular)
	}
	f, err := w.root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		return w.classify(rel, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", rel, err)
	}
	return f.Close()
}

// Remove deletes a file (not a directory).
func (w *Workspace) Remove(name string) error {
	rel, err := w.Clean(name)
	if err != nil {
		return err
	}
	info, err := w.root.Lstat(rel)
	if err != nil {
		return w.classify(rel, err)
	}
	if info.IsDir() {
		return fmt.Errorf("%s: %w: is a directory", rel, ErrNotRegular)
	}
	return w.classify(rel, w.root.Remove(rel))
}

// Stat describes a file without following a final symlink.
func (w *Workspace) Stat(name string) (fs.FileInfo, error) {
	rel, err := w.Clean(name)
	if err != nil {
		return nil, err
	}
	info, err := w.root.Lstat(rel)
	return info, w.classify(rel, err)
}

// WalkDir walks the tree under name in lexical order, never following
// symlinks and never entering .git. Secret-bearing files are skipped, so a
// listing never reveals more than the model may read.
func (w *Workspace) WalkDir(name string, fn fs.WalkDirFunc) error {
	rel, err := w.Clean(name)
	if err != nil {
		return err
	}
	return fs.WalkDir(w.root.FS(), rel, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fn(p, d, w.classify(p, err))
		}
		if d.IsDir() && d.Name() == ".git" {
			return fs.SkipDir
		}
		if IsSecretPath(p) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		return fn(p, d, nil)
	})
}

// classify maps os.Root's refusal to leave the root onto ErrPathDenied, so
// callers can tell an escape from a missing file.
func (w *Workspace) classify(rel string, err error) error {
	if err == nil {
		return nil
	}
	if strings.Contains(err.Error(), "path escapes from parent") {
		return fmt.Errorf("%s: %w: leads outside the repository", rel, ErrPathDenied)
	}
	return err
}
