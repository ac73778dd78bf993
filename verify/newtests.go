package verify

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/verify/testsrc"
)

// BaseTree is the repository at the commit the change started from.
// *jobs/gitrepo.Repo satisfies it, so verify reads no git of its own.
type BaseTree interface {
	// BaseContent returns a file's content at the base commit; nil with
	// no error for a file that did not exist there.
	BaseContent(path string) ([]byte, error)
	// WriteBase writes every regular file of the base commit under root,
	// leaving out symbolic links and submodules (they could point
	// anywhere).
	WriteBase(root *os.Root) error
}

func writeUnder(root *os.Root, name string, data []byte, perm fs.FileMode) error {
	if dir := path.Dir(name); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("write original tree: %w", err)
		}
	}
	if err := root.WriteFile(name, data, perm); err != nil {
		return fmt.Errorf("write original tree: %w", err)
	}
	return nil
}

// NewTest is a test the change added or changed, as verify/testsrc
// reads the file before and after.
type NewTest struct {
	// Dir is the package directory relative to the repository root, in
	// slash form; "." for the root.
	Dir string `json:"dir"`
	// Name is the test function's name.
	Name string `json:"name"`
	// File is the test file, relative to the repository root.
	File string `json:"file"`
	// Added is true for a test that did not exist at the base commit,
	// false for one whose body changed.
	Added bool `json:"added"`
	// Lang is LangGo (""), LangPython, LangJS or LangRust. For the
	// languages other than Go, Dir is the project's directory (where its
	// test command runs; "" when detection found no project for the
	// file) rather than the file's.
	Lang string `json:"lang,omitempty"`
	// ID is how the runner selects the test: a pytest node ID, a Rust
	// function name, a JavaScript test title; "" for Go (Name is used).
	ID string `json:"id,omitempty"`
	// Kind is the project's test runner, which decides how one file or
	// test is run.
	Kind TestKind `json:"kind,omitempty"`
	// Inline is set for a Rust unit test in a source file's #[cfg(test)]
	// module: the module, not the file, is laid over the original code.
	Inline bool `json:"inline,omitempty"`
	// RenamedFrom is the test's name before the change when the change
	// renamed it (testsrc.Match pairs it by content and position), and
	// MovedFrom its file then when the change moved it; such a test is
	// listed only when its body changed too.
	RenamedFrom string `json:"renamed_from,omitempty"`
	MovedFrom   string `json:"moved_from,omitempty"`
	// LiteralOnly is set for a test that existed whose only change is in
	// its string literals (a message, its name in a message): it is run on
	// the original code, but is not expected to show the fix.
	LiteralOnly bool `json:"literal_only,omitempty"`
}

// FindNewGoTests is FindNewTests for Go alone: the Test, Fuzz and
// Example functions go test runs (testsrc's reading of its rule) that are
// new or whose source changed in a changed *_test.go file that builds
// here, sorted by directory and name. Files that do not compile as go
// test wants are skipped: the final build reports them.
func FindNewGoTests(ws *sandbox.Workspace, base BaseTree, changed []string) ([]NewTest, error) {
	h, err := readHistory(ws, base, changed)
	if err != nil {
		return nil, err
	}
	return h.newGoTests(changed), nil
}

func (h history) newGoTests(changed []string) []NewTest {
	var out []NewTest
	for _, name := range changed {
		if path.Ext(name) != ".go" {
			continue
		}
		for _, f := range h.newIn(name) {
			out = append(out, f.newTest(NewTest{Dir: path.Dir(name), Name: f.Name, File: name}))
		}
	}
	slices.SortFunc(out, func(a, b NewTest) int {
		return strings.Compare(a.Dir+"\x00"+a.Name, b.Dir+"\x00"+b.Name)
	})
	return out
}

// found is a test that the change added or whose source it changed,
// with what it was before when it existed.
type found struct {
	testsrc.Test
	added bool
	was   *testsrc.Located
	// literalOnly: only its string literals changed.
	literalOnly bool
}

// newTest fills in t's history from f.
func (f found) newTest(t NewTest) NewTest {
	t.Added, t.LiteralOnly = f.added, f.literalOnly
	if f.was != nil {
		if f.was.Test.Short != f.Short {
			t.RenamedFrom = f.was.Test.Short
		}
		if f.was.Path != t.File {
			t.MovedFrom = f.was.Path
		}
	}
	return t
}

// history holds every changed file's tests after the change, each paired
// with itself before the change where it existed (testsrc.Match, as the
// findings pair them).
type history struct {
	now   map[string][]testsrc.Test
	pairs map[string]testsrc.Pair // by file and name after the change
}

func historyKey(file, name string) string { return file + "\x00" + name }

