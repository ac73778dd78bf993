package gitrepo

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/utils/diff"
	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/patchwright/patchwright/sandbox"
)

// Kind is how a path changed.
type Kind string

// Kinds of change.
const (
	Added    Kind = "added"
	Modified Kind = "modified"
	Deleted  Kind = "deleted"
)

// Change is one changed path of the work tree against the last commit.
type Change struct {
	Path string `json:"path"`
	Kind Kind   `json:"kind"`
	// Added and Removed count lines; both are zero for binary files.
	Added   int  `json:"added"`
	Removed int  `json:"removed"`
	Binary  bool `json:"binary,omitempty"`
	// Symlink is set when the new version is a symbolic link.
	Symlink bool `json:"symlink,omitempty"`
	// TooLarge is set when the new version is over MaxFileBytes: it was
	// not read (no line counts) and must not be committed.
	TooLarge bool `json:"too_large,omitempty"`
	// GitPath says why git treats the path as its own directory (another
	// spelling of .git; gitPathProblem): it was not read and must not be
	// committed.
	GitPath string `json:"git_path,omitempty"`
	// Covers are the other paths this change decides in a checkout of the
	// commit: for a file or link that replaces a base directory, the base
	// files under it (the commit drops them all), and for a link to a
	// directory of the tree, the paths it makes readable through its own
	// name. A rule on paths (protected paths) must judge these too, so
	// that `.github` replaced by a link is judged as `.github/agent.yml`.
	Covers []string `json:"covers,omitempty"`
	// CoversAll is set for a link to a directory too large to list in
	// Covers: it covers every path under Path.
	CoversAll bool `json:"covers_all,omitempty"`

	// mode, blob and size are the new version as Changes read it: the
	// blob it wrote as it read the file, which Commit commits and Open
	// streams, so the commit holds what was scanned. target is a link's
	// target (a few bytes).
	mode   filemode.FileMode
	blob   plumbing.Hash
	size   int64
	target string
}

// Executable reports whether the new version is an executable file.
func (c Change) Executable() bool { return c.mode == filemode.Executable }

// Target is a link's target; "" for anything else.
func (c Change) Target() string { return c.target }

// Size is the new version's size in bytes; 0 for a deleted or TooLarge
// file.
func (c Change) Size() int64 { return c.size }

// MaxFileBytes is the largest changed file Changes reads. A larger one is
// reported TooLarge without reading it, so a sparse file of gigabytes
// costs a stat, not the worker's memory (GitHub refuses files over 100 MB).
const MaxFileBytes = 10 << 20

// Changes compares the work tree with the last commit (the base, until
// Commit) and returns every changed path in order. Every tracked file is
// read and hashed against its blob: a stat that matches the index proves
// nothing, since a command can write a file and put its size and
// modification time back. Untracked files that .gitignore excludes,
// anything inside a .git directory, and special files (FIFOs, sockets,
// devices) are not changes. A path git treats as its own (gitpath.go)
// refuses the change whole, as a LimitError.
func (r *Repo) Changes() ([]Change, error) { return r.ChangesWithin(Limits{}) }

// ChangesWithin is Changes with the work tree held to lim: a tree or a
// change past one of its bounds is a *LimitError, the change's failure
// rather than the worker's.
func (r *Repo) ChangesWithin(lim Limits) ([]Change, error) { return r.changes(nil, lim) }

// ChangesSince is ChangesWithin read against the directory pristine too
// (the work tree as setup left it, before the model could write it): a
// path the work tree holds as pristine does (the same bytes and mode, the
// same link target, or absent from both) is not a change, so what setup
// wrote or deleted is never the model's change. A file setup wrote that
// the model then edited is one, as a change against the last commit.
func (r *Repo) ChangesSince(pristine string, lim Limits) ([]Change, error) {
	p, err := os.OpenRoot(pristine)
	if err != nil {
		return nil, fmt.Errorf("open the pristine tree: %w", err)
	}
	defer p.Close()
	return r.changes(p, lim)
}

// changes is ChangesWithin, less the paths pristine (nil: none) holds as
// the work tree does.
func (r *Repo) changes(pristine *os.Root, lim Limits) ([]Change, error) {
	lim = lim.withDefaults()
	idx, tracked, root, err := r.openTracked()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	ignore, err := r.ignoreMatcher(root)
	if err != nil {
		return nil, err
	}

	s := &changeScan{
		r: r, root: root, pristine: pristine, tracked: tracked, ignore: ignore, lim: lim,
		seen: make(map[string]bool, len(tracked)),
	}
	if err := fs.WalkDir(root.FS(), ".", s.visit); err != nil {
		return nil, fmt.Errorf("scan work tree: %w", err)
	}
	r.cover(root, s.changes, idx.Entries)
	if err := s.addDeleted(); err != nil {
		return nil, err
	}
	sort.Slice(s.changes, func(i, j int) bool { return s.changes[i].Path < s.changes[j].Path })
	return s.changes, nil
}

