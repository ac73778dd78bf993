package tools

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/patchwright/patchwright/agent/ignore"
	"github.com/patchwright/patchwright/sandbox"
)

// globMatcher matches paths relative to the walk's start against a
// doublestar glob. A glob without a slash matches the file name at any
// depth, which is what "*.go" means to most people.
type globMatcher struct {
	glob     string
	baseOnly bool
}

func newGlobMatcher(glob string) (*globMatcher, bool) {
	if glob == "" {
		return nil, true
	}
	if !doublestar.ValidatePattern(glob) {
		return nil, false
	}
	return &globMatcher{glob: glob, baseOnly: !strings.Contains(glob, "/")}, true
}

func (g *globMatcher) match(relToStart string) bool {
	if g == nil {
		return true
	}
	if g.baseOnly {
		relToStart = path.Base(relToStart)
	}
	ok, _ := doublestar.Match(g.glob, relToStart)
	return ok
}

// walkFiles calls fn for every file under start (a cleaned path) that
// the model may see (sandbox.Workspace.WalkVisible: no symlinks, special
// files, secret files, .git or hard links to hidden files), that
// .gitignore does not exclude and glob matches, in lexical order.
// hiddenLink, if not nil, is called instead for a hard link to a hidden
// file that would otherwise have been reported, so a search can say it
// left one out. Unreadable directories are skipped.
func walkFiles(ctx context.Context, fsys files, start string, glob *globMatcher, fn func(rel string, d fs.DirEntry) error, hiddenLink func(rel string)) error {
	ig := ignore.New(fsys.ReadFile)
	walk := strictWalk(fsys)
	if v, ok := fsys.(viewer); ok {
		walk = v.WalkVisible
	}
	return walk(start, func(p string, d fs.DirEntry, err error) error {
		var nv *sandbox.NotVisibleError
		hidden := errors.As(err, &nv)
		if err != nil && !hidden {
			if d != nil && d.IsDir() && p != start {
				return fs.SkipDir
			}
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == start && d.IsDir() {
			return nil
		}
		if p != start && ig.Ignored(p, d.IsDir()) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		relToStart := p
		if start != "." && p != start {
			relToStart = strings.TrimPrefix(p, start+"/")
		}
		if !glob.match(relToStart) {
			return nil
		}
		if hidden {
			if nv.Why == sandbox.WhyHardLink && hiddenLink != nil {
				hiddenLink(p)
			}
			return nil
		}
		return fn(p, d)
	})
}

// strictWalk is WalkVisible for a stand-in without it (a test's fake):
// its WalkDir with the fallback rule of visible applied to each entry.
func strictWalk(fsys files) func(string, fs.WalkDirFunc) error {
	return func(start string, fn fs.WalkDirFunc) error {
		return fsys.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return fn(p, d, err)
			}
			info, err := d.Info()
			if err != nil {
				return nil
			}
			return fn(p, d, strictProblem(p, info))
		})
	}
}
