package verify

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/patchwright/patchwright/sandbox"
)

// Languages of NewTest.Lang. Go tests keep "" so results recorded before
// other languages were supported read the same.
const (
	LangGo     = ""
	LangPython = "python"
	LangJS     = "javascript"
	LangRust   = "rust"
)

// CannotShow: the new test cannot be run against the original code at
// all; NewTestResult.Reason says why.
const CannotShow NewTestStatus = "cannot_show"

// FindNewTests finds the tests a change added or changed, in every
// language whose tests can be run alone: Go (FindNewGoTests), Python
// (pytest node IDs), JavaScript (test titles in *.test.js and similar
// files) and Rust (#[test] functions). d says which project each file
// belongs to and which runner a JavaScript project uses.
func FindNewTests(ws *sandbox.Workspace, base *Base, changed []string, d Detection) ([]NewTest, error) {
	out, err := FindNewGoTests(ws, base, changed)
	if err != nil {
		return nil, err
	}
	for _, name := range changed {
		var find func(string, []byte) map[string]testSource
		var lang string
		switch {
		case isPythonTestFile(name):
			find, lang = pythonTests, LangPython
		case isJSTestFile(name):
			find, lang = jsTests, LangJS
		case strings.HasSuffix(name, ".rs"):
			find, lang = rustTests, LangRust
		default:
			continue
		}
		now, err := ws.ReadFile(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("find new tests: %w", err)
		}
		old, _, err := base.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("find new tests: %w", err)
		}
		before := find(name, old)
		project := projectOf(d, name, lang)
		var found []NewTest
		for id, src := range find(name, now) {
			if prev, ok := before[id]; ok && prev.text == src.text {
				continue
			}
			_, existed := before[id]
			found = append(found, NewTest{Dir: project, Name: src.name, File: name, Added: !existed, Lang: lang, ID: id, Kind: testKindOf(d, project, lang)})
		}
		slices.SortFunc(found, func(a, b NewTest) int { return strings.Compare(a.ID, b.ID) })
		out = append(out, found...)
	}
	return out, nil
}

// testKindOf is the test runner of the project in dir, for JavaScript,
// where the file filter depends on it.
func testKindOf(d Detection, dir, lang string) TestKind {
	if lang != LangJS || dir == "" {
		return ""
	}
	for _, c := range d.Checks {
		if c.Dir == dir && strings.HasPrefix(c.Name, "test") {
			if k := KindOf(c); k != "" {
				return k
			}
		}
	}
	return ""
}

// projectOf returns the directory of the project of lang containing
// file, or "" when detection found none.
func projectOf(d Detection, file, lang string) string {
	want := map[string]string{LangPython: "python", LangJS: "node", LangRust: "rust"}[lang]
	best := ""
	for _, p := range d.Projects {
		if p.Language == want && within(file, p.Dir) && (best == "" || depth(p.Dir) > depth(best)) {
			best = p.Dir
		}
	}
	return best
}

// testSource is one test found in a file: the name a reader sees and the
// source text whose change makes it "changed".
type testSource struct {
	name, text string
}

func isPythonTestFile(name string) bool {
	b := path.Base(name)
	return strings.HasSuffix(b, ".py") && (strings.HasPrefix(b, "test_") || strings.HasSuffix(b, "_test.py"))
}

var jsTestFileRE = regexp.MustCompile(`(^|/)(__tests__|tests?)/.*\.[cm]?[jt]sx?$|\.(test|spec)\.[cm]?[jt]sx?$`)

func isJSTestFile(name string) bool { return jsTestFileRE.MatchString(name) }

var (
	pyClassRE = regexp.MustCompile(`^class\s+(Test\w*)\s*[:(]`)
	pyDefRE   = regexp.MustCompile(`^(\s*)(?:async\s+)?def\s+(test\w*)\s*\(`)
)

// pythonTests maps each pytest node ID in a test file ("tests/t.py::test_a",
// "tests/t.py::TestX::test_b") to its source, decorators included. It
// reads indentation the way Python does; a file it misreads only makes a
// test look changed.
func pythonTests(file string, src []byte) map[string]testSource {
	out := map[string]testSource{}
	lines := strings.Split(string(src), "\n")
	class := ""
	for i, line := range lines {
		if m := pyClassRE.FindStringSubmatch(line); m != nil {
			class = m[1]
			continue
		}
		if line != "" && !strings.HasPrefix(line, " ") && !strings.HasPrefix(line, "\t") && !strings.HasPrefix(line, "@") && !strings.HasPrefix(line, "#") {
			class = "" // any other top-level statement ends the class
		}
		m := pyDefRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		indent := len(m[1])
		id := file + "::" + m[2]
		if indent > 0 {
			if class == "" {
				continue // a nested function, not collected by pytest
			}
			id = file + "::" + class + "::" + m[2]
		}
		start := i
		for start > 0 && strings.HasPrefix(strings.TrimSpace(lines[start-1]), "@") {
			start--
		}
		end := i + 1
		for end < len(lines) {
			l := lines[end]
			if strings.TrimSpace(l) != "" && len(l)-len(strings.TrimLeft(l, " \t")) <= indent {
				break
			}
			end++
		}
		text := strings.TrimRight(strings.Join(lines[start:end], "\n"), " \t\n")
		out[id] = testSource{name: strings.TrimPrefix(id, file+"::"), text: text}
	}
	return out
}

