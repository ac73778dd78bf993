package tools

import (
	"cmp"
	"context"
	"errors"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/patchwright/patchwright/agent/ignore"
	"github.com/patchwright/patchwright/sandbox"
)

// treeSearch is one search of a directory tree by a pool of workers that
// share a stack of tasks: listing a directory, or searching a run of its
// files. The walk is parallel too: on a large tree listing directories
// and checking each entry cost as much as reading the files, and a single
// walker left the workers waiting. Results carry their path and are put in
// walk order at the end, so the answer does not depend on scheduling.
type treeSearch struct {
	s     *Set
	ctx   context.Context
	m     *lineMatcher
	glob  *globMatcher
	start string

	igMu sync.Mutex // ignore.Matcher caches rules and is not safe for concurrent use
	ig   *ignore.Matcher

	mu     sync.Mutex
	more   *sync.Cond // signalled when a task is pushed or the last one ends
	stack  []func()
	active int // tasks taken and not yet finished

	resMu  sync.Mutex
	found  []fileMatches
	stats  searchStats
	linked []string
	err    error
}

func (s *Set) searchTree(ctx context.Context, m *lineMatcher, start string, glob *globMatcher) ([]fileMatches, searchStats, error) {
	t := &treeSearch{s: s, ctx: ctx, m: m, glob: glob, start: start, ig: ignore.New(s.fs.ReadFile)}
	t.more = sync.NewCond(&t.mu)
	info, err := s.fs.Stat(start)
	if err != nil {
		return nil, searchStats{}, err
	}
	if info.IsDir() {
		if h, ok := s.fs.(handles); ok {
			if dh, err := h.OpenDirHandle(start); err == nil {
				t.push(func() { t.listHandle(dh) })
			}
		}
		if len(t.stack) == 0 {
			t.push(func() { t.listDir(start) })
		}
		var wg sync.WaitGroup
		for range searchWorkers() {
			wg.Go(t.work)
		}
		wg.Wait()
	} else if info.Mode().IsRegular() && glob.match(start) {
		t.searchFiles(start, []string{""}, func(string) ([]byte, error) { return s.fs.ReadFile(start) })
	}
	if err := ctx.Err(); err != nil {
		// Tasks are dropped once ctx ends: what was found is not the
		// whole answer.
		return nil, t.stats, err
	}
	if t.err != nil {
		return nil, t.stats, t.err
	}
	t.stats.linked = s.countMatching(m, t.linked)
	slices.SortFunc(t.found, func(a, b fileMatches) int { return walkOrder(a.path, b.path) })
	return t.found, t.stats, nil
}

// walkOrder compares paths in the order of a lexical depth-first walk
// (fs.WalkDir's): component by component, so "a/x" comes before "a-b/x"
// because the directory "a" sorts before "a-b".
func walkOrder(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			switch {
			case a[i] == '/':
				return -1
			case b[i] == '/':
				return 1
			}
			return cmp.Compare(a[i], b[i])
		}
	}
	return cmp.Compare(len(a), len(b))
}

// work runs tasks until none is left and none is running (a running task
// may push more).
func (t *treeSearch) work() {
	for {
		t.mu.Lock()
		for len(t.stack) == 0 && t.active > 0 {
			t.more.Wait()
		}
		if len(t.stack) == 0 {
			t.mu.Unlock()
			return
		}
		task := t.stack[len(t.stack)-1]
		t.stack = t.stack[:len(t.stack)-1]
		t.active++
		t.mu.Unlock()

		// Every task runs, even once ctx has ended: each checks ctx
		// itself, and must still release the directory handles it holds.
		task()

		t.mu.Lock()
		t.active--
		if t.active == 0 && len(t.stack) == 0 {
			t.more.Broadcast()
		}
		t.mu.Unlock()
	}
}

// push adds tasks; the last pushed runs first, so a directory's files are
// searched (and its handle closed) before the walk goes much deeper.
func (t *treeSearch) push(tasks ...func()) {
	t.mu.Lock()
	t.stack = append(t.stack, tasks...)
	t.mu.Unlock()
	for range tasks {
		t.more.Signal()
	}
}

