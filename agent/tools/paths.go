package tools

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
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
// can act on. It returns false for errors that are not the model's to fix
// (an I/O failure), which the caller returns as a Go error.
func fileFailure(rel string, err error) (Result, bool) {
	switch {
	case errors.Is(err, sandbox.ErrPathDenied), errors.Is(err, syscall.ELOOP):
		return fail(PathDenied, err.Error(),
			"use a path inside the repository; secret files (.env, keys, credentials) and .git are never accessible"), true
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return fail(NotFound, rel+" does not exist", "check the path with list_files or search"), true
	case errors.Is(err, sandbox.ErrTooLarge):
		return fail(TooLarge, err.Error(), "inspect the file with run (for example head, wc -l or grep)"), true
	case errors.Is(err, sandbox.ErrNotRegular):
		return fail(InvalidArguments, rel+" is not a regular file (a directory or a special file)",
			"use list_files for a directory; only regular files can be read or written"), true
	}
	return Result{}, false
}

// clean checks a model-supplied path and returns it relative to the root.
func (s *Set) clean(name string) (string, Result, bool) {
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
// secret file under an innocent name.
func (s *Set) readRegular(rel string) ([]byte, Result, error) {
	info, err := s.fs.Stat(rel)
	if err == nil && info.Mode()&fs.ModeSymlink != 0 {
		return nil, fail(PathDenied, rel+" is a symbolic link",
			"read the file it points to by its own path (run `readlink "+rel+"` shows it)"), nil
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
