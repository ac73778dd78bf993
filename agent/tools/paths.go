package tools

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"syscall"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/patchwright/patchwright/sandbox"
)

// readState remembers, per file, the content the model last saw: what
// read_file returned or what edit and write_file wrote. A write is allowed
// only while the file still has that content, so an edit never lands on a
// version the model has not seen (one a formatter or a command rewrote).
type readState struct {
	mu   sync.Mutex
	seen map[string][sha256.Size]byte
}

func newReadState() *readState {
	return &readState{seen: make(map[string][sha256.Size]byte)}
}

// record notes that the model now knows data as the content of rel.
func (r *readState) record(rel string, data []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen[rel] = sha256.Sum256(data)
}

// forget drops rel, for example after it was deleted.
func (r *readState) forget(rel string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.seen, rel)
}

// staleness is why the model's view of a file is not current.
type staleness int

const (
	current staleness = iota
	neverRead
	changed
)

// check compares the file's current content with what the model saw.
func (r *readState) check(rel string, data []byte) staleness {
	r.mu.Lock()
	defer r.mu.Unlock()
	sum, ok := r.seen[rel]
	switch {
	case !ok:
		return neverRead
	case sum != sha256.Sum256(data):
		return changed
	}
	return current
}

// staleResult explains a stale_file refusal.
func staleResult(rel string, why staleness) Result {
	if why == neverRead {
		return fail(StaleFile, rel+" has not been read in this run",
			"call read_file on "+rel+" first, then retry with text copied from it")
	}
	return fail(StaleFile, rel+" changed since you last read it (a command or formatter may have rewritten it)",
		"call read_file on "+rel+" again and base the change on its current content")
}

// fileFailure turns a workspace error about rel into a result the model
// can act on. Every error the operating system gives for a path the model
// chose is the model's to work around, so it becomes a result, never the
// end of the run; it returns false only for errors that are not about the
// path (an I/O error, a failure without an errno), which the caller
// returns as a Go error.
func fileFailure(rel string, err error) (Result, bool) {
	var nv *sandbox.NotVisibleError
	switch {
	case errors.As(err, &nv) && isSpecial(nv.Why):
		// Not a denial: there is nothing to read in a FIFO or a device.
		return fail(InvalidArguments, err.Error(), "only regular files can be read or written; inspect it with run if needed"), true
	case errors.As(err, &nv):
		return fail(PathDenied, err.Error(), notVisibleHint(nv.Why)), true
	case errors.Is(err, sandbox.ErrPathDenied), errors.Is(err, syscall.ELOOP):
		return fail(PathDenied, err.Error(),
			"use a path inside the repository; secret files (.env, keys, credentials) and .git are never accessible"), true
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return fail(NotFound, rel+" does not exist", "check the path with list_files or search"), true
	case errors.Is(err, sandbox.ErrTooLarge):
		return fail(TooLarge, err.Error(), "inspect the file with run (for example head, wc -l or grep)"), true
	case errors.Is(err, sandbox.ErrNotRegular), errors.Is(err, syscall.EISDIR):
		return fail(InvalidArguments, rel+" is not a regular file (a directory or a special file)",
			"use list_files for a directory; only regular files can be read or written"), true
	case errors.Is(err, syscall.ENAMETOOLONG), errors.Is(err, syscall.EINVAL), errors.Is(err, syscall.EILSEQ):
		return fail(InvalidArguments, "the path is not valid here: "+errnoText(err),
			fmt.Sprintf("use a shorter, plain path (components of at most %d bytes, no NUL bytes)", maxComponent)), true
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return fail(TooLarge, "the workspace is full: "+errnoText(err),
			"remove build output or large files a command created (run `du -sh *` to find them), then retry"), true
	}
	var errno syscall.Errno
	if errors.As(err, &errno) && errno != syscall.EIO {
		return fail(PathDenied, rel+" cannot be used: "+errnoText(err),
			"try another path, or inspect it with run (for example ls -l)"), true
	}
	return Result{}, false
}

// errnoText is the system's reason for err without the operation and path
// that *fs.PathError puts in front.
func errnoText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	return err.Error()
}

// Limits of a path the model supplies: Linux's NAME_MAX for one component
// and PATH_MAX less its terminating NUL for the whole path. Longer ones
// could only fail deep in a system call.
const (
	maxComponent = 255
	maxPath      = 4095
)

// pathProblem says what makes a model-supplied path unusable before any
// system call sees it: a NUL byte (which no system call accepts), or a
// component or whole path over the kernel's limits. Empty means none.
func pathProblem(name string) string {
	if strings.IndexByte(name, 0) >= 0 {
		return "the path contains a NUL byte"
	}
	if len(name) > maxPath {
		return fmt.Sprintf("the path is %d bytes long (the limit is %d)", len(name), maxPath)
	}
	for part := range strings.SplitSeq(name, "/") {
		if len(part) > maxComponent {
			return fmt.Sprintf("a component of the path is %d bytes long (the limit is %d)", len(part), maxComponent)
		}
	}
	return ""
}

