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
	"github.com/patchwright/patchwright/verify/testsrc"
)

// Languages of NewTest.Lang. Go tests keep "" so results recorded before
// other languages were supported read the same.
const (
	LangGo     = ""
	LangPython = "python"
	LangJS     = "javascript"
	LangRust   = "rust"
	LangRuby   = "ruby"
	LangPHP    = "php"
	LangCTest  = "ctest" // a CTest test a CMakeLists.txt adds, or a Meson test() in a meson.build
	LangJava   = "java"
)

// CannotShow: the new test cannot be run against the original code at
// all; NewTestResult.Reason says why.
const CannotShow NewTestStatus = "cannot_show"

// FindNewTests finds the tests a change added or changed, in every
// language whose tests can be run alone: Go (FindNewGoTests), Python
// (pytest node IDs), JavaScript and TypeScript (test titles) and Rust
// (#[test] functions), each file read by verify/testsrc as the
// findings read it. d says which project each file belongs to and which
// runner a JavaScript project uses.
func FindNewTests(ws *sandbox.Workspace, base BaseTree, changed []string, d Detection) ([]NewTest, error) {
	h, err := readHistory(ws, base, changed)
	if err != nil {
		return nil, err
	}
	out := h.newGoTests(changed)
	for _, name := range changed {
		lang, ok := runnableLang(name)
		if !ok {
			continue
		}
		tests := h.newIn(name)
		project := projectOf(d, name, lang)
		if len(tests) == 0 && lang == LangCTest && toolOf(d, project) == "make" && testsrc.IsTestPath(name) {
			// A test program of a Makefile (its own main) declares no test
			// testsrc can name: the file is the test.
			t, err := makeTest(ws, base, name, project)
			if err != nil {
				return nil, err
			}
			out = append(out, t...)
			continue
		}
		inline := false
		if lang == LangRust && !overlayable(name) {
			inline, err = rustInline(ws, base, name)
			if err != nil {
				return nil, err
			}
		}
		var found []NewTest
		seen := map[string]bool{}
		for _, t := range tests {
			nt := t.newTest(NewTest{Dir: project, File: name, Lang: lang, Kind: testKindOf(d, project, lang), Inline: inline})
			nameTest(&nt, t, lang)
			if !seen[nt.ID] {
				seen[nt.ID] = true
				found = append(found, nt)
			}
		}
		slices.SortFunc(found, func(a, b NewTest) int { return strings.Compare(a.ID, b.ID) })
		out = append(out, found...)
	}
	return out, nil
}

// nameTest sets nt's Name and ID, the ID being what lang's runner selects
// the test t by. nt.File is the file t is in.
func nameTest(nt *NewTest, t found, lang string) {
	switch lang {
	case LangPython:
		// A pytest node ID: classes, nested ones too, joined by "::".
		nt.Name = strings.ReplaceAll(t.Name, ".", "::")
		nt.ID = nt.File + "::" + nt.Name
	case LangRuby, LangJava:
		// RSpec's full description, minitest's Class#test_name;
		// Class.method for JUnit.
		nt.Name, nt.ID = t.Name, t.Name
		if nt.Kind == KindTestUnit && t.Described != "" {
			// test-unit defines `test "adds two" do` as the
			// method "test: adds two" and reports it so.
			class, _, _ := strings.Cut(t.Name, "#")
			nt.Name = class + "#test: " + t.Described
			nt.ID = nt.Name
		}
	case LangPHP:
		// Reported as Class::method, selected by the method.
		nt.Name, nt.ID = t.Name, t.Short
	default:
		// Runners select JavaScript tests by title and Rust
		// tests by function name; the same one twice is run once.
		nt.Name, nt.ID = t.Short, t.Short
	}
}

// KindMakeTarget marks a new test that only a Makefile's test target
// runs, together with the others: it cannot be run alone on the original
// code.
const KindMakeTarget TestKind = "make"

// toolOf is the tool of the project detected in dir.
func toolOf(d Detection, dir string) string {
	for _, p := range d.Projects {
		if p.Dir == dir {
			return p.Tool
		}
	}
	return ""
}

// makeTest is the changed test file of a Make project as a new test, or
// nothing when the change deleted it.
func makeTest(ws *sandbox.Workspace, base BaseTree, name, project string) ([]NewTest, error) {
	if _, err := ws.ReadFile(name); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("find new tests: %w", err)
	}
	old, err := base.BaseContent(name)
	if err != nil {
		return nil, fmt.Errorf("find new tests: %w", err)
	}
	return []NewTest{{Dir: project, Name: name, ID: name, File: name, Added: old == nil, Lang: LangCTest, Kind: KindMakeTarget}}, nil
}

