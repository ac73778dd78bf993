package eval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// A leak is hidden test content that a run could see: in the tree the
// sandbox holds or in the model's context. A leaked task measures recall,
// not problem solving, so it is refused rather than scored.

// minLeakLine is the shortest line that counts as evidence: shorter lines
// ("}", "return nil", "import os") occur everywhere.
const minLeakLine = 12

// minLeakLines is how many of the hidden tests' distinctive lines must
// appear, when there are that many, before a text counts as a leak.
const minLeakLines = 3

// fingerprint is what identifies a task's hidden tests.
type fingerprint struct {
	// files are the hidden files' paths and whole contents (files: form).
	files map[string][]byte
	// lines are the hidden tests' distinctive lines: long enough, and not
	// found anywhere in the base tree, so that finding them elsewhere
	// means the hidden tests were seen.
	lines map[string]bool
}

// newFingerprint collects the lines the hidden tests add that the base
// tree does not already hold.
func newFingerprint(t *Task, base map[string]bool) fingerprint {
	fp := fingerprint{files: t.HiddenFiles, lines: map[string]bool{}}
	add := func(line string) {
		line = strings.TrimSpace(line)
		if len(line) >= minLeakLine && !base[line] {
			fp.lines[line] = true
		}
	}
	for _, data := range t.HiddenFiles {
		for line := range strings.SplitSeq(string(data), "\n") {
			add(line)
		}
	}
	for line := range strings.SplitSeq(string(t.HiddenPatch), "\n") {
		if strings.HasPrefix(line, "+") && !strings.HasPrefix(line, "+++") {
			add(line[1:])
		}
	}
	return fp
}

// needed is how many distinctive lines make a leak.
func (fp fingerprint) needed() int {
	return min(minLeakLines, len(fp.lines))
}

// numbered strips what the tools put in front of a line of a file: the
// line numbers of read_file ("  12\tcode", "12: code", "12| code") and the
// "path:line: " of search.
var numbered = regexp.MustCompile(`^(\s*\d+\s*[\t:|]|[^\s:]+:\d+:)\s?`)

// seenIn reports whether text holds at least needed of the distinctive
// lines, and one of them.
func (fp fingerprint) seenIn(text string) (string, bool) {
	need := fp.needed()
	if need == 0 {
		return "", false
	}
	found := map[string]bool{}
	first := ""
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimSpace(numbered.ReplaceAllString(line, ""))
		if fp.lines[line] && !found[line] {
			found[line] = true
			if first == "" {
				first = line
			}
		}
	}
	return first, len(found) >= need
}

// treeLines is the set of trimmed lines of every file in a tree, which
// the fingerprint leaves out.
func treeLines(dir string) (map[string]bool, error) {
	lines := map[string]bool{}
	err := walkFiles(dir, func(_ string, data []byte) error {
		for line := range strings.SplitSeq(string(data), "\n") {
			lines[strings.TrimSpace(line)] = true
		}
		return nil
	})
	return lines, err
}

// walkFiles calls fn with each regular file under dir (slash path, bytes),
// skipping .git.
func walkFiles(dir string, fn func(rel string, data []byte) error) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		return fn(filepath.ToSlash(rel), data)
	})
}

// checkTree refuses a tree that holds a hidden file (same bytes, at its
// path or any other) or enough of the hidden tests' distinctive lines. It
// is run on each run's sandbox tree before the model starts, where setup
// commands may have fetched what the base tree did not hold.
func (fp fingerprint) checkTree(dir string) error {
	return walkFiles(dir, func(rel string, data []byte) error {
		for hp, content := range fp.files {
			if len(bytes.TrimSpace(content)) > 0 && bytes.Equal(bytes.TrimSpace(data), bytes.TrimSpace(content)) {
				return fmt.Errorf("hidden test file %s is already in the tree as %s", hp, rel)
			}
		}
		if line, ok := fp.seenIn(string(data)); ok {
			return fmt.Errorf("the tree's %s already holds the hidden tests (for example %q)", rel, line)
		}
		return nil
	})
}

