package pipeline

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/verify"
)

// checkEnv turns off the per-user configuration hooks of the toolchains
// checks run, so that nothing the agent phase wrote outside the work tree
// can change what a check does (a GOFLAGS=-exec written by `go env -w`, an
// npmrc script-shell, a Python user site). HOME is a fresh tmpfs in every
// sandbox anyway; these also cover the image's own defaults.
var checkEnv = []string{
	"GOENV=off", "GOFLAGS=",
	// The image's global npmrc is the image's, read-only; npm refuses to
	// load one file as both.
	"NPM_CONFIG_USERCONFIG=/dev/null",
	"PYTHONNOUSERSITE=1", "PYTHONSTARTUP=", "PIP_CONFIG_FILE=/dev/null",
	"GIT_CONFIG_GLOBAL=/dev/null",
	"BASH_ENV=", "ENV=",
	"MAVEN_ARGS=",
	"CARGO_BUILD_RUSTC_WRAPPER=", "RUSTC_WRAPPER=",
}

// checksEnv is the environment of the checks' sandboxes: checkEnv, and
// GOWORK=off unless the cloned commit tracks a go.work. A go.work the
// model adds (its replace lines point a module at another copy) would
// otherwise choose what the final go test compiles; an edit of a
// tracked one, or a new one below the root, is a changed harness
// (testsrc), never verified.
func (r *run) checksEnv() []string {
	if r.clone.goWork {
		return checkEnv
	}
	return append(slices.Clip(checkEnv), "GOWORK=off")
}

// checkSandbox is a fresh container for the baseline or the final checks:
// the run's image on a tree of its own (see tree.go), with a new HOME, no
// network, no process of the agent phase and the hooks of checkEnv off.
// Its tree keeps what the checks write (build output, a test that edits
// files) out of the tree that is committed.
type checkSandbox struct {
	sb  sandbox.Sandbox
	ws  *sandbox.Workspace
	dir string
	// venvs are the virtualenvs setup made in dir (virtualenvs).
	venvs map[string]string
}

// newCheckSandbox starts the container of the checks stage s (the
// baseline's or the final's row, trust.go) on dir, which it then owns.
func (r *run) newCheckSandbox(ctx context.Context, s stage, dir string) (*checkSandbox, error) {
	c := &checkSandbox{dir: dir}
	var err error
	if c.venvs, err = r.virtualenvs(dir); err != nil {
		c.close()
		return nil, err
	}
	uid, gid := r.e.sandboxOwner()
	if err := sandbox.HandOver(dir, uid, gid); err != nil {
		c.close()
		return nil, err
	}
	if c.ws, err = sandbox.OpenWorkspace(dir); err != nil {
		c.close()
		return nil, err
	}
	if c.sb, err = r.create(ctx, s, dir); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

// runner is a verification runner over the check sandbox, recording to
// the run's ledger.
func (r *run) runner(sb sandbox.Sandbox) *verify.Runner {
	return &verify.Runner{Sandbox: sb, Checks: r.clone.checks, Recorder: r.recorder(), Timeout: r.e.CheckTimeout, Image: r.clone.image}
}

// checkRunner is the runner over a check sandbox, with the virtualenvs
// setup made in its tree.
func (r *run) checkRunner(c *checkSandbox) *verify.Runner {
	v := r.runner(c.sb)
	v.Virtualenvs, v.ImagePytest = c.venvs, imagePytest(c.dir, c.venvs)
	return v
}

// recorder records checks to the ledger with secrets withheld.
func (r *run) recorder() scanningRecorder { return scanningRecorder{w: r.ledger, sc: r.scanner} }

func (c *checkSandbox) close() {
	if c.sb != nil {
		c.sb.Close()
	}
	if c.ws != nil {
		c.ws.Close()
	}
	os.RemoveAll(c.dir)
}

// copyTree copies the regular files, directories and symbolic links (as
// links, never followed) of src into a new directory dst. Anything else a
// command may have made (a FIFO, a device, a socket) is left out, so no
// read can block.
func copyTree(src, dst string) error {
	from, err := os.OpenRoot(src)
	if err != nil {
		return err
	}
	defer from.Close()
	if err := os.Mkdir(dst, 0o755); err != nil {
		return err
	}
	to, err := os.OpenRoot(dst)
	if err != nil {
		return err
	}
	defer to.Close()
	return fs.WalkDir(from.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return err
		}
		switch t := d.Type(); {
		case t.IsDir():
			return to.Mkdir(p, 0o755)
		case t&fs.ModeSymlink != 0:
			target, err := from.Readlink(p)
			if err != nil {
				return err
			}
			return to.Symlink(target, p)
		case t.IsRegular():
			return copyFile(from, to, p)
		}
		return nil
	})
}

