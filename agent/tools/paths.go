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
	switch {
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
	for _, pat := range s.protected {
		if m, _ := doublestar.Match(pat, rel); m {
			return "", fail(PathDenied, fmt.Sprintf("%s is protected (protected_paths %q in .github/agent.yml)", rel, pat),
				"leave this file unchanged; say in your finish summary what change it would need"), false
		}
	}
	return rel, Result{}, true
}

// readRegular reads rel for the model. A final symlink is refused: the
// workspace keeps it inside the repository, but it could still name a
// secret file under an innocent name. A hard link to a secret-bearing file
// is refused for the same reason.
func (s *Set) readRegular(ctx context.Context, rel string) ([]byte, Result, error) {
	info, err := s.fs.Stat(rel)
	if err == nil && info.Mode()&fs.ModeSymlink != 0 {
		return nil, fail(PathDenied, rel+" is a symbolic link",
			"read the file it points to by its own path (run `readlink "+rel+"` shows it)"), nil
	}
	if err == nil {
		if res, lerr := s.refuseSecretLink(ctx, rel, info); lerr != nil || res.Code != "" {
			return nil, res, lerr
		}
	}
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

// refuseSecretLink is path_denied for a hard link to a secret-bearing
// file, and nothing for any other file.
func (s *Set) refuseSecretLink(ctx context.Context, rel string, info fs.FileInfo) (Result, error) {
	linked, err := s.links.isLink(ctx, info)
	if err != nil {
		return Result{}, fmt.Errorf("check the links of %s: %w", rel, err)
	}
	if linked {
		return fail(PathDenied, rel+" is a hard link to a secret-bearing file (.env, a key, credentials)",
			"secret files are never shown, under any name; work without their content"), nil
	}
	return Result{}, nil
}

// checkStart checks the path a listing or search starts from. A symlink is
// refused rather than silently yielding nothing: the walk does not follow
// it.
func (s *Set) checkStart(start string) (Result, error) {
	info, err := s.fs.Stat(start)
	if err != nil {
		if res, ok := fileFailure(start, err); ok {
			return res, nil
		}
		return Result{}, fmt.Errorf("stat %s: %w", start, err)
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		return fail(PathDenied, start+" is a symbolic link, which is not followed",
			"name the directory or file it points to by its own path"), nil
	}
	return Result{}, nil
}
