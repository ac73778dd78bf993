package gitrepo

import (
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/patchwright/patchwright/sandbox"
)

// The change is streamed (issue 23): each changed file is read in chunks
// of chunkBytes into a git blob, so the worker holds one chunk of a binary
// file, and one text file at a time (for its line counts), never the sum.

// chunkBytes is the buffer a file is streamed through.
const chunkBytes = 256 << 10

// stored is one file written as a blob.
type stored struct {
	hash   plumbing.Hash
	size   int64
	binary bool
	// text is the file's bytes when it is not binary (for its line
	// counts): one file at a time, at most MaxFileBytes.
	text []byte
}

// openRegular opens p without following a link or blocking on a FIFO
// swapped in after the walk, and checks it is still a regular file.
func openRegular(root *os.Root, p string) (*os.File, int64, error) {
	f, err := root.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("%s: not a regular file", p)
	}
	return f, st.Size(), nil
}

// errResized is a file whose size changed while it was read: nothing
// writes the tree once the agent's container is gone, so this is a fault.
var errResized = errors.New("changed size while it was read")

// hashFile is the blob hash of a regular file, streamed.
func hashFile(root *os.Root, p string) (plumbing.Hash, error) {
	f, size, err := openRegular(root, p)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer f.Close()
	h := plumbing.NewHasher(plumbing.BlobObject, size)
	if err := copyExactly(h, f, size); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("%s: %w", p, err)
	}
	return h.Sum(), nil
}

// copyExactly copies size bytes of r to w through one chunk, and fails if r
// holds fewer or more.
func copyExactly(w io.Writer, r io.Reader, size int64) error {
	n, err := io.CopyBuffer(w, io.LimitReader(r, size), make([]byte, chunkBytes))
	if err != nil {
		return err
	}
	var one [1]byte
	if extra, _ := r.Read(one[:]); n != size || extra > 0 {
		return errResized
	}
	return nil
}

// storeFile streams a regular file into a loose blob, or a link's target,
// and returns what Changes needs of it: its hash, size, whether it is
// binary, and its bytes if it is text.
func (r *Repo) storeFile(root *os.Root, p string, info fs.FileInfo) (stored, error) {
	if info.Mode()&fs.ModeSymlink != 0 {
		target, err := root.Readlink(p)
		if err != nil {
			return stored{}, err
		}
		h, err := r.storeBlob([]byte(target))
		return stored{hash: h, size: int64(len(target)), text: []byte(target), binary: isBinary([]byte(target))}, err
	}
	f, size, err := openRegular(root, p)
	if err != nil {
		return stored{}, err
	}
	defer f.Close()
	if size > MaxFileBytes {
		return stored{}, fmt.Errorf("%s: %w", p, errResized)
	}
	w, err := newLooseBlob(filepath.Join(r.gitDir, "objects"), size)
	if err != nil {
		return stored{}, fmt.Errorf("store %s: %w", p, err)
	}
	t := &textSink{}
	if err := copyExactly(io.MultiWriter(w, t), f, size); err != nil {
		w.abort()
		return stored{}, fmt.Errorf("store %s: %w", p, err)
	}
	h, err := w.close()
	if err != nil {
		return stored{}, fmt.Errorf("store %s: %w", p, err)
	}
	s := stored{hash: h, size: size, binary: t.binary}
	if !t.binary {
		s.text = t.buf
	}
	return s, nil
}

// looseBlob writes one loose blob object as it streams: zlib at
// BestSpeed, git's own level for loose objects (core.looseCompression
// unset is 1). go-git's object writer has no level and uses zlib's
// default (6), which took about three times the CPU on zeros (2.8 times,
// 3.6 under -race, where it was most of the cost of a change of hundreds
// of megabytes: issue 22); the object is what git would write, named by
// its hash.
type looseBlob struct {
	dir string // the objects directory
	tmp *os.File
	z   *zlib.Writer
	h   plumbing.Hasher
}