// listDir lists one directory and pushes a task for each subdirectory and
// for each run of up to maxBatch of its files. Unreadable directories are
// skipped, as a walk skips them.
func (t *treeSearch) listDir(dir string) {
	if t.ctx.Err() != nil {
		return
	}
	v, err := t.s.openDir(dir)
	if err != nil {
		return
	}
	var dirs, names []string
	err = v.list(func(name string, d fs.DirEntry, err error) {
		p := path.Join(dir, name)
		var nv *sandbox.NotVisibleError
		hidden := errors.As(err, &nv)
		if (err != nil && !hidden) || t.ignored(p, d.IsDir()) {
			return
		}
		switch {
		case d.IsDir():
			dirs = append(dirs, p)
		case !t.glob.match(t.relToStart(p)):
		case hidden:
			if nv.Why == sandbox.WhyHardLink {
				t.resMu.Lock()
				t.linked = append(t.linked, p)
				t.resMu.Unlock()
			}
		case d.Type().IsRegular():
			names = append(names, name)
		}
	})
	if err != nil {
		t.fail(err)
	}
	var tasks []func()
	for _, sub := range slices.Backward(dirs) {
		tasks = append(tasks, func() { t.listDir(sub) })
	}
	batches := slices.Collect(slices.Chunk(names, maxBatch))
	v.refs.Store(int32(len(batches)))
	if len(batches) == 0 {
		v.close()
	}
	prefix := ""
	if dir != "." {
		prefix = dir + "/"
	}
	for _, b := range batches {
		tasks = append(tasks, func() {
			t.searchFiles(prefix, b, v.read)
			if v.refs.Add(-1) == 0 {
				v.close()
			}
		})
	}
	t.push(tasks...)
}

// searchFiles searches prefix+name for each name, reading it with read.
func (t *treeSearch) searchFiles(prefix string, names []string, read func(string) ([]byte, error)) {
	for _, name := range names {
		if t.ctx.Err() != nil {
			return
		}
		fm, skipped, err := t.s.searchFile(t.m, prefix+name, func() ([]byte, error) { return read(name) })
		t.resMu.Lock()
		switch {
		case err != nil:
			t.err = cmpErr(t.err, err)
		case skipped == skipBinary:
			t.stats.binary++
		case skipped == skipLarge:
			t.stats.large++
		case fm.count > 0:
			t.found = append(t.found, fm)
		}
		t.resMu.Unlock()
	}
}

func (t *treeSearch) fail(err error) {
	t.resMu.Lock()
	t.err = cmpErr(t.err, err)
	t.resMu.Unlock()
}

func (t *treeSearch) ignored(p string, isDir bool) bool {
	t.igMu.Lock()
	defer t.igMu.Unlock()
	return t.ig.Ignored(p, isDir)
}

// relToStart is p relative to the search's start, which globs match.
func (t *treeSearch) relToStart(p string) string {
	if t.start == "." {
		return p
	}
	return strings.TrimPrefix(p, t.start+"/")
}

// dirView is one directory, opened for listing and reading its files.
// Through a sandbox.Workspace it is a handle of its own (os.Root), so a
// file is resolved from its directory, not from the top, and a planted
// symlink is still never followed.
type dirView struct {
	// list calls fn for each entry with the visibility verdict
	// WalkVisible gives it; it returns only errors that end the search.
	list  func(fn func(name string, d fs.DirEntry, err error)) error
	read  func(name string) ([]byte, error)
	close func()
	refs  atomic.Int32 // tasks still reading through the view
}

// subdirs is what sandbox.Workspace offers for reading a directory
// through its own handle; test fakes of files need not have it.
type subdirs interface {
	OpenDir(name string) (*sandbox.Workspace, error)
}

func (s *Set) openDir(dir string) (*dirView, error) {
	if o, ok := s.fs.(subdirs); ok {
		sub, err := o.OpenDir(dir)
		if err != nil {
			return nil, err
		}
		return &dirView{
			list:  func(fn func(string, fs.DirEntry, error)) error { return sub.WalkVisible(".", oneLevel(".", fn)) },
			read:  sub.ReadFile,
			close: func() { sub.Close() },
		}, nil
	}
	walk := strictWalk(s.fs)
	if v, ok := s.fs.(viewer); ok {
		walk = v.WalkVisible
	}
	return &dirView{
		list:  func(fn func(string, fs.DirEntry, error)) error { return walk(dir, oneLevel(dir, fn)) },
		read:  func(name string) ([]byte, error) { return s.fs.ReadFile(path.Join(dir, name)) },
		close: func() {},
	}, nil
}