// maxCopyBytes is the largest file copied for the checks: GitHub refuses
// larger files, so such a file cannot be part of the change either, and a
// sparse file of many gigabytes must not fill the host's disk.
const maxCopyBytes = 100 << 20

// copyFile streams one regular file (opened without following a link).
func copyFile(from, to *os.Root, p string) error {
	info, err := from.Lstat(p)
	if err != nil || !info.Mode().IsRegular() || info.Size() > maxCopyBytes {
		return err
	}
	in, err := from.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := to.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, info.Mode().Perm())
	if err != nil {
		return err
	}
	return errors.Join(writeSparse(out, in, info.Size()), out.Close())
}

// sparseBlock is the unit writeSparse skips when it is all zeros.
const sparseBlock = 64 << 10

// writeSparse copies size bytes of in to the new file out, seeking over
// each block of zeros rather than writing it: a sparse file (or a blob
// of zeros) costs its copy no disk for its holes, so a tree of sparse
// files cannot fill the job's disk when it is copied (issue 23). A file's
// holes are found with SEEK_DATA and not read at all: reading 30 holes of
// 100 MiB took 12 s of a core under the race detector.
func writeSparse(out *os.File, in io.Reader, size int64) error {
	buf := make([]byte, sparseBlock)
	file, _ := in.(*os.File)
	var n int64
	for n < size {
		end := size
		if file != nil {
			var start int64
			start, end = dataExtent(file, n, size)
			if _, err := file.Seek(start, io.SeekStart); err != nil {
				return err
			}
			if start != n {
				if _, err := out.Seek(start, io.SeekStart); err != nil {
					return err
				}
				n = start
			}
			if end <= n {
				// An empty stretch of data: read to the end rather than
				// ask again and loop.
				end = size
			}
		}
		m, err := copyZerosAsHoles(out, in, buf, end-n)
		n += m
		if err == io.EOF {
			break // the file shrank: copy what it has
		}
		if err != nil {
			return err
		}
	}
	// The length a trailing hole leaves unwritten.
	return out.Truncate(n)
}

// copyZerosAsHoles copies up to length bytes of in to out, seeking over
// each block of zeros; io.EOF if in ends first.
func copyZerosAsHoles(out *os.File, in io.Reader, buf []byte, length int64) (int64, error) {
	var n int64
	for n < length {
		m, err := io.ReadFull(in, buf[:min(int64(len(buf)), length-n)])
		if m > 0 {
			var werr error
			if bytes.Equal(buf[:m], zeros[:m]) {
				_, werr = out.Seek(int64(m), io.SeekCurrent)
			} else {
				_, werr = out.Write(buf[:m])
			}
			if werr != nil {
				return n, werr
			}
			n += int64(m)
		}
		if err == io.ErrUnexpectedEOF {
			err = io.EOF
		}
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// dataExtent is the first stretch of data in f at or after off, up to
// size: from SEEK_DATA to the next SEEK_HOLE. With only a hole left it
// starts at size; where the file system cannot tell, everything is data.
// It moves f's offset.
func dataExtent(f *os.File, off, size int64) (start, end int64) {
	start, end = off, size
	conn, err := f.SyscallConn()
	if err != nil {
		return start, end
	}
	conn.Control(func(fd uintptr) {
		s, err := unix.Seek(int(fd), off, unix.SEEK_DATA)
		if errors.Is(err, unix.ENXIO) {
			start = size
			return
		}
		if err != nil {
			return
		}
		e, err := unix.Seek(int(fd), s, unix.SEEK_HOLE)
		if err != nil {
			e = size
		}
		start, end = min(s, size), min(e, size)
	})
	return start, end
}

var zeros = make([]byte, sparseBlock)
