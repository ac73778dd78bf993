package tools

import (
	"bytes"
	"regexp"
	"regexp/syntax"
	"slices"
)

// lineMatcher finds the lines of a file that a search pattern matches.
//
// Go's regexp has no fast scan for a pattern without a literal prefix
// (\w+Handler\( tries a match at every byte). Most patterns contain a
// literal every match must include, though, and most files do not contain
// it: bytes.Index rules those files out at memory speed, and only lines
// holding the literal are given to the regexp. Measured on 10,000 files
// this made search several times faster (see search_bench_test.go).
type lineMatcher struct {
	re *regexp.Regexp
	// lit is a substring of every match; nil when none is known.
	lit []byte
	// lineLocal is true when no match can contain a newline or depend on
	// the start or end of the whole text, so one line can be matched on
	// its own.
	lineLocal bool
	// litOnly is true when the pattern is lit and nothing else: a line
	// holding it matches, and the regexp need not run.
	litOnly bool
	// perLine is true for patterns with \A or \z, which only mean what
	// grep users expect when every line is matched on its own.
	perLine bool
}

// newLineMatcher compiles an RE2 pattern with (?m), so ^ and $ match at
// line boundaries as in grep.
func newLineMatcher(pattern string) (*lineMatcher, error) {
	full := "(?m)" + pattern
	re, err := regexp.Compile(full)
	if err != nil {
		return nil, err
	}
	m := &lineMatcher{re: re}
	if tree, err := syntax.Parse(full, syntax.Perl); err == nil {
		tree = tree.Simplify()
		if lit := requiredLiteral(tree); lit != "" {
			m.lit = []byte(lit)
		}
		m.lineLocal = !spansLines(tree)
		m.litOnly = m.lit != nil && m.lineLocal && tree.Op == syntax.OpLiteral && tree.Flags&syntax.FoldCase == 0
		m.perLine = hasTextAnchor(tree)
	}
	return m, nil
}

// requiredLiteral returns a case-sensitive literal that every match of re
// contains, the longest it can find cheaply, or "".
func requiredLiteral(re *syntax.Regexp) string {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase == 0 {
			return string(re.Rune)
		}
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiteral(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiteral(re.Sub[0])
		}
	case syntax.OpConcat:
		best := ""
		for _, sub := range re.Sub {
			if l := requiredLiteral(sub); len(l) > len(best) {
				best = l
			}
		}
		return best
	}
	return ""
}

// spansLines reports whether re could match a newline or asserts the
// start or end of the whole text (\A, \z), either of which makes matching
// a line on its own differ from matching it inside the file.
func spansLines(re *syntax.Regexp) bool {
	if re.Op == syntax.OpAnyChar || hasTextAnchor(re) {
		return true
	}
	switch re.Op {
	case syntax.OpLiteral:
		return slices.Contains(re.Rune, '\n')
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if re.Rune[i] <= '\n' && '\n' <= re.Rune[i+1] {
				return true
			}
		}
		return false
	}
	return slices.ContainsFunc(re.Sub, spansLines)
}

// hasTextAnchor reports whether re uses \A or \z. Like grep, search treats
// every line as a text of its own, so these anchor at each line.
func hasTextAnchor(re *syntax.Regexp) bool {
	if re.Op == syntax.OpBeginText || re.Op == syntax.OpEndText {
		return true
	}
	return slices.ContainsFunc(re.Sub, hasTextAnchor)
}

// lineMatch is one matching line: its number and its bytes without "\n".
type lineMatch struct {
	line int
	text []byte
}

// matchLines calls emit for each line of data that the pattern matches,
// once per line, in order: the lines a line-by-line grep reports.
func (m *lineMatcher) matchLines(data []byte, emit func(lineMatch)) {
	switch {
	case m.lit != nil && !bytes.Contains(data, m.lit):
	case m.perLine:
		m.matchEachLine(data, emit)
	case m.lit != nil && m.lineLocal:
		m.matchCandidateLines(data, emit)
	default:
		m.matchWhole(data, emit)
	}
}

// matchCandidateLines runs the regexp only on lines holding the literal.
func (m *lineMatcher) matchCandidateLines(data []byte, emit func(lineMatch)) {
	c := lineCounter{data: data}
	for pos := 0; pos < len(data); {
		i := bytes.Index(data[pos:], m.lit)
		if i < 0 {
			return
		}
		start, end := lineAround(data, pos+i)
		if m.litOnly || m.re.Match(data[start:end]) {
			emit(c.at(start, end))
		}
		pos = end + 1
	}
}

// matchEachLine matches every line on its own.
func (m *lineMatcher) matchEachLine(data []byte, emit func(lineMatch)) {
	c := lineCounter{data: data}
	for start := 0; start < len(data); {
		_, end := lineAround(data, start)
		if m.re.Match(data[start:end]) {
			emit(c.at(start, end))
		}
		start = end + 1
	}
}

// matchWhole runs the regexp over the rest of the file from a line start,
// so (?m)^ keeps its meaning. A match that runs past the end of its first
// line is not what grep would report; that line is then matched alone.
// (No earlier line can match alone: its match would have come first.)
func (m *lineMatcher) matchWhole(data []byte, emit func(lineMatch)) {
	c := lineCounter{data: data}
	for pos := 0; pos < len(data); {
		loc := m.re.FindIndex(data[pos:])
		if loc == nil {
			return
		}
		start, end := lineAround(data, pos+loc[0])
		if pos+loc[1] <= end || m.re.Match(data[start:end]) {
			emit(c.at(start, end))
		}
		pos = end + 1
	}
}

// lineCounter numbers lines, counting newlines only between the lines it
// is asked about, so that a file is scanned about once.
type lineCounter struct {
	data          []byte
	line, counted int
}

func (c *lineCounter) at(start, end int) lineMatch {
	if c.line == 0 {
		c.line = 1
	}
	c.line += bytes.Count(c.data[c.counted:start], []byte("\n"))
	c.counted = start
	return lineMatch{line: c.line, text: c.data[start:end]}
}

// lineAround returns the bounds of the line holding data[at], without its
// "\n".
func lineAround(data []byte, at int) (start, end int) {
	start = bytes.LastIndexByte(data[:at], '\n') + 1
	end = len(data)
	if i := bytes.IndexByte(data[at:], '\n'); i >= 0 {
		end = at + i
	}
	return start, end
}