// checkIssue refuses an issue that quotes the hidden tests: the issue is
// the start of the model's context.
func (fp fingerprint) checkIssue(t *Task) error {
	if line, ok := fp.seenIn(t.Title + "\n" + t.Body); ok {
		return fmt.Errorf("the issue text quotes the hidden tests (for example %q)", line)
	}
	return nil
}

// contextKeys are the ledger fields that reached the model: the prompt,
// tool results and command output. The model's own words are left out:
// what it writes is not evidence of what it saw.
var contextKeys = map[string]bool{"prompt": true, "result": true, "output": true}

// checkLedger refuses a run whose ledger shows hidden test content in the
// model's context.
func (fp fingerprint) checkLedger(path string) error {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 256<<20)
	for n := 1; sc.Scan(); n++ {
		var v any
		if json.Unmarshal(sc.Bytes(), &v) != nil {
			continue
		}
		for _, s := range contextStrings(v, false) {
			if line, ok := fp.seenIn(s); ok {
				return fmt.Errorf("the model's context held the hidden tests (ledger.jsonl line %d: %q)", n, line)
			}
		}
	}
	return sc.Err()
}

// contextStrings collects the strings under contextKeys in a decoded JSON
// value.
func contextStrings(v any, keep bool) []string {
	var out []string
	switch x := v.(type) {
	case string:
		if keep {
			out = append(out, x)
		}
	case []any:
		for _, e := range x {
			out = append(out, contextStrings(e, keep)...)
		}
	case map[string]any:
		for k, e := range x {
			out = append(out, contextStrings(e, keep || contextKeys[k])...)
		}
	}
	return out
}

// A block of hidden test lines counts as present in the base tree only
// when it is this long: a line or two, or a few characters, occur in any
// large tree by chance.
const (
	minBlockLines = 3
	minBlockBytes = 60
)

// hiddenBlocks are the hidden tests as blocks of normalized text: each
// hidden file whole, or each run of lines the hidden patch adds; blocks
// shorter than the minimums are left out.
func hiddenBlocks(t *Task) map[string]string {
	blocks := map[string]string{}
	keep := func(b, file string) {
		if strings.Count(b, "\n")+1 >= minBlockLines && len(b) >= minBlockBytes {
			blocks[b] = file
		}
	}
	for p, data := range t.HiddenFiles {
		keep(normalize(string(data)), p)
	}
	var run []string
	file := ""
	flush := func() {
		keep(strings.Join(run, "\n"), file)
		run = nil
	}
	for line := range strings.SplitSeq(string(t.HiddenPatch), "\n") {
		switch {
		case strings.HasPrefix(line, "+++ "):
			flush()
			file = strings.TrimPrefix(strings.TrimPrefix(line, "+++ "), "b/")
		case strings.HasPrefix(line, "+") && strings.TrimSpace(line[1:]) != "":
			run = append(run, strings.TrimSpace(line[1:]))
		default:
			// A blank added line ends a block too: blocks are then about
			// one function each, and a whole function is what a copy holds.
			flush()
		}
	}
	flush()
	return blocks
}

// normalize trims every line and drops blank ones, so indentation and
// line endings do not hide a copy.
func normalize(s string) string {
	var lines []string
	for line := range strings.SplitSeq(strings.ReplaceAll(s, "\r\n", "\n"), "\n") {
		if l := strings.TrimSpace(line); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

// checkBase refuses a base tree that already holds the hidden tests: a
// hidden file at its own path with the same content, or a long enough
// block of a hidden file or of the lines the hidden patch adds.
func checkBase(t *Task, dir string) error {
	blocks := hiddenBlocks(t)
	return walkFiles(dir, func(rel string, data []byte) error {
		if h, ok := t.HiddenFiles[rel]; ok && len(bytes.TrimSpace(h)) > 0 && bytes.Equal(bytes.TrimSpace(h), bytes.TrimSpace(data)) {
			return fmt.Errorf("the hidden test file %s is already in the base tree", rel)
		}
		text := normalize(string(data))
		for b, hidden := range blocks {
			if strings.Contains(text, b) {
				return fmt.Errorf("the hidden tests (%s) are already in the base tree, in %s", hidden, rel)
			}
		}
		return nil
	})
}
