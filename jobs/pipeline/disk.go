package pipeline

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/patchwright/patchwright/internal/logkey"
	"github.com/patchwright/patchwright/sandbox"
)

// DefaultMinFreeBytes is the free disk a job needs before it starts: a
// clone, the check copies and what the commands write.
const DefaultMinFreeBytes = 2 << 30

// ErrDiskFull is what Execute wraps when the work directory's disk has
// less free space than Executor.MinFreeBytes; nothing has started then.
var ErrDiskFull = errors.New("not enough free disk to start the job")

// checkDisk refuses to start a job on a nearly full disk, rather than
// fail half-way with the host's disk full.
func (e *Executor) checkDisk() error {
	dir := cmp.Or(e.WorkDir, os.TempDir())
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return fmt.Errorf("check free disk of %s: %w", dir, err)
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	if want := cmp.Or(e.MinFreeBytes, DefaultMinFreeBytes); free < want {
		return fmt.Errorf("%w: %d MiB free, %d MiB needed", ErrDiskFull, free>>20, want>>20)
	}
	return nil
}

// ReasonDiskBound starts the reason of a run stopped because the job
// passed its disk bound: its bounded file system (the work tree, the
// checks' copies, the job's own cache, its services' volumes) is full,
// or its services' writable layers outgrew what it left
// (sandbox.ErrDiskBound). Like ReasonChangeTooLarge it is the job's own
// doing, never retried as the worker's.
const ReasonDiskBound = "disk_bound_exceeded"

// minJobFree is the free space under which the job's bounded file system
// counts as full: a command that filled it leaves a few blocks at most.
const minJobFree = 1 << 20

// boundDir is name's directory on the job's bounded file system; "" when
// the job has none (its trees are then plain directories).
func (r *run) boundDir(name string) string {
	if r.clone.unbound == nil {
		return ""
	}
	return filepath.Join(r.clone.trees, name)
}

// diskFull says that the job's bounded file system is full, "" if it is
// not or the job has none.
func (r *run) diskFull() string {
	if r.clone.unbound == nil {
		return ""
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(r.clone.trees, &st); err != nil {
		return "the job's disk could not be measured: " + scrubPaths(err, r.clone.tmp).Error()
	}
	if int64(st.Bavail)*st.Bsize >= minJobFree {
		return ""
	}
	return fmt.Sprintf("the job's disk bound of %d MiB is full (the work tree, its copies, the job's own cache and its services' volumes share it)", int64(st.Blocks)*st.Bsize>>20)
}

// overDisk reports whether the job passed its disk bound in phase, which
// ended with err, and says how in r.ended.diskBound. A full file system stops
// the run, even after a phase that succeeded, once the job has a cache
// of its own on it: a dependency setup cut short there left partial
// downloads that the final checks would read. A work tree filled by the
// model's own writes, with no job cache, does not: those writes failed
// in the model's commands, and the run goes on without them.
func (r *run) overDisk(phase Phase, err error) bool {
	if errors.Is(err, sandbox.ErrDiskBound) {
		// Fixed words: the error names the command that was running.
		r.e.logger().Warn("the job passed its disk bound", logkey.Err, err)
		r.ended.diskBound = fmt.Sprintf("the job's services wrote past the job's disk bound during the %s phase, so they were stopped", phase)
		return true
	}
	if r.box.vols.job == "" {
		return false
	}
	if why := r.diskFull(); why != "" {
		r.ended.diskBound = why + " after the " + string(phase) + " phase"
		return true
	}
	return false
}

// scrubbed is an error whose message has the job's host paths replaced,
// so a comment or a log on GitHub never shows the worker's directories.
type scrubbed struct {
	msg string
	err error
}

func (s scrubbed) Error() string { return s.msg }
func (s scrubbed) Unwrap() error { return s.err }

// scrubPaths replaces each of dirs in err's message with "the work
// directory".
func scrubPaths(err error, dirs ...string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	for _, d := range dirs {
		if d != "" && d != "/" {
			msg = strings.ReplaceAll(msg, d, "<work directory>")
		}
	}
	if msg == err.Error() {
		return err
	}
	return scrubbed{msg: msg, err: err}
}