// jsTestRE finds it("title", test('title' and it.only with a template
// literal title; the title is the test's name in every JavaScript runner.
var jsTestRE = regexp.MustCompile("\\b(?:it|test)(?:\\.only)?\\s*\\(\\s*(?:'([^'\\\\\\n]*)'|\"([^\"\\\\\\n]*)\"|`([^`\\\\$\\n]*)`)")

// jsTests maps each test title in a JavaScript or TypeScript file to the
// source of its call, parentheses balanced.
func jsTests(_ string, src []byte) map[string]testSource {
	out := map[string]testSource{}
	s := string(src)
	for _, m := range jsTestRE.FindAllStringSubmatchIndex(s, -1) {
		title := ""
		for g := 1; g <= 3; g++ {
			if m[2*g] >= 0 {
				title = s[m[2*g]:m[2*g+1]]
			}
		}
		open := strings.IndexByte(s[m[0]:], '(') + m[0]
		end := balanced(s, open, '(', ')')
		id := title
		if _, dup := out[id]; dup {
			continue // the same title twice: the first one speaks for both
		}
		out[id] = testSource{name: title, text: s[m[0]:end]}
	}
	return out
}

// balanced returns the index after the bracket closing the one at open,
// skipping string literals and comments; len(s) when it is not closed.
func balanced(s string, open int, l, r byte) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\'' || c == '`':
			for i++; i < len(s) && s[i] != c; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		case c == '/' && i+1 < len(s) && s[i+1] == '/':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			if j := strings.Index(s[i+2:], "*/"); j >= 0 {
				i += j + 3
			} else {
				return len(s)
			}
		case c == l:
			depth++
		case c == r:
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return len(s)
}

var (
	rustTestAttrRE = regexp.MustCompile(`^\s*#\[(?:test|tokio::test|async_std::test)(?:\(.*\))?\]\s*$`)
	rustAttrRE     = regexp.MustCompile(`^\s*#\[.*\]\s*$`)
	rustFnRE       = regexp.MustCompile(`^\s*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?fn\s+([A-Za-z_][A-Za-z0-9_]*)`)
)

// rustTests maps each #[test] function of a Rust file to its source.
func rustTests(_ string, src []byte) map[string]testSource {
	out := map[string]testSource{}
	s := string(src)
	lines := strings.SplitAfter(s, "\n")
	offset := 0
	offsets := make([]int, len(lines))
	for i, l := range lines {
		offsets[i] = offset
		offset += len(l)
	}
	for i, line := range lines {
		if !rustTestAttrRE.MatchString(line) {
			continue
		}
		j := i + 1
		for j < len(lines) && rustAttrRE.MatchString(lines[j]) {
			j++
		}
		if j >= len(lines) {
			break
		}
		m := rustFnRE.FindStringSubmatch(lines[j])
		if m == nil {
			continue
		}
		brace := strings.IndexByte(s[offsets[j]:], '{')
		if brace < 0 {
			continue
		}
		end := balanced(s, offsets[j]+brace, '{', '}')
		out[m[1]] = testSource{name: m[1], text: s[offsets[i]:end]}
	}
	return out
}

// overlayable says whether a changed file holds only tests or test data,
// so copying it over the original tree does not bring the fix along.
func overlayable(name string) bool {
	switch {
	case strings.HasSuffix(name, "_test.go"), strings.HasPrefix(name, "testdata/"), strings.Contains(name, "/testdata/"):
		return true
	case isPythonTestFile(name), path.Base(name) == "conftest.py", isJSTestFile(name):
		return true
	case strings.HasSuffix(name, ".rs"):
		return rustTestOnlyFile(name)
	}
	return false
}

// rustTestOnlyFile: integration tests (tests/…), and a module file named
// tests.rs, hold no code under test.
func rustTestOnlyFile(name string) bool {
	return strings.HasPrefix(name, "tests/") || strings.Contains(name, "/tests/") || path.Base(name) == "tests.rs"
}

