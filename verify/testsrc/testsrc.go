// Package testsrc is the one reader of test sources: which tests a file
// declares, in the way its runner decides it. Go is read with go/ast and
// go test's own rules (cmd/go/internal/load/test.go for the functions,
// go/build for the files that build on linux/amd64); Python,
// JavaScript/TypeScript, Rust and Java with tree-sitter. New-test
// discovery (verify) and the findings on the diff
// (verify/findings) both read tests here, so they cannot disagree.
//
// It imports none of Patchwright's packages.
package testsrc

import (
	"path"
	"strings"
)

// Kind is what a declaration is to its runner.
type Kind string

// Kinds of Test. Only Go tells them apart; every other language's tests
// are KindTest.
const (
	KindTest      Kind = "test"
	KindFuzz      Kind = "fuzz"
	KindExample   Kind = "example"
	KindBenchmark Kind = "benchmark"
)

// Test is one test as its language's runner sees it.
type Test struct {
	// Name is qualified by its enclosing class, module or describe block,
	// so two tests of one name in different groups stay apart:
	// "TestGroup.test_a" (Python, Java), "tests::adds" (Rust),
	// "calc > adds" (JavaScript), "TestAdd" (Go).
	Name string
	// Short is the test's own name, the part a rename changes.
	Short string
	// Described is the description a test declared by a call gives,
	// as written (Ruby's `test "adds two" do`): the xUnit frameworks
	// name such a test differently (minitest's Rails form
	// "test_adds_two", test-unit's "test: adds two"), and Name and Short
	// hold the first.
	Described string
	Kind      Kind
	// Line is the 1-based line where the test (its first decorator or
	// attribute) starts.
	Line int
	// Start and End are the test's byte range in the source.
	Start, End int
	// Text is the test's source, decorators and attributes included, with
	// comments blanked (newlines kept), so rewording a comment does not
	// change a test. A Go test's doc comment is not part of it.
	Text string
	// Skips are the markers that keep it from running or from counting:
	// its own and those inherited from its class, module or describe.
	Skips []Marker
}

// Marker is one skip, ignore, xfail or only in the source.
type Marker struct {
	Text string
	Line int
	// Only is true for it.only and friends: the marked test runs and every
	// other one in the file is skipped.
	Only bool
}

// reader is how one language's tests are read.
type reader struct {
	// tests returns the tests of one file.
	tests func(p string, src []byte) ([]Test, error)
	// code returns the file's code without comments, layout and inline
	// tests, or ok=false when it cannot be parsed.
	code func(p string, src []byte) (string, bool)
	// inline is true when tests live beside the code in ordinary source
	// files (Rust's #[test], Java's @Test), so every file is read for
	// tests, not only test paths.
	inline bool
}

func readerOf(p string) *reader {
	if path.Base(p) == "CMakeLists.txt" {
		return &reader{tests: noError(cmakeTests), code: cmakeCode}
	}
	if path.Base(p) == "meson.build" {
		return &reader{tests: noError(mesonTests), code: mesonCode}
	}
	switch path.Ext(p) {
	case ".go":
		return &reader{tests: goTests, code: goCode}
	case ".py":
		return &reader{tests: noError(pyTests), code: treeCode(pyGrammar, true)}
	case ".js", ".jsx", ".mjs", ".cjs":
		return &reader{tests: noError(jsTests(jsGrammar)), code: treeCode(jsGrammar, false)}
	case ".ts", ".mts", ".cts":
		return &reader{tests: noError(jsTests(tsGrammar)), code: treeCode(tsGrammar, false)}
	case ".tsx":
		return &reader{tests: noError(jsTests(tsxGrammar)), code: treeCode(tsxGrammar, false)}
	case ".rs":
		return &reader{tests: noError(rustTests), code: rustCode, inline: true}
	case ".java":
		return &reader{tests: noError(javaTests), code: treeCode(javaGrammar, false), inline: true}
	case ".rb":
		return &reader{tests: noError(rubyTests), code: treeCode(rubyGrammar, false)}
	case ".c", ".cc", ".cpp", ".cxx":
		return &reader{tests: noError(cppTests), code: cppCode}
	case ".php":
		return &reader{tests: noError(phpTests), code: treeCode(phpGrammar, false)}
	}
	return nil
}

func noError(f func(string, []byte) []Test) func(string, []byte) ([]Test, error) {
	return func(p string, src []byte) ([]Test, error) { return f(p, src), nil }
}

// Tests returns the tests a file declares that its runner collects and
// runs on linux/amd64, in source order. It returns none for a language it
// does not read, a file outside its language's test paths (where tests
// are not inline), test data, and a Go file that does not build here
// (Excluded). A Go file that does not compile as go test wants it (a
// syntax error, a test with the wrong signature, two TestMain) returns
// the tests it could read and the error go test would stop on; the other
// languages never fail, reading what parses.
func Tests(p string, src []byte) ([]Test, error) {
	if Excluded(p, src) != "" {
		return nil, nil
	}
	return Declared(p, src)
}