// oneLevel turns fn into a WalkDirFunc for the entries of dir alone.
func oneLevel(dir string, fn func(name string, d fs.DirEntry, err error)) fs.WalkDirFunc {
	return func(p string, d fs.DirEntry, err error) error {
		if p == dir {
			return nil // the directory itself, or its read error: nothing to list
		}
		fn(path.Base(p), d, err)
		if d.IsDir() {
			return fs.SkipDir
		}
		return nil
	}
}

// handles is the fast directory reader sandbox.Workspace offers on Linux
// (sandbox.DirHandle): a listing without a stat per entry and reads
// without os.File. Test fakes of files need not have it.
type handles interface {
	OpenDirHandle(name string) (*sandbox.DirHandle, error)
}

// readBufs are the buffers files are read into. A file's bytes are not
// kept after its search (shown lines are copied), so a batch reads all
// its files into one buffer, and batches share them.
var readBufs = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// maxPooledBuf is the largest buffer kept for reuse: a rare large file
// should not pin its size in the pool.
const maxPooledBuf = 1 << 20

// listHandle is listDir through a sandbox.DirHandle: it lists h and
// pushes a task for each subdirectory (opened from h, so no path is
// resolved from the top again) and for each run of up to maxBatch files.
// h is closed when the last of those tasks is done with it.
func (t *treeSearch) listHandle(h *sandbox.DirHandle) {
	if t.ctx.Err() != nil {
		h.Close()
		return
	}
	dir := h.Path()
	prefix := ""
	if dir != "." {
		prefix = dir + "/"
	}
	dirs, names := t.listEntries(h, prefix)
	batches := slices.Collect(slices.Chunk(names, maxBatch))
	refs := new(atomic.Int32)
	refs.Store(int32(len(batches) + len(dirs)))
	if refs.Load() == 0 {
		h.Close()
		return
	}
	release := func() {
		if refs.Add(-1) == 0 {
			h.Close()
		}
	}
	var tasks []func()
	for _, name := range slices.Backward(dirs) {
		tasks = append(tasks, func() {
			sub, err := h.Sub(name)
			release()
			if err == nil {
				t.listHandle(sub)
			}
		})
	}
	for _, b := range batches {
		tasks = append(tasks, func() {
			defer release()
			t.searchBatch(h, prefix, b)
		})
	}
	t.push(tasks...)
}

// listEntries lists h: the subdirectories and the files to search, each
// by name, leaving out what is ignored, not visible or not a regular file.
func (t *treeSearch) listEntries(h *sandbox.DirHandle, prefix string) (dirs, names []string) {
	// A listing error (the directory went away) leaves what was listed:
	// unreadable directories are skipped, as a walk skips them.
	_ = h.List(func(e sandbox.Entry, notVisible error) {
		p := prefix + e.Name()
		// Symlinks and special files are left out; hard links to
		// hidden files are found when read.
		if notVisible != nil || t.ignored(p, e.IsDir()) {
			return
		}
		switch {
		case e.IsDir():
			dirs = append(dirs, e.Name())
		case e.Type().IsRegular() && t.glob.match(t.relToStart(p)):
			names = append(names, e.Name())
		}
	})
	return dirs, names
}

// searchBatch searches the files b of h, read from h into a pooled buffer.
// A file hidden because it is a hard link is recorded in t.linked.
func (t *treeSearch) searchBatch(h *sandbox.DirHandle, prefix string, b []string) {
	bp := readBufs.Get().(*[]byte)
	defer readBufs.Put(bp)
	t.searchFiles(prefix, b, func(name string) ([]byte, error) {
		data, err := h.ReadFile(name, (*bp)[:0], t.s.limits.MaxSearchFileBytes)
		if c := cap(data); c > cap(*bp) && c <= maxPooledBuf {
			*bp = data[:0]
		}
		var nv *sandbox.NotVisibleError
		if errors.As(err, &nv) && nv.Why == sandbox.WhyHardLink {
			t.resMu.Lock()
			t.linked = append(t.linked, prefix+name)
			t.resMu.Unlock()
		}
		return data, err
	})
}