func newLooseBlob(objects string, size int64) (*looseBlob, error) {
	tmp, err := os.CreateTemp(objects, "tmp_obj_")
	if err != nil {
		return nil, err
	}
	z, err := zlib.NewWriterLevel(tmp, zlib.BestSpeed)
	if err == nil {
		_, err = fmt.Fprintf(z, "%s %d\x00", plumbing.BlobObject, size)
	}
	if err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, err
	}
	return &looseBlob{dir: objects, tmp: tmp, z: z, h: plumbing.NewHasher(plumbing.BlobObject, size)}, nil
}

func (b *looseBlob) Write(p []byte) (int, error) {
	b.h.Write(p) // a hash never fails
	return b.z.Write(p)
}

// abort drops the blob.
func (b *looseBlob) abort() {
	b.tmp.Close()
	os.Remove(b.tmp.Name())
}

// close ends the stream and moves it to its name, objects/xx/yyyy..., read
// only as git leaves it; an object already there is the same bytes.
func (b *looseBlob) close() (plumbing.Hash, error) {
	if err := errors.Join(b.z.Close(), b.tmp.Close()); err != nil {
		os.Remove(b.tmp.Name())
		return plumbing.ZeroHash, err
	}
	h := b.h.Sum()
	hex := h.String()
	dir := filepath.Join(b.dir, hex[:2])
	name := filepath.Join(dir, hex[2:])
	if _, err := os.Lstat(name); err == nil {
		return h, os.Remove(b.tmp.Name())
	}
	err := os.MkdirAll(dir, 0o755)
	if err == nil {
		err = os.Rename(b.tmp.Name(), name)
	}
	if err != nil {
		os.Remove(b.tmp.Name())
		return plumbing.ZeroHash, err
	}
	os.Chmod(name, 0o444) // as go-git, a failure here leaves a whole object
	return h, nil
}

// textSink keeps a file's bytes until they prove binary (a NUL in the
// first sandbox.BinaryProbe bytes, git's rule), then drops them.
type textSink struct {
	buf    []byte
	binary bool
}

func (t *textSink) Write(p []byte) (int, error) {
	if t.binary {
		return len(p), nil
	}
	t.buf = append(t.buf, p...)
	if len(t.buf) >= sandbox.BinaryProbe || len(p) == 0 {
		if sandbox.IsBinary(t.buf) {
			t.binary, t.buf = true, nil
		}
	}
	return len(p), nil
}

// Open streams the new version of c as the commit holds it: the blob
// Changes wrote as it read the file (a link's target for a link). It is
// an error for a deleted or TooLarge change.
func (r *Repo) Open(c Change) (io.ReadCloser, error) {
	if c.Kind == Deleted || c.TooLarge || c.blob.IsZero() {
		return nil, fmt.Errorf("%s has no new version to read", c.Path)
	}
	return r.blobReader(c.blob)
}

// ReadChange is the new version of c whole (at most MaxFileBytes), for
// what must see a file at once (the findings' parsers); callers hold one
// at a time.
func (r *Repo) ReadChange(c Change) ([]byte, error) {
	rd, err := r.Open(c)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return io.ReadAll(io.LimitReader(rd, MaxFileBytes+1))
}

// BaseReader streams a file's content at the base commit; nil with no
// error for a file that did not exist there.
func (r *Repo) BaseReader(p string) (io.ReadCloser, error) {
	commit, err := r.repo.CommitObject(r.base)
	if err != nil {
		return nil, fmt.Errorf("read base commit: %w", err)
	}
	tree, err := commit.Tree()
	if err != nil {
		return nil, fmt.Errorf("read base tree: %w", err)
	}
	e, err := tree.FindEntry(p)
	if err != nil || !e.Mode.IsFile() {
		return nil, nil
	}
	return r.blobReader(e.Hash)
}

func (r *Repo) blobReader(h plumbing.Hash) (io.ReadCloser, error) {
	b, err := r.repo.BlobObject(h)
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", h, err)
	}
	rd, err := b.Reader()
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", h, err)
	}
	return rd, nil
}