// Declared is Tests without Go's file rules: the tests a file declares
// whether or not it builds here, to tell where tests went that no longer
// run.
func Declared(p string, src []byte) ([]Test, error) {
	r := readerOf(p)
	if r == nil || src == nil || IsTestData(p) || (!r.inline && !IsTestPath(p)) {
		return nil, nil
	}
	if path.Base(p) == "conftest.py" {
		return nil, nil // pytest collects no tests from conftest.py
	}
	return r.tests(p, src)
}

// Code returns a file's code in a comparison form: comments and layout
// removed, and its inline tests (Rust's #[test] functions and #[cfg(test)]
// modules) left out, so two versions with equal Code differ only in
// comments, layout or tests. ok is false for a language it does not read
// or a version that does not parse.
func Code(p string, src []byte) (string, bool) {
	r := readerOf(p)
	if r == nil {
		return "", false
	}
	return r.code(p, src)
}

// IsTestPath reports whether a path holds tests or test support by the
// conventions of the runners we know (go test, pytest,
// Jest/Vitest/Mocha, cargo, Maven, RSpec, minitest, PHPUnit, CTest, meson test), so
// that it is not code under test.
// For Go it is the file name alone (_test.go); whether such a file builds
// here is Excluded's question.
func IsTestPath(p string) bool {
	base := path.Base(p)
	if hasDir(p, "testdata", "__snapshots__", "__tests__", "__mocks__", "fixtures") ||
		strings.HasSuffix(base, ".snap") || strings.HasSuffix(base, ".golden") {
		return true
	}
	switch path.Ext(p) {
	case ".go":
		return strings.HasSuffix(base, "_test.go")
	case ".py":
		// test.py and tests.py: a project's one test module, as unittest
		// discovers it and Django names an app's.
		return strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.py") || base == "conftest.py" ||
			base == "test.py" || base == "tests.py" || hasDir(p, "tests", "test")
	case ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts":
		return strings.Contains(base, ".test.") || strings.Contains(base, ".spec.") || hasDir(p, "test", "tests", "spec", "e2e")
	case ".rs":
		return hasDir(p, "tests", "benches") || base == "tests.rs"
	case ".rb":
		return strings.HasSuffix(base, "_spec.rb") || strings.HasSuffix(base, "_test.rb") || strings.HasPrefix(base, "test_") || hasDir(p, "spec", "test")
	case ".php":
		return strings.HasSuffix(base, "Test.php") || hasDir(p, "tests", "test")
	case ".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".txt", ".build": // .txt, .build: a test directory's CMakeLists.txt, meson.build
		stem := strings.TrimSuffix(base, path.Ext(base))
		return hasDir(p, "tests", "test") || strings.HasPrefix(stem, "test_") || strings.HasSuffix(stem, "_test") || strings.HasSuffix(stem, "_unittest")
	case ".java", ".kt":
		stem := strings.TrimSuffix(base, path.Ext(base))
		return strings.Contains("/"+p, "/src/test/") || strings.HasSuffix(stem, "Test") || strings.HasSuffix(stem, "Tests") ||
			strings.HasSuffix(stem, "IT") || (strings.HasPrefix(stem, "Test") && len(stem) > 4)
	}
	return false
}

// IsTestData reports whether a path holds what tests compare against or
// read (golden files, snapshots, fixtures, testdata, and data files in a
// test directory: inih's tests/baseline_multi.txt and tests/normal.ini)
// rather than test code. Runners collect no tests there: go test ignores
// testdata.
func IsTestData(p string) bool {
	base := path.Base(p)
	if hasDir(p, "test", "tests") && testDataExts[path.Ext(base)] && base != "CMakeLists.txt" {
		return true
	}
	return strings.HasSuffix(base, ".snap") || strings.HasSuffix(base, ".golden") || hasDir(p, "testdata", "__snapshots__", "fixtures")
}

// testDataExts are the extensions of the expected outputs and inputs
// tests keep beside them; a test directory's CMakeLists.txt is its build.
var testDataExts = map[string]bool{
	".txt": true, ".ini": true, ".json": true, ".yaml": true, ".yml": true, ".csv": true,
	".xml": true, ".dat": true, ".out": true, ".expected": true,
}

// hasDir reports whether a directory of p (not its base name) is one of
// names.
func hasDir(p string, names ...string) bool {
	for _, d := range strings.Split(path.Dir(p), "/") {
		for _, n := range names {
			if d == n {
				return true
			}
		}
	}
	return false
}