// changeScan is one walk of the work tree by changes: what it reads
// against, the bounds it holds the tree to, and what it has found.
type changeScan struct {
	r        *Repo
	root     *os.Root
	pristine *os.Root // nil: none
	tracked  map[string]*index.Entry
	ignore   gitignore.Matcher
	lim      Limits
	changed  int64 // bytes of changed files read so far
	entries  int   // files and directories walked so far
	seen     map[string]bool
	changes  []Change
}

// visit is the WalkDir function of changes: it skips what is never a
// change and records the rest.
func (s *changeScan) visit(p string, d fs.DirEntry, err error) error {
	if err != nil {
		return err
	}
	if d.Name() == ".git" && p != "." {
		// Never content: git itself cannot track a path named .git.
		if d.IsDir() {
			return fs.SkipDir
		}
		return nil
	}
	if s.entries++; s.entries > s.lim.MaxEntries {
		return limitf("the work tree has more than %d files and directories", s.lim.MaxEntries)
	}
	if err := s.lim.checkPath(p); err != nil {
		return err
	}
	if d.IsDir() {
		return nil
	}
	if !d.Type().IsRegular() && d.Type()&fs.ModeSymlink == 0 {
		return nil
	}
	entry := s.tracked[p]
	if entry == nil && s.ignore.Match(strings.Split(p, "/"), false) {
		return nil
	}
	if why := gitPathProblem(p, d.Type()&fs.ModeSymlink != 0); why != "" {
		// Listed unread, for the caller to leave out of the commit
		// and say so; the rest of the change goes on.
		kind := Added
		if entry != nil {
			kind = Modified
		}
		s.changes = append(s.changes, Change{Path: p, Kind: kind, Binary: true, GitPath: why})
		return nil
	}
	if entry == nil {
		return s.addUntracked(p, d)
	}
	return s.addTracked(p, d, entry)
}

// addUntracked records an untracked file as added, unless pristine
// holds it as the work tree does.
func (s *changeScan) addUntracked(p string, d fs.DirEntry) error {
	if same, err := sameIn(s.pristine, s.root, p); err != nil || same {
		return err
	}
	c, err := s.describe(p, d)
	if err != nil {
		return err
	}
	s.changes = append(s.changes, c)
	return nil
}

// addTracked records a tracked file that differs from its commit, unless
// pristine holds it as the work tree does.
func (s *changeScan) addTracked(p string, d fs.DirEntry, entry *index.Entry) error {
	s.seen[p] = true
	c, isChanged, err := s.compare(p, entry, d)
	if err != nil || !isChanged {
		return err
	}
	// Only a file that differs from its commit is read against
	// pristine: the tree is not hashed twice.
	if same, err := sameIn(s.pristine, s.root, p); err != nil || same {
		return err
	}
	s.changes = append(s.changes, c)
	return nil
}

// addDeleted records every tracked file the walk did not see as
// deleted, unless pristine lacks it too.
func (s *changeScan) addDeleted() error {
	for name, e := range s.tracked {
		if s.seen[name] {
			continue
		}
		if gone, err := absentFrom(s.pristine, name); err != nil || gone {
			if err != nil {
				return err
			}
			continue // setup deleted it
		}
		old, err := s.r.blob(e.Hash)
		if err != nil {
			return err
		}
		c := Change{Path: name, Kind: Deleted, Binary: isBinary(old)}
		if !c.Binary {
			c.Removed = countLines(old)
		}
		s.changes = append(s.changes, c)
	}
	return nil
}

