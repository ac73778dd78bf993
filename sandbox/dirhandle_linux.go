//go:build linux

package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sync"
	"syscall"
	"time"
)

// DirHandle is one directory of the workspace, open for a walk that lists
// it and reads its files: the fast path of search. It holds a raw
// directory descriptor and resolves only single names from it, with
// O_NOFOLLOW, so it keeps os.Root's guarantee by construction: a name from
// the directory's own listing has no "/" and is never "..", and a final
// symlink is refused by the kernel, so nothing outside the directory can
// be reached, even if a command swaps an entry for a link meanwhile.
// Unlike os.Root it lists with getdents64 (the type comes from the entry,
// no lstat per entry) and reads with plain system calls into the caller's
// buffer (no poller registration, no os.File): four system calls a file.
//
// A DirHandle is safe for concurrent use; Close it once, after every use.
type DirHandle struct {
	fd  int
	rel string // slash path from the workspace root, "." for the root
	w   *Workspace
}

// OpenDirHandle opens a visible directory of the workspace (see Visible).
func (w *Workspace) OpenDirHandle(name string) (*DirHandle, error) {
	rel, err := w.Clean(name)
	if err != nil {
		return nil, err
	}
	if err := w.Visible(rel); err != nil {
		return nil, err
	}
	f, err := w.root.Open(rel)
	if err != nil {
		return nil, w.classify(rel, err)
	}
	defer f.Close()
	conn, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	// A descriptor of our own for the same directory, so the os.File can
	// be closed; O_DIRECTORY refuses anything else.
	fd, oerr := -1, error(nil)
	if err := conn.Control(func(ffd uintptr) {
		fd, oerr = openat(int(ffd), ".", syscall.O_RDONLY|syscall.O_DIRECTORY)
	}); err != nil {
		return nil, err
	}
	if oerr != nil {
		return nil, &fs.PathError{Op: "open", Path: rel, Err: oerr}
	}
	return &DirHandle{fd: fd, rel: rel, w: w}, nil
}

// Close releases the directory's descriptor.
func (d *DirHandle) Close() error { return syscall.Close(d.fd) }

// Path is the directory's path from the workspace root ("." for the root).
func (d *DirHandle) Path() string { return d.rel }

// Sub opens the subdirectory name, one entry of d. Like WalkDir it
// refuses .git and secret-bearing names; a symlink (even one swapped in
// after the listing) fails with a *NotVisibleError.
func (d *DirHandle) Sub(name string) (*DirHandle, error) {
	rel, err := d.entry(name)
	if err != nil {
		return nil, err
	}
	if name == ".git" {
		return nil, fmt.Errorf("%s: %w: inside .git", rel, ErrPathDenied)
	}
	if d.w.excluded(rel, true) {
		return nil, d.w.excludedErr(rel)
	}
	fd, err := openat(d.fd, name, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW)
	if err == syscall.ENOTDIR {
		// With O_DIRECTORY a final symlink fails as "not a directory";
		// say which it is.
		if info, lerr := d.lstat(name); lerr == nil && info.Mode()&fs.ModeSymlink != 0 {
			err = syscall.ELOOP
		}
	}
	if err != nil {
		return nil, d.openErr(rel, err)
	}
	return &DirHandle{fd: fd, rel: rel, w: d.w}, nil
}

// entry checks that name is one plain entry of d that the model may see
// by name, and returns its path from the workspace root.
func (d *DirHandle) entry(name string) (string, error) {
	if name == "" || name == "." || name == ".." || containsSlashOrNUL(name) {
		return "", fmt.Errorf("%q: %w: not a name in the directory", name, ErrPathDenied)
	}
	rel := path.Join(d.rel, name)
	if isSecretName(name) {
		return "", fmt.Errorf("%s: %w: secret-bearing file", rel, ErrPathDenied)
	}
	return rel, nil
}

func containsSlashOrNUL(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' || s[i] == 0 {
			return true
		}
	}
	return false
}

// openErr turns an openat failure with O_NOFOLLOW into the workspace's
// errors: ELOOP is a symlink where the listing saw something else.
func (d *DirHandle) openErr(rel string, err error) error {
	if errors.Is(err, syscall.ELOOP) {
		return &NotVisibleError{rel, WhySymlink}
	}
	return &fs.PathError{Op: "open", Path: rel, Err: err}
}