// rustInline says whether a Rust source file's tests can be run on the
// original code by swapping its #[cfg(test)] modules in.
func rustInline(ws *sandbox.Workspace, base BaseTree, name string) (bool, error) {
	now, err := ws.ReadFile(name)
	if err != nil {
		return false, fmt.Errorf("find new tests: %w", err)
	}
	old, err := base.BaseContent(name)
	if err != nil {
		return false, fmt.Errorf("find new tests: %w", err)
	}
	_, ok := testsrc.SpliceRustTests(old, now)
	return ok, nil
}

// runnableLang is the language of a file whose new tests can be run on
// the original code, other than Go.
func runnableLang(name string) (string, bool) {
	switch path.Ext(name) {
	case ".py":
		return LangPython, true
	case ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts":
		return LangJS, true
	case ".rs":
		return LangRust, true
	case ".rb":
		return LangRuby, true
	case ".php":
		return LangPHP, true
	case ".java":
		return LangJava, true
	case ".c", ".cc", ".cpp", ".cxx":
		return LangCTest, true // GoogleTest and Catch2 tests, as CTest names them
	}
	if b := path.Base(name); b == "CMakeLists.txt" || b == "meson.build" {
		return LangCTest, true
	}
	return "", false
}

// testKindOf is the test runner of the project in dir, for JavaScript,
// where the file filter depends on it.
func testKindOf(d Detection, dir, lang string) TestKind {
	if dir == "" || lang == LangPython || lang == LangRust {
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
	want := map[string]string{LangPython: "python", LangJS: "node", LangRust: "rust",
		LangRuby: "ruby", LangPHP: "php", LangCTest: "c", LangJava: "java"}[lang]
	best := ""
	for _, p := range d.Projects {
		if p.Language == want && within(file, p.Dir) && (best == "" || depth(p.Dir) > depth(best)) {
			best = p.Dir
		}
	}
	return best
}

// overlayable says whether a changed file holds only tests, test support
// or test data (testsrc.IsTestPath, testsrc.IsTestData), so copying it
// over the original tree does not bring the fix along.
func overlayable(name string) bool {
	return testsrc.IsTestPath(name) || testsrc.IsTestData(name)
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
		// --no-fail-fast: a failing unit test binary must not keep the
		// integration tests from running.
		cmd = "cargo test" + offline + " --no-fail-fast -- " + strings.Join(names, " ")
	case LangJS:
		cmd = jsFileCommand(t0.Kind, strings.TrimPrefix(t0.File, prefixOf(t0.Dir)), jsBinPath(t0.Dir))
	default:
		res, err := r.runReportedOnBase(ctx, tests)
		return append(results, res...), err
	}
	dir := baseDir
	if t0.Dir != "." {
		dir += "/" + t0.Dir
	}
	out, err := r.exec(ctx, r.activate(t0.Dir)+"cd "+dir+" && "+cmd)
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
	case t.Kind == KindMakeTarget:
		return "cannot be shown because the Makefile's test target builds and runs its tests together and cannot be pointed at this one, so the original code was not run with it"
	case t.Dir == "":
		return fmt.Sprintf("cannot be shown because no %s project (with its test command) was detected around %s", t.Lang, t.File)
	case !safeDirRE.MatchString(t.Dir) && t.Dir != ".":
		return "cannot be shown because the project's directory name cannot be used in a command safely"
	case !overlayable(t.File) && !t.Inline:
		return fmt.Sprintf("cannot be shown because the test is in %s, beside the code it tests: the original code cannot be run with the new test without also taking the change", t.File)
	case t.Lang == LangPython && !safeIDRE.MatchString(t.ID):
		return "cannot be shown because its pytest node ID cannot be passed to the shell safely"
	case t.Lang == LangRust && !rustIdentRE.MatchString(t.ID):
		return "cannot be shown because its name is not a plain Rust identifier"
	case t.Lang == LangJS && !safeIDRE.MatchString(t.File):
		return "cannot be shown because the test file's name cannot be passed to the shell safely"
	case (t.Lang == LangRuby || t.Lang == LangPHP || t.Lang == LangCTest || t.Lang == LangJava) && reportedCommand(t.Kind, []NewTest{t}, "") == "":
		return "cannot be shown because the project's test command runs no test runner Patchwright knows how to point at one test (RSpec, minitest, test-unit, PHPUnit, CTest, meson test, Maven, Gradle)"
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