// readHistory reads the tests of every changed file now and at base.
func readHistory(ws *sandbox.Workspace, base BaseTree, changed []string) (history, error) {
	h := history{now: map[string][]testsrc.Test{}, pairs: map[string]testsrc.Pair{}}
	var before, after []testsrc.Located
	for _, name := range changed {
		now, err := ws.ReadFile(name)
		if errors.Is(err, sandbox.ErrPathDenied) {
			// A file no one may read (a secret-bearing .npmrc) holds no
			// test; its change is judged elsewhere.
			continue
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return h, fmt.Errorf("find new tests: %w", err)
		}
		old, err := base.BaseContent(name)
		if err != nil {
			return h, fmt.Errorf("find new tests: %w", err)
		}
		// A file go test refuses to build has no tests to run: the final
		// build reports it.
		tests, err := testsrc.Tests(name, now)
		if err != nil {
			tests = nil
		}
		h.now[name] = tests
		for _, t := range tests {
			after = append(after, testsrc.Located{Path: name, Test: t})
		}
		oldTests, _ := testsrc.Tests(name, old)
		for _, t := range oldTests {
			before = append(before, testsrc.Located{Path: name, Test: t})
		}
	}
	pairs, _, _ := testsrc.Match(before, after)
	for _, p := range pairs {
		h.pairs[historyKey(p.Next.Path, p.Next.Test.Name)] = p
	}
	return h, nil
}

// newIn returns the tests of one changed file that are new or changed; a
// test renamed or moved unchanged is neither, and benchmarks are left
// out, as go test -run does not run them.
func (h history) newIn(name string) []found {
	var out []found
	for _, t := range h.now[name] {
		if t.Kind == testsrc.KindBenchmark {
			continue
		}
		p, existed := h.pairs[historyKey(name, t.Name)]
		if !existed {
			out = append(out, found{Test: t, added: true})
			continue
		}
		// Layout and comments (blanked by testsrc) do not change a test,
		// nor its own name.
		if p.SameBody() {
			continue
		}
		was := p.Base
		out = append(out, found{Test: t, was: &was, literalOnly: testsrc.LiteralsOnly(p)})
	}
	return out
}

// NewTestStatus is what a new test did against the original code.
type NewTestStatus string

// Statuses of a new test run against the original code.
const (
	// FailsBefore: the test fails without the change, so it demonstrates
	// the fix (when it passes with the change).
	FailsBefore NewTestStatus = "fails_before"
	// PassesBefore: the test passes without the change; it does not
	// demonstrate the fix.
	PassesBefore NewTestStatus = "passes_before"
	// BuildFailsBefore: the test does not compile against the original
	// code (it uses something the change added), so it cannot show the
	// old behaviour was wrong.
	BuildFailsBefore NewTestStatus = "build_fails_before"
	// NotRunBefore: the run against the original code said nothing about
	// this test (skipped, or the output was lost).
	NotRunBefore NewTestStatus = "not_run_before"
)

// NewTestResult is one new test's run against the original code.
type NewTestResult struct {
	NewTest
	Status NewTestStatus `json:"status"`
	// Command is what ran, relative to the original tree.
	Command string `json:"command"`
	// Output is the tail of that run's output.
	Output string `json:"output,omitempty"`
	// Reason says, for CannotShow and some NotRunBefore results, why the
	// test could not be shown to fail before the change, as one line
	// starting "cannot be shown because …".
	Reason string `json:"reason,omitempty"`
}

// baseDir is where the original tree is written inside the workspace.
// Under .git it is never part of the diff and never visible to the
// model's file tools.
const baseDir = ".git/patchwright-base"

// RunNewTestsOnBase runs each new test against the original code: it
// writes the base commit's tree into the workspace's .git directory, lays
// the change's test files (and changed testdata) over it, runs the tests
// of each package with -run and removes the tree again. changed is the
// diff's file list.
func (r *Runner) RunNewTestsOnBase(ctx context.Context, ws *sandbox.Workspace, base BaseTree, tests []NewTest, changed []string) ([]NewTestResult, error) {
	if len(tests) == 0 {
		return nil, nil
	}
	root, err := os.OpenRoot(ws.Dir())
	if err != nil {
		return nil, fmt.Errorf("run new tests on original code: %w", err)
	}
	defer root.Close()
	if err := root.RemoveAll(baseDir); err != nil {
		return nil, fmt.Errorf("run new tests on original code: clear %s: %w", baseDir, err)
	}
	defer root.RemoveAll(baseDir)
	if err := root.MkdirAll(baseDir, 0o755); err != nil {
		return nil, fmt.Errorf("run new tests on original code: %w", err)
	}
	tree, err := root.OpenRoot(baseDir)
	if err != nil {
		return nil, fmt.Errorf("run new tests on original code: %w", err)
	}
	defer tree.Close()
	if err := base.WriteBase(tree); err != nil {
		return nil, fmt.Errorf("run new tests on original code: %w", err)
	}
	if err := overlayTests(ws, tree, changed); err != nil {
		return nil, err
	}
	if err := openTree(tree); err != nil {
		return nil, err
	}
	var out []NewTestResult
	for _, group := range groupByDir(tests) {
		var res []NewTestResult
		var err error
		if group[0].Lang == LangGo {
			res, err = r.runOnBase(ctx, group, goModuleDir(tree, group[0].Dir))
		} else {
			res, err = r.runLangOnBase(ctx, group)
			rubyMissingGems(res, changed)
			pythonMissingModules(res, changed)
		}
		if err != nil {
			return out, err
		}
		out = append(out, res...)
	}
	return out, nil
}

