package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"

	"github.com/patchwright/patchwright/internal/text"
	"github.com/patchwright/patchwright/sandbox"
)

// SearchParams are the parameters of search.
type SearchParams struct {
	Pattern string `json:"pattern" jsonschema_description:"RE2 regular expression, matched line by line; (?i) makes it case-insensitive."`
	Path    string `json:"path,omitempty" jsonschema_description:"Directory or file to search, relative to the repository root. Default: the whole repository."`
	Glob    string `json:"glob,omitempty" jsonschema_description:"Doublestar glob on paths relative to path, for example **/*.go. Without a slash it matches file names at any depth."`
}

// fileMatches is what one file contributed to a search.
type fileMatches struct {
	path  string    // results are sorted by it, in walk order
	lines []lineHit // at most the result cap; formatted only if shown
	count int       // matching lines in all, shown or not
}

// lineHit is one matching line as shown: its number and its text, cut.
// Most hits of a broad search are never shown, so they are formatted only
// when rendered.
type lineHit struct {
	line int
	text string
}

// searchStats counts files a search passed over, for the closing note.
type searchStats struct {
	binary, large, linked int
}

func (s *Set) search(ctx context.Context, p SearchParams) (Result, error) {
	if p.Pattern == "" {
		return fail(InvalidArguments, "pattern is empty", "give an RE2 regular expression, for example func \\w+Handler"), nil
	}
	m, err := newLineMatcher(p.Pattern)
	if err != nil {
		return fail(InvalidArguments, fmt.Sprintf("pattern is not a valid RE2 expression: %v", err),
			"fix the expression; RE2 has no lookaround or backreferences, and literal ( [ . need a backslash"), nil
	}
	start, res, ok := s.clean(p.Path)
	if !ok {
		return res, nil
	}
	glob, ok := newGlobMatcher(p.Glob)
	if !ok {
		return fail(InvalidArguments, fmt.Sprintf("glob %q is not a valid glob", p.Glob),
			"use a doublestar glob such as **/*.go"), nil
	}
	if res, err := s.checkStart(start); err != nil || res.Code != "" {
		return res, err
	}
	found, stats, err := s.searchTree(ctx, m, start, glob)
	if err != nil {
		return Result{}, fmt.Errorf("search %s for %q: %w", start, p.Pattern, err)
	}
	return Result{Text: s.renderSearch(found, stats)}, nil
}

// maxBatch is the most files of one directory a task searches: a large
// directory is shared among the workers.
const maxBatch = 64

// countMatching counts the hard links to hidden files the walk left out
// that the search would have matched, for the closing note; their lines
// are never shown. They are rare (a command made them), so they are read
// one by one.
func (s *Set) countMatching(m *lineMatcher, linked []string) int {
	n := 0
	for _, rel := range linked {
		fm, _, err := s.searchFile(m, rel, func() ([]byte, error) { return s.fs.ReadFile(rel) })
		if err == nil && fm.count > 0 {
			n++
		}
	}
	return n
}

// cmpErr keeps the first error.
func cmpErr(first, next error) error {
	if first != nil {
		return first
	}
	return next
}

type skipReason int

const (
	notSkipped skipReason = iota
	skipBinary
	skipLarge
)

// searchFile reports the lines of rel that re matches. Files that vanish
// or turn out to be special between the walk and the read are skipped
// quietly: a search is a snapshot, not a transaction.
func (s *Set) searchFile(m *lineMatcher, rel string, read func() ([]byte, error)) (fileMatches, skipReason, error) {
	data, err := read()
	switch {
	case errors.Is(err, sandbox.ErrTooLarge):
		return fileMatches{}, skipLarge, nil
	case err != nil:
		if _, ok := fileFailure(rel, err); ok {
			return fileMatches{}, notSkipped, nil
		}
		return fileMatches{}, notSkipped, fmt.Errorf("read %s: %w", rel, err)
	case int64(len(data)) > s.limits.MaxSearchFileBytes:
		return fileMatches{}, skipLarge, nil
	case sandbox.IsBinary(data):
		return fileMatches{}, skipBinary, nil
	}
	fm := fileMatches{path: rel}
	m.matchLines(data, func(lm lineMatch) {
		fm.count++
		if len(fm.lines) < s.limits.MaxSearchResults {
			text := cutLine(bytes.TrimSuffix(lm.text, []byte("\r")), s.limits.MaxLineLength)
			fm.lines = append(fm.lines, lineHit{lm.line, text})
		}
	})
	return fm, notSkipped, nil
}

// cutLine shortens a long line at a rune boundary and marks the cut.
func cutLine(b []byte, limit int) string {
	if len(b) <= limit {
		return string(b)
	}
	head := text.Head(string(b), limit)
	return fmt.Sprintf("%s… [%d more bytes]", head, len(b)-len(head))
}

func (s *Set) renderSearch(found []fileMatches, stats searchStats) string {
	var b strings.Builder
	shown, total := 0, 0
	for _, fm := range found {
		total += fm.count
		for _, l := range fm.lines {
			if shown == s.limits.MaxSearchResults {
				break
			}
			fmt.Fprintf(&b, "%s:%d: %s\n", fm.path, l.line, l.text)
			shown++
		}
	}
	if total == 0 {
		b.WriteString("no matches\n")
	} else if total > shown {
		fmt.Fprintf(&b, "[%d more matching lines omitted (%d matches in %d files in all); narrow the search with path, glob or a more specific pattern]\n", total-shown, total, len(found))
	}
	if stats.binary+stats.large > 0 {
		fmt.Fprintf(&b, "[skipped %d binary and %d large files]\n", stats.binary, stats.large)
	}
	if stats.linked > 0 {
		fmt.Fprintf(&b, "[left out %d matching files that are hard links to secret-bearing files, which are never shown]\n", stats.linked)
	}
	return b.String()
}

// searchWorkers is the size of the search pool. Reading a file is mostly
// system calls, so a few more workers than CPUs keep the CPUs busy.
func searchWorkers() int { return 4 * runtime.GOMAXPROCS(0) }