// jsBinPath is the PATH prefix that finds the runner setup installed:
// the workspace's node_modules/.bin of the project and of the repository
// root (where npm, pnpm and yarn workspaces hoist it), as paths from the
// project's directory in the original tree, which has no node_modules.
func jsBinPath(dir string) string {
	up := strings.Repeat("../", strings.Count(baseDir, "/")+1+depth(dir))
	paths := []string{up + "node_modules/.bin"}
	if dir != "." {
		paths = append([]string{up + dir + "/node_modules/.bin"}, paths...)
	}
	return strings.Join(paths, ":")
}

// runLangOnBase runs one group of non-Go new tests (one project and
// language; for JavaScript one file) in the original tree.
func (r *Runner) runLangOnBase(ctx context.Context, group []NewTest) ([]NewTestResult, error) {
	var results []NewTestResult
	var tests []NewTest
	for _, t := range group {
		if why := cannotShowWhy(t); why != "" {
			results = append(results, cannotShow([]NewTest{t}, why)...)
		} else {
			tests = append(tests, t)
		}
	}
	if len(tests) == 0 {
		return results, nil
	}
	t0 := tests[0]
	var cmd string
	switch t0.Lang {
	case LangPython:
		ids := make([]string, len(tests))
		for i, t := range tests {
			ids[i] = "'" + strings.TrimPrefix(t.ID, prefixOf(t.Dir)) + "'"
		}
		// The original tree's own code first on the path: an editable
		// install from setup points at the workspace, the changed code.
		cmd = "PYTHONPATH=.:src${PYTHONPATH:+:$PYTHONPATH} python -m pytest -p no:cacheprovider -rA " + strings.Join(ids, " ")
	case LangRust:
		names := make([]string, len(tests))
		for i, t := range tests {
			names[i] = t.ID
		}
		offline := " --offline"
		if r.network() {
			offline = ""
		}
		cmd = "cargo test" + offline + " -- " + strings.Join(names, " ")
	case LangJS:
		cmd = jsFileCommand(t0.Kind, strings.TrimPrefix(t0.File, prefixOf(t0.Dir)), jsBinPath(t0.Dir))
	}
	dir := baseDir
	if t0.Dir != "." {
		dir += "/" + t0.Dir
	}
	out, err := r.exec(ctx, "cd "+dir+" && "+cmd)
	if err != nil {
		return nil, fmt.Errorf("run new tests on original code: %w", err)
	}
	for _, t := range tests {
		status, why := classifyLang(t, out.ExitCode, out.text)
		results = append(results, NewTestResult{NewTest: t, Command: cmd, Output: r.tail(out.text), Status: status, Reason: why})
	}
	return results, nil
}

// network reports whether the runner's checks run with a network; the
// new-test runs use the same cargo flags as the detected checks.
func (r *Runner) network() bool {
	for _, c := range r.Checks {
		if KindOf(c) == KindCargo {
			return !strings.Contains(c.Run, "--offline")
		}
	}
	return false
}

func prefixOf(dir string) string {
	if dir == "." || dir == "" {
		return ""
	}
	return dir + "/"
}

