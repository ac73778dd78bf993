package ignore

import (
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// List is a fixed list of gitignore-style patterns, all relative to the
// repository root, as `exclude:` gives them (docs/agent-yml.md). It
// implements sandbox.Excluder. Unlike a .gitignore, a "!" pattern cannot
// bring back what another excluded: exclusion is a promise that the model
// never reads the path, and a later entry (a repository's) must not undo
// an earlier one (the operator's). The zero List excludes nothing; a List
// is safe for concurrent use.
type List struct {
	ps []gitignore.Pattern
}

// NewList parses patterns; empty entries are skipped. CheckPattern says
// which ones config accepts.
func NewList(patterns []string) *List {
	l := &List{}
	for _, p := range patterns {
		if strings.TrimSpace(p) == "" {
			continue
		}
		l.ps = append(l.ps, gitignore.ParsePattern(p, nil))
	}
	return l
}

// Excluded reports whether any pattern matches rel (slash-separated,
// relative to the root) as a file or, with isDir, a directory.
func (l *List) Excluded(rel string, isDir bool) bool {
	parts := strings.Split(rel, "/")
	for _, p := range l.ps {
		if p.Match(parts, isDir) == gitignore.Exclude {
			return true
		}
	}
	return false
}

// CheckPattern says what is wrong with an exclude pattern, or "" when
// nothing is: it must not be empty, a comment or a negation.
func CheckPattern(p string) string {
	switch t := strings.TrimSpace(p); {
	case t == "":
		return "empty pattern"
	case strings.HasPrefix(t, "#"):
		return "a comment, not a pattern"
	case strings.HasPrefix(t, "!"):
		return "a negation: exclusion cannot be undone"
	}
	return ""
}
