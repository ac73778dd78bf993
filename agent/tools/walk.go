package tools

import (
	"context"
	"io/fs"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/patchwright/patchwright/agent/ignore"
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
// .gitignore does not exclude and glob matches, in lexical order. Symlinks
// are reported as files and never followed; secret files and .git never
// reach fn (the workspace skips them). Unreadable directories are skipped.
func walkFiles(ctx context.Context, fsys files, start string, glob *globMatcher, fn func(rel string, d fs.DirEntry) error) error {
	ig := ignore.New(fsys.ReadFile)
	return fsys.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
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
		return fn(p, d)
	})
}