// safeIDRE is what a test ID may hold to be put in single quotes in a
// shell command; rustIdentRE what a Rust filter may be.
var (
	safeIDRE    = regexp.MustCompile(`^[A-Za-z0-9_./:\[\]-]+$`)
	rustIdentRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// cannotShowWhy says why a new test cannot be run alone on the original
// code, or "".
func cannotShowWhy(t NewTest) string {
	switch {
	case t.Dir == "":
		return fmt.Sprintf("cannot be shown because no %s project (with its test command) was detected around %s", t.Lang, t.File)
	case !safeDirRE.MatchString(t.Dir) && t.Dir != ".":
		return "cannot be shown because the project's directory name cannot be used in a command safely"
	case !overlayable(t.File):
		return fmt.Sprintf("cannot be shown because the test is in %s, beside the code it tests: the original code cannot be run with the new test without also taking the change", t.File)
	case t.Lang == LangPython && !safeIDRE.MatchString(t.ID):
		return "cannot be shown because its pytest node ID cannot be passed to the shell safely"
	case t.Lang == LangRust && !rustIdentRE.MatchString(t.ID):
		return "cannot be shown because its name is not a plain Rust identifier"
	case t.Lang == LangJS && !safeIDRE.MatchString(t.File):
		return "cannot be shown because the test file's name cannot be passed to the shell safely"
	case t.Lang == LangJS && jsFileCommand(t.Kind, t.File, "") == "":
		return "cannot be shown because the project's test script runs no JavaScript test runner Patchwright knows how to point at one file (node:test, mocha, jest, vitest, tape)"
	}
	return ""
}

func cannotShow(tests []NewTest, why string) []NewTestResult {
	res := make([]NewTestResult, len(tests))
	for i, t := range tests {
		res[i] = NewTestResult{NewTest: t, Status: CannotShow, Reason: why}
	}
	return res
}

// jsFileCommand runs one test file with the project's runner, from the
// project directory of the original tree; bin is jsBinPath's PATH
// prefix. "" when the runner is unknown.
func jsFileCommand(kind TestKind, file, bin string) string {
	q := "'" + file + "'"
	run := map[TestKind]string{
		KindNodeTest: "node --test --test-reporter=tap " + q,
		KindTAP:      "node " + q,
		KindMocha:    "mocha " + q,
		KindJest:     "jest --ci " + q,
		KindVitest:   "vitest run " + q,
	}[kind]
	if run == "" {
		return ""
	}
	return "PATH=" + bin + ":$PATH " + run
}

var (
	pytestResultRE = regexp.MustCompile(`^(PASSED|FAILED|ERROR|XFAIL|XPASS|SKIPPED) (\S+)`)
	rustResultRE   = regexp.MustCompile(`^test (\S+) \.\.\. (ok|FAILED|ignored)`)
)

// classifyLang reads what a run on the original code said about t.
func classifyLang(t NewTest, exit int, out string) (NewTestStatus, string) {
	switch t.Lang {
	case LangPython:
		return classifyPytest(t, exit, out)
	case LangRust:
		return classifyCargo(t, exit, out)
	}
	return classifyJS(t, t.Kind, exit, out)
}

func classifyPytest(t NewTest, exit int, out string) (NewTestStatus, string) {
	id := strings.TrimPrefix(t.ID, prefixOf(t.Dir))
	file := strings.TrimPrefix(t.File, prefixOf(t.Dir))
	for _, line := range outputLines(out) {
		m := pytestResultRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		switch {
		case m[2] == file && m[1] == "ERROR":
			return BuildFailsBefore, "" // the file does not import against the original code
		case m[2] != id && !strings.HasSuffix(m[2], "/"+id):
		case m[1] == "FAILED" || m[1] == "ERROR":
			return FailsBefore, ""
		case m[1] == "PASSED" || m[1] == "XPASS":
			return PassesBefore, ""
		}
	}
	if why := couldNotRun(exit, out); why != "" {
		return NotRunBefore, "cannot be shown because the run could not start: " + why
	}
	return NotRunBefore, ""
}

func classifyCargo(t NewTest, exit int, out string) (NewTestStatus, string) {
	if why := couldNotRun(exit, out); why != "" {
		return NotRunBefore, "cannot be shown because the run could not start: " + why
	}
	for _, line := range outputLines(out) {
		m := rustResultRE.FindStringSubmatch(line)
		if m == nil || (m[1] != t.ID && !strings.HasSuffix(m[1], "::"+t.ID)) {
			continue
		}
		switch m[2] {
		case "FAILED":
			return FailsBefore, ""
		case "ok":
			return PassesBefore, ""
		}
	}
	if exit != 0 && strings.Contains(out, "could not compile") {
		return BuildFailsBefore, ""
	}
	return NotRunBefore, ""
}

// passedByName finds a passing line naming the test: TAP's "ok 2 - name"
// (not a skip), or the check marks of the spec-style reporters ("✓ name
// (1 ms)" in Jest and Vitest, "✔ name" in mocha and node:test).
func passedByName(name string, out string) bool {
	for _, line := range outputLines(out) {
		line = strings.TrimSpace(line)
		if m := tapPointRE.FindStringSubmatch(line); m != nil && m[2] == "ok" && !tapDirectiveRE.MatchString(m[4]) && m[4] == name {
			return true
		}
		for _, mark := range []string{"✓ ", "✔ "} {
			rest, ok := strings.CutPrefix(line, mark)
			if ok && (rest == name || strings.HasPrefix(rest, name+" (")) {
				return true
			}
		}
	}
	return false
}

func classifyJS(t NewTest, kind TestKind, exit int, out string) (NewTestStatus, string) {
	if why := couldNotRun(exit, out); why != "" {
		return NotRunBefore, "cannot be shown because the run could not start: " + why
	}
	s := ParseTestOutput(kind, out)
	if s == nil {
		if exit != 0 {
			return BuildFailsBefore, "" // the runner printed no summary: the file did not load
		}
		return NotRunBefore, ""
	}
	for _, f := range s.FailedTests {
		if f == t.Name || strings.HasSuffix(f, " "+t.Name) {
			return FailsBefore, ""
		}
	}
	if passedByName(t.Name, out) {
		return PassesBefore, ""
	}
	switch {
	case exit == 0 && s.Passed > 0:
		return PassesBefore, "" // the whole file passed, this test with it
	case s.Errors > 0 || exit != 0 && s.Ran() == 0:
		return BuildFailsBefore, ""
	}
	return NotRunBefore, "the run on the original code did not report this test by name"
}
