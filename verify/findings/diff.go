package findings

import (
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/patchwright/patchwright/sandbox"
)

// lineOp is one line of a line diff: '=' kept, '-' removed, '+' added.
// OldLine and NewLine are 1-based positions in each side; for a removed
// line NewLine is where it would have been.
type lineOp struct {
	Op               byte
	Text             string
	OldLine, NewLine int
}

// lineDiff diffs two texts line by line.
func lineDiff(a, b string) []lineOp {
	dmp := diffmatchpatch.New()
	ra, rb, lines := dmp.DiffLinesToRunes(a, b)
	diffs := dmp.DiffCharsToLines(dmp.DiffMainRunes(ra, rb, false), lines)
	var out []lineOp
	oldLine, newLine := 1, 1
	for _, d := range diffs {
		for l := range strings.Lines(d.Text) {
			op := lineOp{Text: strings.TrimSuffix(l, "\n"), OldLine: oldLine, NewLine: newLine}
			switch d.Type {
			case diffmatchpatch.DiffEqual:
				op.Op = '='
				oldLine++
				newLine++
			case diffmatchpatch.DiffDelete:
				op.Op = '-'
				oldLine++
			case diffmatchpatch.DiffInsert:
				op.Op = '+'
				newLine++
			}
			out = append(out, op)
		}
	}
	return out
}

// changedLines counts added plus removed lines, as git's numstat does;
// like numstat it counts no lines in a binary file, nor here in one that
// was not read.
func changedLines(f File) int {
	if f.Unread || isBinary(f.Base) || isBinary(f.New) {
		return 0
	}
	n := 0
	for _, op := range lineDiff(string(f.Base), string(f.New)) {
		if op.Op != '=' {
			n++
		}
	}
	return n
}

// firstChange returns the first line of the new file that differs from
// the base, or 1 for an added file and 0 for a deleted one.
func firstChange(f File) int {
	switch {
	case f.New == nil:
		return 0 // deleted, or not read
	case f.Base == nil:
		return 1
	}
	for _, op := range lineDiff(string(f.Base), string(f.New)) {
		if op.Op != '=' {
			return op.NewLine
		}
	}
	return 0
}

// isBinary is the one binary rule, git's (sandbox.IsBinary).
func isBinary(b []byte) bool { return sandbox.IsBinary(b) }
