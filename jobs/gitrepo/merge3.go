package gitrepo

import (
	"bytes"
	"strings"

	"github.com/go-git/go-git/v5/utils/diff"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// A pull request whose base moved under it with a conflict is merged
// here, not by git (the worker has no git binary): a line-level
// three-way merge in diff3's way. Both sides are matched line by line
// against the merge base; where all three agree the text is stable, and
// between stable runs each side either kept the base (the other side's
// text wins), made the same change (taken once), or changed it
// differently: a conflict, written with git's markers and the base's
// lines between them (git's merge.conflictStyle=diff3), so the model
// sees what each side meant.

// Conflict markers, as git writes them. MarkerLine tells a line that
// starts with one.
const (
	markerOurs   = "<<<<<<<"
	markerBase   = "|||||||"
	markerSplit  = "======="
	markerTheirs = ">>>>>>>"
)

// Labels name the three sides after their markers.
type Labels struct{ Ours, Base, Theirs string }

// Merge3 merges ours and theirs, each a change of base, line by line,
// and returns the merged text and how many conflicts it holds (0: a
// clean merge).
func Merge3(base, ours, theirs []byte, l Labels) ([]byte, int) {
	b, o, t := splitLines(base), splitLines(ours), splitLines(theirs)
	mo, mt := matchLines(base, ours, len(b)), matchLines(base, theirs, len(b))
	var out bytes.Buffer
	conflicts := 0
	i, x, y := 0, 0, 0
	for {
		// A stable run: the base's next lines are the next lines of both.
		k := 0
		for i+k < len(b) && mo[i+k] == x+k && mt[i+k] == y+k {
			k++
		}
		if k > 0 {
			writeLines(&out, b[i:i+k])
			i, x, y = i+k, x+k, y+k
			continue
		}
		// The next base line both sides kept ends the unstable chunk.
		j := i
		for j < len(b) && (mo[j] < 0 || mt[j] < 0) {
			j++
		}
		xe, ye := len(o), len(t)
		if j < len(b) {
			xe, ye = mo[j], mt[j]
		}
		if i == j && x == xe && y == ye {
			return out.Bytes(), conflicts
		}
		if resolveChunk(&out, b[i:j], o[x:xe], t[y:ye], l) {
			conflicts++
		}
		i, x, y = j, xe, ye
	}
}

// resolveChunk writes one unstable chunk: the side that changed it, or
// both between markers. It reports a conflict.
func resolveChunk(out *bytes.Buffer, b, o, t []string, l Labels) bool {
	switch {
	case equalLines(o, b):
		writeLines(out, t)
	case equalLines(t, b), equalLines(o, t):
		writeLines(out, o)
	default:
		marker(out, markerOurs, l.Ours)
		writeLines(out, o)
		marker(out, markerBase, l.Base)
		writeLines(out, b)
		marker(out, markerSplit, "")
		writeLines(out, t)
		marker(out, markerTheirs, l.Theirs)
		return true
	}
	return false
}

// matchLines maps each of base's n lines to the line of side it is kept
// as, or -1 where side changed or removed it. The map increases: a
// longest common subsequence.
func matchLines(base, side []byte, n int) []int {
	m := make([]int, n)
	for k := range m {
		m[k] = -1
	}
	i, j := 0, 0
	for _, d := range diff.Do(string(base), string(side)) {
		lines := len(splitLines([]byte(d.Text)))
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			for k := 0; k < lines && i+k < n; k++ {
				m[i+k] = j + k
			}
			i, j = i+lines, j+lines
		case diffmatchpatch.DiffDelete:
			i += lines
		case diffmatchpatch.DiffInsert:
			j += lines
		}
	}
	return m
}

// splitLines cuts b after each newline; a last line without one is kept
// as it is.
func splitLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	lines := strings.SplitAfter(string(b), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func equalLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if a[k] != b[k] {
			return false
		}
	}
	return true
}

// writeLines writes lines; a last line without a newline gets none.
func writeLines(out *bytes.Buffer, lines []string) {
	for _, s := range lines {
		out.WriteString(s)
	}
}

// marker writes a marker line, after a newline when the text so far
// ends without one (a conflict in a last line that has none).
func marker(out *bytes.Buffer, m, label string) {
	if b := out.Bytes(); len(b) > 0 && b[len(b)-1] != '\n' {
		out.WriteByte('\n')
	}
	out.WriteString(m)
	if label != "" {
		out.WriteString(" " + label)
	}
	out.WriteByte('\n')
}

// HasMarkers reports whether text holds a line that starts with a
// conflict marker git writes around a side (<<<<<<<, |||||||, >>>>>>>).
// A line of ======= alone is a heading's underline too often to count.
func HasMarkers(text []byte) bool {
	for _, line := range bytes.Split(text, []byte("\n")) {
		for _, m := range []string{markerOurs, markerBase, markerTheirs} {
			if bytes.HasPrefix(line, []byte(m)) && (len(line) == len(m) || line[len(m)] == ' ' || line[len(m)] == '\r') {
				return true
			}
		}
	}
	return false
}
