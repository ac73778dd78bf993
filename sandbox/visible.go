package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"syscall"
)

// NotVisibleError says why the model may not see a path that exists. It
// unwraps to ErrPathDenied, so every caller maps it to path_denied.
type NotVisibleError struct {
	Path string
	Why  string // one of the Why constants
}

// The reasons of a NotVisibleError.
const (
	WhySymlink   = "is a symbolic link, which is never followed"
	WhyHardLink  = "is a hard link to a file that is never shown (a secret-bearing file or one in .git)"
	WhyFIFO      = "is a FIFO, not a regular file"
	WhySocket    = "is a socket, not a regular file"
	WhyDevice    = "is a device, not a regular file"
	WhyIrregular = "is not a regular file"
)

func (e *NotVisibleError) Error() string { return e.Path + " " + e.Why }

func (e *NotVisibleError) Unwrap() error { return ErrPathDenied }

// Visible is the one answer to "may the model see this file?", for every
// path by which the model reads the tree: read_file, search, list_files,
// the instruction files and the repository map. It returns nil for a
// regular file or a directory the model may see, and otherwise:
//
//   - ErrPathDenied (from Clean) for an absolute or climbing path, a
//     secret-bearing path or .git;
//   - a *NotVisibleError (which is ErrPathDenied) for a symbolic link,
//     final or on the way, wherever it points: refusing is simpler than
//     judging the target and cannot be fooled by a chain; for a FIFO, a
//     socket or a device; and for a hard link to a file the model may not
//     see by its own name (a second name of .env or of a file in .git);
//   - a *NotVisibleError (WhyExcluded) for a path under an exclude:
//     pattern (Exclude), existing or not;
//   - an error that is fs.ErrNotExist for a path that does not exist.
func (w *Workspace) Visible(name string) error {
	rel, err := w.Clean(name)
	if err != nil {
		return err
	}
	if rel == "." {
		return nil
	}
	// Before the file system is asked: an excluded path is refused alike
	// whether it exists or not, so the answer does not tell.
	if w.excluded(rel, w.isDir(rel)) {
		return w.excludedErr(rel)
	}
	// Each component on its own: os.Root follows a link inside the root,
	// so "docs/x" could otherwise reach .git/x through docs -> .git.
	parts := strings.Split(rel, "/")
	for i := range parts {
		p := strings.Join(parts[:i+1], "/")
		info, err := w.root.Lstat(p)
		if errors.Is(err, syscall.ENOTDIR) {
			err = fmt.Errorf("%s: %w", p, fs.ErrNotExist)
		}
		if err != nil {
			return w.classify(p, err)
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			if i < len(parts)-1 {
				return &NotVisibleError{rel, "passes through the symbolic link " + p + ", which is never followed"}
			}
			return &NotVisibleError{rel, WhySymlink}
		}
		if i == len(parts)-1 {
			return w.visibleInfo(rel, info)
		}
	}
	return nil
}

// visibleInfo judges a file by its Lstat: directories and regular files
// are visible, unless the file is another name for a hidden one.
func (w *Workspace) visibleInfo(rel string, info fs.FileInfo) error {
	if why := KindProblem(info.Mode()); why != "" {
		return &NotVisibleError{rel, why}
	}
	if !info.Mode().IsRegular() || links(info) < 2 {
		return nil
	}
	hidden, err := w.index.isHidden(info)
	if err != nil {
		return fmt.Errorf("check the links of %s: %w", rel, err)
	}
	if hidden {
		return &NotVisibleError{rel, WhyHardLink}
	}
	return nil
}

// KindProblem is why a file of this mode is never shown, or "" for a
// regular file or a directory: a symbolic link is never followed, and a
// FIFO, socket or device is not a file to read (opening a FIFO could
// block the reader forever).
func KindProblem(m fs.FileMode) string {
	switch {
	case m.IsRegular(), m.IsDir():
		return ""
	case m&fs.ModeSymlink != 0:
		return WhySymlink
	case m&fs.ModeNamedPipe != 0:
		return WhyFIFO
	case m&fs.ModeSocket != 0:
		return WhySocket
	case m&fs.ModeDevice != 0:
		return WhyDevice
	}
	return WhyIrregular
}

// StrictLinkProblem is the hard-link rule for a tree without an index
// (a test's stand-in for the workspace): every second name is refused.
func StrictLinkProblem(info fs.FileInfo) string {
	if info.Mode().IsRegular() && links(info) > 1 {
		return WhyHardLink
	}
	return ""
}

// WalkVisible walks the tree under name like WalkDir (lexical order, .git
// and secret paths left out, symlinks never followed). An entry Visible
// refuses (a symbolic link, a special file, a hard link to a hidden file)
// reaches fn with a *NotVisibleError, which fn skips by returning nil, as
// it would a directory that cannot be read. The start itself must be
// visible.
func (w *Workspace) WalkVisible(name string, fn fs.WalkDirFunc) error {
	if err := w.Visible(name); err != nil {
		return err
	}
	checkLinks, err := w.index.hasHidden()
	if err != nil {
		return err
	}
	return w.WalkDir(name, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fn(p, d, err)
		}
		if w.excluded(p, d.IsDir()) {
			// Left out as .git and secret paths are: fn never sees it.
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if why := KindProblem(d.Type()); why != "" {
			return fn(p, d, &NotVisibleError{p, why})
		}
		if checkLinks && d.Type().IsRegular() {
			// Only when some hidden file has a second name does a file
			// cost an Lstat; a tree without such links pays nothing.
			info, err := w.root.Lstat(p)
			if err != nil {
				return nil // gone since the directory was read
			}
			if err := w.visibleInfo(p, info); err != nil {
				return fn(p, d, err)
			}
		}
		return fn(p, d, nil)
	})
}

// BinaryProbe is how much of a file IsBinary looks at: git's rule
// (buffer_is_binary looks at the first 8,000 bytes).
const BinaryProbe = 8000

// IsBinary reports whether b is binary by git's rule: a NUL byte in its
// first 8,000 bytes. Every part of Patchwright that tells text from
// binary (the tools, the change list, the findings) uses it.
func IsBinary(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), BinaryProbe)], 0) >= 0
}

// isSecretName reports whether one path component is secret-bearing.
func isSecretName(name string) bool {
	for _, p := range secretPatterns {
		if !p.mayMatch(name) {
			continue
		}
		if ok, _ := path.Match(p.pat, name); ok {
			return true
		}
	}
	return false
}

// secretPattern is a pattern of secretNames with what a quick test needs.
// Every walk checks every name, and path.Match for each pattern was most
// of the cost of a search.
type secretPattern struct {
	pat            string
	prefix, suffix string // the text before the first * and after the last
	stars, other   bool   // it has a *; it has another wildcard
}

var secretPatterns = newSecretPatterns(secretNames)

func newSecretPatterns(pats []string) []secretPattern {
	var ps []secretPattern
	for _, pat := range pats {
		p := secretPattern{pat: pat, other: strings.ContainsAny(pat, `?[\`)}
		if first := strings.IndexByte(pat, '*'); first >= 0 {
			p.stars, p.prefix, p.suffix = true, pat[:first], pat[strings.LastIndexByte(pat, '*')+1:]
		}
		ps = append(ps, p)
	}
	return ps
}

// mayMatch is false when name cannot match: for a pattern whose only
// wildcard is *, name must begin with the text before its first * and end
// with the text after its last one.
func (p secretPattern) mayMatch(name string) bool {
	switch {
	case p.other:
		return true
	case !p.stars:
		return p.pat == name
	}
	return strings.HasPrefix(name, p.prefix) && strings.HasSuffix(name, p.suffix)
}
