package tools

import (
	"bufio"
	"bytes"
	"context"
	"io/fs"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// ignorer answers whether a path is ignored by the repository's .gitignore
// files: the root's and every nested one on the way down, each scoped to
// its directory, later (deeper) rules winning as in git.
// .git/info/exclude and the user's global excludes are not read: the
// workspace is a fresh clone, and .git is off limits to the tools.
type ignorer struct {
	fs files
	// byDir caches the patterns in force inside each directory.
	byDir map[string][]gitignore.Pattern
}

func newIgnorer(fsys files) *ignorer {
	return &ignorer{fs: fsys, byDir: make(map[string][]gitignore.Pattern)}
}

// patterns returns the rules in force for entries of dir ("." is the root).
func (ig *ignorer) patterns(dir string) []gitignore.Pattern {
	if ps, ok := ig.byDir[dir]; ok {
		return ps
	}
	var inherited []gitignore.Pattern
	var domain []string
	if dir != "." {
		inherited = ig.patterns(path.Dir(dir))
		domain = strings.Split(dir, "/")
	}
	ps := inherited
	// A missing or unreadable .gitignore simply adds no rules.
	if data, err := ig.fs.ReadFile(path.Join(dir, ".gitignore")); err == nil {
		own := parseGitignore(data, domain)
		if len(own) > 0 {
			ps = append(append([]gitignore.Pattern(nil), inherited...), own...)
		}
	}
	ig.byDir[dir] = ps
	return ps
}

func parseGitignore(data []byte, domain []string) []gitignore.Pattern {
	var ps []gitignore.Pattern
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps
}

// ignored reports whether rel (slash-separated, not ".") is ignored.
func (ig *ignorer) ignored(rel string, isDir bool) bool {
	ps := ig.patterns(path.Dir(rel))
	if len(ps) == 0 {
		return false
	}
	return gitignore.NewMatcher(ps).Match(strings.Split(rel, "/"), isDir)
}

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
	ig := newIgnorer(fsys)
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
		if p != start && ig.ignored(p, d.IsDir()) {
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
