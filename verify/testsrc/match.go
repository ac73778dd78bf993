package testsrc

import (
	"regexp"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// Located is a test and the file it is in.
type Located struct {
	Path string
	Test Test
}

// Pair is one test before the change and the same test after it, as a
// reviewer would pair them: under a new name or in another file, it is
// still the test it was.
type Pair struct{ Base, Next Located }

// Renamed reports whether the pair's test changed its name.
func (p Pair) Renamed() bool { return p.Base.Test.Short != p.Next.Test.Short }

// Moved reports whether the pair's test changed its file.
func (p Pair) Moved() bool { return p.Base.Path != p.Next.Path }

// SameBody reports whether the test's source is unchanged but for its
// name and layout.
func (p Pair) SameBody() bool { return bodyOf(p.Base) == bodyOf(p.Next) }

// Match pairs each test before the change with itself after it: in the
// same file by name, then anywhere by identical source (moved), then by
// identical source but for its name (renamed), then anywhere by name
// (moved and edited), then in the same file by mostly equal lines
// (renamed and edited: 80% of tokens alike, or 60% when the new name
// extends the old one). What is left over was removed or added. Both the
// findings and the run of new tests on the original code read renames
// from here, so they agree on what a test was.
func Match(base, next []Located) (pairs []Pair, removed, added []Located) {
	bs, ns := keysOf(base), keysOf(next)
	usedB, usedN := make([]bool, len(base)), make([]bool, len(next))
	pass := func(same func(i, j int) bool) {
		for i := range base {
			for j := range next {
				if !usedB[i] && !usedN[j] && same(i, j) {
					usedB[i], usedN[j] = true, true
					pairs = append(pairs, Pair{base[i], next[j]})
				}
			}
		}
	}
	pass(func(i, j int) bool { return base[i].Path == next[j].Path && base[i].Test.Name == next[j].Test.Name })
	pass(func(i, j int) bool { return bs[i].squashed == ns[j].squashed })
	pass(func(i, j int) bool { return bs[i].body == ns[j].body })
	pass(func(i, j int) bool { return base[i].Test.Name == next[j].Test.Name })
	pass(func(i, j int) bool {
		b, n := base[i], next[j]
		if b.Path != n.Path {
			return false
		}
		// Compared token by token, the name left out, as a reviewer
		// reads a renamed test whose expectation was fixed: one changed
		// literal is not a different test. A name that grew (TestX to
		// TestXAndY) needs less of the body.
		alike := similarity(tokens(withoutName(b)), tokens(withoutName(n)))
		if strings.HasPrefix(n.Test.Short, b.Test.Short) {
			return alike >= 0.6
		}
		return alike >= 0.8
	})
	for i, b := range base {
		if !usedB[i] {
			removed = append(removed, b)
		}
	}
	for j, n := range next {
		if !usedN[j] {
			added = append(added, n)
		}
	}
	return pairs, removed, added
}

// matchKey is a test's source squashed once for matching, with and
// without its name.
type matchKey struct{ squashed, body string }

func keysOf(ls []Located) []matchKey {
	out := make([]matchKey, len(ls))
	for i, l := range ls {
		out[i] = matchKey{squashed: oneLine(l.Test.Text), body: bodyOf(l)}
	}
	return out
}

func bodyOf(l Located) string { return oneLine(withoutName(l)) }

// tokenRE splits source into words, numbers, string literals and single
// punctuation marks.
var tokenRE = regexp.MustCompile(`"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|\w+|[^\s\w]`)

// tokens puts each of src's tokens on a line of its own, for similarity.
func tokens(src string) string {
	return strings.Join(tokenRE.FindAllString(src, -1), "\n") + "\n"
}

func withoutName(l Located) string { return strings.Replace(l.Test.Text, l.Test.Short, "", 1) }

// similarity is the share of two tests' lines that are alike, from 0 to
// 1, layout aside.
func similarity(a, b string) float64 {
	same, total := 0, 0
	for _, d := range lineDiff(Lines(a), Lines(b)) {
		n := strings.Count(d.Text, "\n")
		total += n
		if d.Type == diffmatchpatch.DiffEqual {
			same += n
			total += n // a kept line is on both sides
		}
	}
	if total == 0 {
		return 0
	}
	return float64(2*same) / float64(total)
}

func lineDiff(a, b string) []diffmatchpatch.Diff {
	dmp := diffmatchpatch.New()
	ra, rb, lines := dmp.DiffLinesToRunes(a, b)
	return dmp.DiffCharsToLines(dmp.DiffMainRunes(ra, rb, false), lines)
}

// Lines normalizes a test's source for a line diff: whitespace inside
// lines and a trailing comma do not count, so appending an element to a
// list or table is an addition, not an edit of the line before it.
func Lines(s string) string {
	var b strings.Builder
	for l := range strings.Lines(s) {
		b.WriteString(strings.TrimSuffix(oneLine(l), ","))
		b.WriteByte('\n')
	}
	return b.String()
}

// stringRE matches a string literal of the C family, Python and Go (raw
// strings too).
var stringRE = regexp.MustCompile("\"(?:[^\"\\\\\\n]|\\\\.)*\"|'(?:[^'\\\\\\n]|\\\\.)*'|`[^`]*`")

// LiteralsOnly reports whether a pair's test changed only inside string
// literals (a message, its name in a message) besides its own name.
func LiteralsOnly(p Pair) bool {
	blank := func(l Located) string { return oneLine(stringRE.ReplaceAllString(withoutName(l), `""`)) }
	return !p.SameBody() && blank(p.Base) == blank(p.Next)
}