// clean checks a model-supplied path and returns it relative to the root.
func (s *Set) clean(name string) (string, Result, bool) {
	if problem := pathProblem(name); problem != "" {
		return "", fail(InvalidArguments, problem, "give a plain path relative to the repository root, as list_files shows it"), false
	}
	rel, err := s.fs.Clean(name)
	if err != nil {
		res, _ := fileFailure(name, err)
		if res.Code == "" {
			res = fail(PathDenied, err.Error(), "use a path relative to the repository root")
		}
		return "", res, false
	}
	return rel, Result{}, true
}

// cleanWritable is clean plus the refusal of protected paths and of the
// repository root itself.
func (s *Set) cleanWritable(name string) (string, Result, bool) {
	rel, res, ok := s.clean(name)
	if !ok {
		return "", res, false
	}
	if rel == "." {
		return "", fail(InvalidArguments, "the path is the repository root", "name a file inside the repository"), false
	}
	// An excluded path cannot be written either: writing would tell the
	// model what is there (an edit needs the old text) or replace what it
	// may not see.
	var nv *sandbox.NotVisibleError
	if err := s.visible(rel); errors.As(err, &nv) && nv.Why == sandbox.WhyExcluded {
		return "", fail(PathDenied, nv.Error(), "leave this path alone; say in your finish summary what change it would need"), false
	}
	for _, pat := range s.protected {
		if m, _ := doublestar.Match(pat, rel); m {
			return "", fail(PathDenied, fmt.Sprintf("%s is protected (protected_paths %q in .github/agent.yml)", rel, pat),
				"leave this file unchanged; say in your finish summary what change it would need"), false
		}
	}
	return rel, Result{}, true
}

// viewer is the workspace's visibility rule (sandbox.Workspace); test
// fakes of files need not have it.
type viewer interface {
	Visible(name string) error
	WalkVisible(name string, fn fs.WalkDirFunc) error
}

// visible applies sandbox.Workspace.Visible, the one rule for what the
// model may see. A stand-in for the workspace without it (a test's fake)
// gets the same kind rule from its Stat and the strict hard-link rule,
// as it has no index of hidden files.
func (s *Set) visible(rel string) error {
	if v, ok := s.fs.(viewer); ok {
		return v.Visible(rel)
	}
	info, err := s.fs.Stat(rel)
	if err != nil {
		return err
	}
	return strictProblem(rel, info)
}

// strictProblem is the fallback rule of visible for one entry.
func strictProblem(rel string, info fs.FileInfo) error {
	if why := sandbox.KindProblem(info.Mode()); why != "" {
		return &sandbox.NotVisibleError{Path: rel, Why: why}
	}
	if why := sandbox.StrictLinkProblem(info); why != "" {
		return &sandbox.NotVisibleError{Path: rel, Why: why}
	}
	return nil
}

// readRegular reads rel for the model, if the model may see it.
func (s *Set) readRegular(_ context.Context, rel string) ([]byte, Result, error) {
	err := s.visible(rel)
	var data []byte
	if err == nil {
		data, err = s.fs.ReadFile(rel)
	}
	if err != nil {
		if res, ok := fileFailure(rel, err); ok {
			return nil, res, nil
		}
		return nil, Result{}, fmt.Errorf("read %s: %w", rel, err)
	}
	return data, Result{}, nil
}

// checkStart checks the path a listing or search starts from by the same
// rule, so a symlink is refused rather than silently yielding nothing.
func (s *Set) checkStart(start string) (Result, error) {
	if err := s.visible(start); err != nil {
		if res, ok := fileFailure(start, err); ok {
			return res, nil
		}
		return Result{}, fmt.Errorf("stat %s: %w", start, err)
	}
	return Result{}, nil
}

// isSpecial: the file is refused for its kind (a FIFO, socket, device).
func isSpecial(why string) bool {
	switch why {
	case sandbox.WhyFIFO, sandbox.WhySocket, sandbox.WhyDevice, sandbox.WhyIrregular:
		return true
	}
	return false
}

// notVisibleHint tells the model what to do about a link it may not read.
func notVisibleHint(why string) string {
	switch why {
	case sandbox.WhySymlink:
		return "read the file it points to by its own path (run `readlink` shows it); links are never followed"
	case sandbox.WhyHardLink:
		return "secret files are never shown, under any name; work without their content"
	}
	return "name the file by its own path, not through a symbolic link"
}
