// Package ignore answers whether a workspace path is excluded by the
// repository's .gitignore files, for the tools and the repository map.
package ignore

import (
	"bufio"
	"bytes"
	"path"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// Matcher applies the root's .gitignore and every nested one on the way
// down to a path, each scoped to its directory, deeper rules winning as in
// git. .git/info/exclude and global excludes are not read: the workspace is
// a fresh clone, and .git is off limits. A Matcher is not safe for
// concurrent use: it caches each directory's rules.
type Matcher struct {
	read  func(name string) ([]byte, error)
	byDir map[string][]gitignore.Pattern
}

// New returns a Matcher that reads .gitignore files with read. The files
// are the repository's, which untrusted code can replace by anything, so
// read must be a workspace's ReadFile or as safe: through os.Root (no
// symlink out of the tree), never blocking on a FIFO, regular files only,
// size-capped. A file read cannot return adds no rules.
func New(read func(name string) ([]byte, error)) *Matcher {
	return &Matcher{read: read, byDir: make(map[string][]gitignore.Pattern)}
}

// Ignored reports whether rel (slash-separated, relative to the root, not
// ".") is ignored.
func (m *Matcher) Ignored(rel string, isDir bool) bool {
	ps := m.patterns(path.Dir(rel))
	return len(ps) > 0 && gitignore.NewMatcher(ps).Match(strings.Split(rel, "/"), isDir)
}

// patterns returns the rules in force for entries of dir ("." is the root).
func (m *Matcher) patterns(dir string) []gitignore.Pattern {
	if ps, ok := m.byDir[dir]; ok {
		return ps
	}
	var inherited []gitignore.Pattern
	var domain []string
	if dir != "." {
		inherited = m.patterns(path.Dir(dir))
		domain = strings.Split(dir, "/")
	}
	ps := inherited
	if data, err := m.read(path.Join(dir, ".gitignore")); err == nil {
		if own := parse(data, domain); len(own) > 0 {
			ps = append(append([]gitignore.Pattern(nil), inherited...), own...)
		}
	}
	m.byDir[dir] = ps
	return ps
}

func parse(data []byte, domain []string) []gitignore.Pattern {
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
