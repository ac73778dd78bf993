package findings

import (
	"path"
	"strings"
)

// testCase is one test as its language's parser sees it.
type testCase struct {
	// Name is qualified by its enclosing class, module or describe block,
	// so two tests of one name in different groups stay apart.
	Name string
	// Short is the test's own name, the part a rename changes.
	Short string
	// Line is the 1-based line where the test (its first decorator or
	// attribute) starts.
	Line int
	// Text is the test's whole source, decorators and attributes included.
	Text string
	// Skips are the markers that keep it from running or from counting:
	// its own and those inherited from its class, module or describe.
	Skips []marker
}

// marker is one skip, ignore, xfail or only in the source.
type marker struct {
	Text string
	Line int
	// Only is true for it.only and friends: the marked test runs and every
	// other one in the file is skipped.
	Only bool
}

// lang says how one language's tests are read.
type lang struct {
	name string
	// tests returns the tests of one file; src is never nil.
	tests func(p string, src []byte) []testCase
	// code returns the file's code with comments and layout removed, or
	// ok=false when it cannot be parsed; inline tests (Rust) are left out.
	code func(p string, src []byte) (string, bool)
	// inline is true when tests live beside the code in ordinary source
	// files (Rust's #[test], Java's @Test), so every file is read for
	// tests, not only test paths.
	inline bool
}

var langs = map[string]*lang{}

func register(l *lang, exts ...string) {
	for _, e := range exts {
		langs[e] = l
	}
}

func init() {
	register(&lang{name: "go", tests: goTests, code: goCode}, ".go")
	register(&lang{name: "python", tests: pyTests, code: treeCode(pyGrammar, true)}, ".py")
	register(&lang{name: "javascript", tests: jsTests(jsGrammar), code: treeCode(jsGrammar, false)}, ".js", ".jsx", ".mjs", ".cjs")
	register(&lang{name: "typescript", tests: jsTests(tsGrammar), code: treeCode(tsGrammar, false)}, ".ts", ".mts", ".cts")
	register(&lang{name: "tsx", tests: jsTests(tsxGrammar), code: treeCode(tsxGrammar, false)}, ".tsx")
	register(&lang{name: "rust", tests: rustTests, code: rustCode, inline: true}, ".rs")
	register(&lang{name: "java", tests: javaTests, code: treeCode(javaGrammar, false), inline: true}, ".java")
}

// langOf returns the language of a path, or nil.
func langOf(p string) *lang {
	return langs[path.Ext(p)]
}

// testsOf returns the tests of one version of a file (nil for a missing
// version or a file whose language keeps tests only in test paths).
func testsOf(p string, src []byte) []testCase {
	l := langOf(p)
	if l == nil || src == nil || isExpectedData(p) || (!l.inline && !isTestPath(p)) {
		return nil
	}
	return l.tests(p, src)
}

// isTestPath reports whether a path holds tests or test data by the
// conventions of the runners we know: go test, pytest, Jest/Vitest/Mocha,
// cargo and Maven.
func isTestPath(p string) bool {
	base := path.Base(p)
	dirs := strings.Split(path.Dir(p), "/")
	hasDir := func(names ...string) bool {
		for _, d := range dirs {
			for _, n := range names {
				if d == n {
					return true
				}
			}
		}
		return false
	}
	switch {
	case hasDir("testdata", "__snapshots__", "__tests__", "__mocks__", "fixtures"):
		return true
	case strings.HasSuffix(base, ".snap"), strings.HasSuffix(base, ".golden"):
		return true
	}
	switch path.Ext(p) {
	case ".go":
		return strings.HasSuffix(base, "_test.go")
	case ".py":
		return strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.py") || base == "conftest.py" || hasDir("tests", "test")
	case ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts":
		return strings.Contains(base, ".test.") || strings.Contains(base, ".spec.") || hasDir("test", "tests", "spec", "e2e")
	case ".rs":
		return hasDir("tests", "benches")
	case ".java", ".kt":
		stem := strings.TrimSuffix(base, path.Ext(base))
		return strings.Contains("/"+p, "/src/test/") || strings.HasSuffix(stem, "Test") || strings.HasSuffix(stem, "Tests") ||
			strings.HasSuffix(stem, "IT") || (strings.HasPrefix(stem, "Test") && len(stem) > 4)
	}
	return false
}

// isExpectedData reports whether a path holds what tests compare against
// or read (golden files, snapshots, fixtures, testdata) rather than test
// code. Runners do not collect tests there: go test ignores testdata.
func isExpectedData(p string) bool {
	base := path.Base(p)
	if strings.HasSuffix(base, ".snap") || strings.HasSuffix(base, ".golden") {
		return true
	}
	for _, d := range strings.Split(path.Dir(p), "/") {
		switch d {
		case "testdata", "__snapshots__", "fixtures":
			return true
		}
	}
	return false
}

// isDocPath reports whether a path is prose that cannot change behaviour.
func isDocPath(p string) bool {
	base := strings.ToLower(path.Base(p))
	switch path.Ext(base) {
	case ".md", ".markdown", ".rst", ".adoc":
		return true
	case ".txt":
		return !strings.HasPrefix(base, "requirements")
	}
	for _, n := range []string{"license", "licence", "changelog", "authors", "notice", "copying"} {
		if strings.HasPrefix(base, n) {
			return true
		}
	}
	return strings.HasPrefix(p, "docs/") || strings.HasPrefix(p, "doc/")
}