// Entry is one entry of a directory as DirHandle.List reports it. It is
// an fs.DirEntry; Info stats the entry without following a symlink.
type Entry struct {
	name string
	typ  fs.FileMode
	d    *DirHandle
}

func (e Entry) Name() string               { return e.name }
func (e Entry) IsDir() bool                { return e.typ.IsDir() }
func (e Entry) Type() fs.FileMode          { return e.typ }
func (e Entry) Info() (fs.FileInfo, error) { return e.d.lstat(e.name) }

// direntBufs are getdents64 buffers, reused across directories.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 16<<10); return &b }}

// List returns the entries of d, in the order the file system keeps
// them, leaving out what WalkVisible leaves out (.git, secret-bearing
// names and excluded paths). visible is nil for a directory or a regular
// file and a *NotVisibleError for a symlink or a special file; hard
// links to hidden files are found when ReadFile opens them.
func (d *DirHandle) List(fn func(e Entry, visible error)) error {
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	for {
		n, err := syscall.Getdents(d.fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return &fs.PathError{Op: "readdirent", Path: d.rel, Err: err}
		}
		if n <= 0 {
			return nil
		}
		for off := 0; off+19 <= n; {
			// struct linux_dirent64: ino u64, off s64, reclen u16,
			// type u8, then the NUL-terminated name.
			reclen := int(binary.NativeEndian.Uint16(buf[off+16:]))
			if reclen == 0 || off+reclen > n {
				return &fs.PathError{Op: "readdirent", Path: d.rel, Err: syscall.EIO}
			}
			rec := buf[off : off+reclen]
			off += reclen
			name := rec[19:]
			for i, c := range name {
				if c == 0 {
					name = name[:i]
					break
				}
			}
			if binary.NativeEndian.Uint64(rec) == 0 || string(name) == "." || string(name) == ".." {
				continue
			}
			e := Entry{name: string(name), d: d}
			if e.name == ".git" || isSecretName(e.name) {
				continue
			}
			typ, ok := direntType(rec[18])
			if !ok {
				info, err := d.lstat(e.name)
				if err != nil {
					continue // gone since the listing
				}
				typ = info.Mode().Type()
			}
			e.typ = typ
			if d.w.excluded(path.Join(d.rel, e.name), typ.IsDir()) {
				continue
			}
			var visible error
			if why := KindProblem(typ); why != "" {
				visible = &NotVisibleError{path.Join(d.rel, e.name), why}
			}
			fn(e, visible)
		}
	}
}

// direntType maps a d_type to a file type; false for DT_UNKNOWN, which
// some file systems report, so the caller must stat.
func direntType(t byte) (fs.FileMode, bool) {
	switch t {
	case syscall.DT_REG:
		return 0, true
	case syscall.DT_DIR:
		return fs.ModeDir, true
	case syscall.DT_LNK:
		return fs.ModeSymlink, true
	case syscall.DT_FIFO:
		return fs.ModeNamedPipe, true
	case syscall.DT_SOCK:
		return fs.ModeSocket, true
	case syscall.DT_CHR:
		return fs.ModeDevice | fs.ModeCharDevice, true
	case syscall.DT_BLK:
		return fs.ModeDevice, true
	}
	return 0, false
}

// lstat describes the entry name without following it: an O_PATH handle
// opens no file, so this works for FIFOs and devices too.
func (d *DirHandle) lstat(name string) (fs.FileInfo, error) {
	rel := path.Join(d.rel, name)
	fd, err := openat(d.fd, name, oPath|syscall.O_NOFOLLOW)
	if err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: rel, Err: err}
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := fstat(fd, &st); err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: rel, Err: err}
	}
	return &statInfo{name: name, st: st}, nil
}