// openTree lets the sandbox's command user, whoever owns the files the
// worker wrote, write in the original tree: cargo writes Cargo.lock and
// target/ beside the sources, pytest and node their caches.
func openTree(tree *os.Root) error {
	err := fs.WalkDir(tree.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir():
			return tree.Chmod(p, 0o777)
		case d.Type().IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			return tree.Chmod(p, info.Mode().Perm()|0o666)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("run new tests on original code: open the original tree to the sandbox user: %w", err)
	}
	return nil
}

// overlayTests copies the change's versions of test files and testdata
// into the original tree, so a new test meets the code it was written
// against except for the change under test.
func overlayTests(ws *sandbox.Workspace, tree *os.Root, changed []string) error {
	for _, name := range changed {
		if path.Ext(name) == ".rs" && !overlayable(name) {
			if err := overlayRustModules(ws, tree, name); err != nil {
				return err
			}
			continue
		}
		if !overlayable(name) {
			continue
		}
		data, err := ws.ReadFile(name)
		if errors.Is(err, fs.ErrNotExist) {
			if err := tree.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("overlay test files: %w", err)
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("overlay test files: %w", err)
		}
		if err := writeUnder(tree, name, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// overlayRustModules lays a changed Rust source file's #[cfg(test)]
// modules over the original version of the file (testsrc.SpliceRustTests):
// its unit tests then run against the original code.
func overlayRustModules(ws *sandbox.Workspace, tree *os.Root, name string) error {
	now, err := ws.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("overlay test modules: %w", err)
	}
	base, err := tree.ReadFile(name)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("overlay test modules: %w", err)
	}
	spliced, ok := testsrc.SpliceRustTests(base, now)
	if !ok {
		return nil
	}
	return writeUnder(tree, name, spliced, 0o644)
}

// groupByDir groups the tests one run can take: a Go package, a Python
// or Rust project, a JavaScript file.
func groupByDir(tests []NewTest) [][]NewTest {
	key := func(t NewTest) string {
		k := t.Lang + "\x00" + t.Dir
		if t.Lang == LangJS {
			k += "\x00" + t.File
		}
		return k
	}
	var groups [][]NewTest
	index := map[string]int{}
	for _, t := range tests {
		i, ok := index[key(t)]
		if !ok {
			i = len(groups)
			index[key(t)] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], t)
	}
	return groups
}

// goModuleDir is the directory of the nearest go.mod at or above dir in
// the original tree: "." for the root module (or none), "api" for a
// package of the module in api/.
func goModuleDir(tree *os.Root, dir string) string {
	for d := dir; d != "." && d != "/" && d != ""; d = path.Dir(d) {
		if _, err := tree.Stat(path.Join(d, "go.mod")); err == nil {
			return d
		}
	}
	return "."
}

// runOnBase runs one package's new tests in the original tree, from the
// directory of the module holding it: a nested module's packages are not
// part of the root module.
func (r *Runner) runOnBase(ctx context.Context, tests []NewTest, module string) ([]NewTestResult, error) {
	names := make([]string, len(tests))
	for i, t := range tests {
		names[i] = t.Name // identifiers: parsed by go/parser, safe in a shell word
	}
	rel := tests[0].Dir
	if module != "." {
		rel = strings.TrimPrefix(strings.TrimPrefix(rel, module), "/")
		if rel == "" {
			rel = "."
		}
	}
	dir := "./" + rel
	if rel == "." {
		dir = "."
	}
	if !importPathRE.MatchString(dir) || !importPathRE.MatchString(module) {
		return cannotShow(tests, "cannot be shown because the package directory's name cannot be passed to the shell safely"), nil
	}
	cmd := fmt.Sprintf("go test -count=1 -v -run '^(%s)$' %s", strings.Join(names, "|"), dir)
	where := baseDir
	if module != "." {
		cmd = "cd " + module + " && " + cmd
	}
	out, err := r.exec(ctx, "cd "+where+" && "+cmd)
	if err != nil {
		return nil, fmt.Errorf("run new tests on original code: %w", err)
	}
	s := ParseTestOutput(KindGo, out.text).GoTests()
	results := make([]NewTestResult, len(tests))
	for i, t := range tests {
		results[i] = NewTestResult{NewTest: t, Command: cmd, Output: r.tail(out.text), Status: classifyBefore(t.Name, out.ExitCode, s)}
	}
	return results, nil
}

func classifyBefore(name string, exit int, s *GoTestSummary) NewTestStatus {
	if s == nil {
		if exit != 0 {
			return BuildFailsBefore // no package line at all: go test could not start
		}
		return NotRunBefore
	}
	for _, tests := range s.FailedTests {
		if slices.Contains(tests, name) {
			return FailsBefore
		}
	}
	for _, tests := range s.PassedTests {
		if slices.Contains(tests, name) {
			return PassesBefore
		}
	}
	if len(s.PackagesBuildFailed) > 0 {
		return BuildFailsBefore
	}
	return NotRunBefore
}
