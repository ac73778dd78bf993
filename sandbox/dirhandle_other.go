//go:build !linux

package sandbox

import (
	"errors"
	"io/fs"
)

// DirHandle is the fast directory reader of Linux; elsewhere
// OpenDirHandle fails with errors.ErrUnsupported and callers use
// OpenDir and WalkVisible.
type DirHandle struct{}

// Entry is one entry a DirHandle lists.
type Entry struct{ fs.DirEntry }

// OpenDirHandle is unsupported on this system.
func (w *Workspace) OpenDirHandle(string) (*DirHandle, error) { return nil, errors.ErrUnsupported }

func (d *DirHandle) Close() error                   { return nil }
func (d *DirHandle) Path() string                   { return "." }
func (d *DirHandle) Sub(string) (*DirHandle, error) { return nil, errors.ErrUnsupported }
func (d *DirHandle) List(func(Entry, error)) error  { return errors.ErrUnsupported }
func (d *DirHandle) ReadFile(string, []byte, int64) ([]byte, error) {
	return nil, errors.ErrUnsupported
}