// ReadFile reads the regular file name, one entry of d, into buf (from
// buf[:0], growing it when too small) and returns the bytes. It fails
// like Workspace.ReadFile: ErrTooLarge over limit (and over MaxRead),
// ErrNotRegular for anything but a regular file, a *NotVisibleError for
// a symlink or a hard link to a hidden file, fs.ErrNotExist when gone.
func (d *DirHandle) ReadFile(name string, buf []byte, limit int64) ([]byte, error) {
	rel, err := d.entry(name)
	if err != nil {
		return nil, err
	}
	if d.w.excluded(rel, false) {
		return nil, d.w.excludedErr(rel)
	}
	if max := d.w.maxRead(); limit <= 0 || limit > max {
		limit = max
	}
	// O_NONBLOCK: a FIFO swapped in after the listing must not hang the
	// worker. O_NOCTTY: a terminal swapped in must not become ours.
	fd, err := openat(d.fd, name, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_NOCTTY)
	if err != nil {
		return nil, d.openErr(rel, err)
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := fstat(fd, &st); err != nil {
		return nil, &fs.PathError{Op: "fstat", Path: rel, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, fmt.Errorf("%s: %w", rel, ErrNotRegular)
	}
	if st.Size > limit {
		return nil, fmt.Errorf("%s is %d bytes: %w (limit %d)", rel, st.Size, ErrTooLarge, limit)
	}
	if st.Nlink > 1 {
		if err := d.w.visibleInfo(rel, &statInfo{name: name, st: st}); err != nil {
			return nil, err
		}
	}
	return readAll(fd, rel, buf[:0], st.Size, limit)
}

// readAll reads fd to its end into buf, sized from the stat's size so
// that a file takes one read. A read shorter than asked with at least the
// stat's size in hand is taken as the end: a regular file's read comes
// back short only there, and it saves the read that would return 0. The
// file may still grow meanwhile, so the limit is checked on what was read.
func readAll(fd int, rel string, buf []byte, size, limit int64) ([]byte, error) {
	if int64(cap(buf)) < size+1 {
		buf = make([]byte, 0, size+512)
	}
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) > limit {
				return nil, fmt.Errorf("%s: %w (limit %d)", rel, ErrTooLarge, limit)
			}
			buf = append(buf, 0)[:len(buf)]
		}
		want := cap(buf) - len(buf)
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: rel, Err: err}
		}
		buf = buf[:len(buf)+n]
		if n == 0 || (n < want && int64(len(buf)) >= size) {
			break
		}
	}
	if int64(len(buf)) > limit {
		return nil, fmt.Errorf("%s: %w (limit %d)", rel, ErrTooLarge, limit)
	}
	return buf, nil
}

func (w *Workspace) maxRead() int64 {
	if w.MaxRead > 0 {
		return w.MaxRead
	}
	return DefaultMaxRead
}

// oPath is O_PATH (010000000 on every architecture Go runs Linux on);
// syscall defines it only for some.
const oPath = 0o10000000

// openat opens name relative to dirfd, close-on-exec, retrying EINTR.
func openat(dirfd int, name string, flags int) (int, error) {
	for {
		fd, err := syscall.Openat(dirfd, name, flags|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

func fstat(fd int, st *syscall.Stat_t) error {
	for {
		if err := syscall.Fstat(fd, st); err != syscall.EINTR {
			return err
		}
	}
}

// statInfo is an fs.FileInfo from a Stat_t.
type statInfo struct {
	name string
	st   syscall.Stat_t
}

func (s *statInfo) Name() string { return s.name }
func (s *statInfo) Size() int64  { return s.st.Size }
func (s *statInfo) Mode() fs.FileMode {
	m := fs.FileMode(s.st.Mode & 0o777)
	switch s.st.Mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		m |= fs.ModeDir
	case syscall.S_IFLNK:
		m |= fs.ModeSymlink
	case syscall.S_IFIFO:
		m |= fs.ModeNamedPipe
	case syscall.S_IFSOCK:
		m |= fs.ModeSocket
	case syscall.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFBLK:
		m |= fs.ModeDevice
	}
	return m
}
func (s *statInfo) ModTime() time.Time { return time.Unix(s.st.Mtim.Sec, s.st.Mtim.Nsec) }
func (s *statInfo) IsDir() bool        { return s.Mode().IsDir() }
func (s *statInfo) Sys() any           { return &s.st }
