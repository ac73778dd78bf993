package pipeline

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
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