// compare reports whether a tracked file differs from its index entry:
// its bytes are hashed as they stream, and only a changed file is read
// again into a blob.
func (s *changeScan) compare(p string, e *index.Entry, d fs.DirEntry) (Change, bool, error) {
	info, err := d.Info()
	if err != nil {
		return Change{}, false, err
	}
	mode := modeOf(info)
	if info.Size() > MaxFileBytes {
		return Change{Path: p, Kind: Modified, Binary: true, TooLarge: true}, true, nil
	}
	if mode == e.Mode && mode != filemode.Symlink {
		h, err := hashFile(s.root, p)
		if err != nil {
			return Change{}, false, err
		}
		if h == e.Hash {
			return Change{}, false, nil
		}
	}
	c, err := s.read(p, Modified, info, e.Hash)
	if err != nil {
		return Change{}, false, err
	}
	if mode == e.Mode && c.blob == e.Hash {
		return Change{}, false, nil // a link with its old target
	}
	return c, true, nil
}

// describe builds the Change of an added path.
func (s *changeScan) describe(p string, d fs.DirEntry) (Change, error) {
	info, err := d.Info()
	if err != nil {
		return Change{}, err
	}
	if info.Size() > MaxFileBytes {
		return Change{Path: p, Kind: Added, Binary: true, TooLarge: true}, nil
	}
	return s.read(p, Added, info, plumbing.ZeroHash)
}

// read streams p's new version into a blob, counting it against the
// change's bound before a byte is read, and describes it against the
// blob old (zero for an added file): binary when either is, line counts
// otherwise.
func (s *changeScan) read(p string, kind Kind, info fs.FileInfo, old plumbing.Hash) (Change, error) {
	if s.changed += info.Size(); s.changed > s.lim.MaxBytes {
		return Change{}, limitf("the change is larger than %d MB", s.lim.MaxBytes>>20)
	}
	st, err := s.r.storeFile(s.root, p, info)
	if err != nil {
		return Change{}, err
	}
	mode := modeOf(info)
	c := Change{Path: p, Kind: kind, Symlink: mode == filemode.Symlink, mode: mode, blob: st.hash, size: st.size}
	if c.Symlink {
		c.target = string(st.text)
	}
	var before []byte
	if !old.IsZero() && !st.binary {
		if before, err = s.r.blob(old); err != nil {
			return Change{}, err
		}
	}
	if st.binary || isBinary(before) {
		c.Binary = true
		return c, nil
	}
	c.Added, c.Removed = lineDelta(string(before), string(st.text))
	return c, nil
}

// readEntry returns a small regular file's bytes (a .gitignore).
func readEntry(root *os.Root, p string) ([]byte, error) {
	f, _, err := openRegular(root, p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxIgnoreBytes+1))
}

func modeOf(info fs.FileInfo) filemode.FileMode {
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		return filemode.Symlink
	case info.Mode()&0o111 != 0:
		return filemode.Executable
	}
	return filemode.Regular
}

// BaseContent returns a file's content at the base commit; nil with no
// error for a file that did not exist there.
func (r *Repo) BaseContent(p string) ([]byte, error) { return r.ContentAt(r.base, p) }

// ContentAt returns a file's content at commit h (the base, or a tip
// FetchTip fetched); nil with no error for a file that did not exist
// there.
func (r *Repo) ContentAt(h plumbing.Hash, p string) ([]byte, error) {
	commit, err := r.repo.CommitObject(h)
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", h, err)
	}
	f, err := commit.File(p)
	if err != nil {
		if errors.Is(err, plumbing.ErrObjectNotFound) || strings.Contains(err.Error(), "file not found") {
			return nil, nil
		}
		return nil, fmt.Errorf("read %s at %s: %w", p, h, err)
	}
	s, err := f.Contents()
	return []byte(s), err
}

func (r *Repo) blob(h plumbing.Hash) ([]byte, error) {
	rd, err := r.blobReader(h)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return io.ReadAll(rd)
}

// ignoreMatcher reads every .gitignore of the work tree through root:
// regular files only, opened without blocking and read up to a bound, so a
// FIFO or a huge file named .gitignore cannot hang or exhaust the worker
// (go-git's own reader opens them blocking). Directories that an earlier
// pattern ignores are not searched, as git does.
func (r *Repo) ignoreMatcher(root *os.Root) (gitignore.Matcher, error) {
	var ps []gitignore.Pattern
	err := fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if d.Name() == ".git" && p != "." {
			return fs.SkipDir
		}
		var domain []string
		if p != "." {
			domain = strings.Split(p, "/")
			if len(domain) > DefaultMaxDepth {
				// Changes refuses such a tree; its ignore files do not matter.
				return fs.SkipDir
			}
			if gitignore.NewMatcher(ps).Match(domain, true) {
				return fs.SkipDir
			}
		}
		ps = append(ps, readIgnoreFile(root, path.Join(p, ".gitignore"), domain)...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read .gitignore files: %w", err)
	}
	return gitignore.NewMatcher(ps), nil
}

// maxIgnoreBytes bounds one .gitignore file.
const maxIgnoreBytes = 1 << 20

// readIgnoreFile parses one .gitignore; a missing, special or oversized
// one gives no patterns.
func readIgnoreFile(root *os.Root, name string, domain []string) []gitignore.Pattern {
	info, err := root.Lstat(name)
	if err != nil || !info.Mode().IsRegular() || info.Size() > maxIgnoreBytes {
		return nil
	}
	data, err := readEntry(root, name)
	if err != nil {
		return nil
	}
	var ps []gitignore.Pattern
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps
}

// isBinary is the one binary rule, git's (sandbox.IsBinary).
func isBinary(b []byte) bool { return sandbox.IsBinary(b) }

func countLines(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	n := bytes.Count(b, []byte{'\n'})
	if b[len(b)-1] != '\n' {
		n++
	}
	return n
}

// lineDelta counts lines added and removed between two texts.
func lineDelta(old, new string) (added, removed int) {
	for _, d := range diff.Do(old, new) {
		switch d.Type {
		case diffmatchpatch.DiffInsert:
			added += countLines([]byte(d.Text))
		case diffmatchpatch.DiffDelete:
			removed += countLines([]byte(d.Text))
		}
	}
	return added, removed
}

// Ignores reports whether the work tree's .gitignore files exclude the
// directory dir (slash-separated, relative to the work tree): what is
// under it is never a change, whoever wrote it.
func (r *Repo) Ignores(dir string) (bool, error) {
	root, err := os.OpenRoot(r.worktree)
	if err != nil {
		return false, fmt.Errorf("open work tree: %w", err)
	}
	defer root.Close()
	m, err := r.ignoreMatcher(root)
	if err != nil {
		return false, err
	}
	return m.Match(strings.Split(dir, "/"), true), nil
}

// sameIn reports whether pristine (nil: no pristine tree) holds p as
// root does: a regular file of the same bytes and executable bit, or a
// link to the same target. Neither tree's links are followed.
func sameIn(pristine, root *os.Root, p string) (bool, error) {
	if pristine == nil {
		return false, nil
	}
	was, err := pristine.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	is, err := root.Lstat(p)
	if err != nil {
		return false, err
	}
	switch {
	case modeOf(was) != modeOf(is):
		return false, nil
	case modeOf(is) == filemode.Symlink:
		a, errA := root.Readlink(p)
		b, errB := pristine.Readlink(p)
		return a == b, errors.Join(errA, errB)
	case !was.Mode().IsRegular() || was.Size() != is.Size():
		return false, nil
	}
	a, err := hashFile(root, p)
	if err != nil {
		return false, err
	}
	b, err := hashFile(pristine, p)
	return a == b, err
}

// absentFrom reports whether pristine (nil: none) lacks p: a tracked
// file missing from both trees was deleted before the model could act.
func absentFrom(pristine *os.Root, p string) (bool, error) {
	if pristine == nil {
		return false, nil
	}
	_, err := pristine.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return true, nil
	}
	return false, err
}

// openTracked reads the index, its entries by path, and opens the work
// tree; the caller closes the root.
func (r *Repo) openTracked() (*index.Index, map[string]*index.Entry, *os.Root, error) {
	idx, err := r.repo.Storer.Index()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("read index: %w", err)
	}
	tracked := make(map[string]*index.Entry, len(idx.Entries))
	for _, e := range idx.Entries {
		tracked[e.Name] = e
	}
	root, err := os.OpenRoot(r.worktree)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("open work tree: %w", err)
	}
	return idx, tracked, root, nil
}

// Written lists the regular files of the work tree that are not the last
// commit's: untracked ones, ignored or not, and tracked ones whose bytes
// or executable bit differ. It is what a command run on the clone (the
// first setup) wrote, for a search of those files; links, special files
// and anything inside a .git directory are left out.
func (r *Repo) Written() ([]string, error) {
	_, tracked, root, err := r.openTracked()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	var out []string
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.Name() == ".git" && p != "." && d.IsDir():
			return fs.SkipDir
		case !d.Type().IsRegular():
			return nil
		}
		e := tracked[p]
		if e == nil {
			out = append(out, p)
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if modeOf(info) != e.Mode {
			out = append(out, p)
			return nil
		}
		h, err := hashFile(root, p)
		if err == nil && h != e.Hash {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list what was written to the work tree: %w", err)
	}
	return out, nil
}
