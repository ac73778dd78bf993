package pipeline

import (
	"slices"
	"strings"
	"testing"
)

// TestCommandOutput is the rule for which files the model's commands
// added are left out of the commit.
func TestCommandOutput(t *testing.T) {
	cBase := []string{"Makefile", "README", "include/num.h", "src/num.c", "tests/test_sum.c", "tests/check.h"}
	pyBase := []string{"pyproject.toml", "pkg/__init__.py", "tests/test_pkg.py"}
	withBuild := []string{"build/config.sh", "gen/parser.go", "lib/vendored.so", "vendor/x/.coverage", "tools/fixture", "main.go"}
	for _, tc := range []struct {
		base      []string
		binBase   []string // base paths that are binary
		path      string
		binary    bool
		leftOut   bool
		wantInWhy string
	}{
		// C: executables a test target builds, objects, libraries.
		{base: cBase, path: "tests/test_sum", binary: true, leftOut: true, wantInWhy: "binary"},
		{base: cBase, path: "src/num.o", binary: true, leftOut: true, wantInWhy: "`.o`"},
		{base: cBase, path: "libnum.a", leftOut: true, wantInWhy: "`.a`"},
		{base: cBase, path: "tests/test_new.c", leftOut: false},
		{base: cBase, path: "NOTES", leftOut: false},
		// An extensionless binary stays where the base tracks one.
		{base: withBuild, binBase: []string{"tools/fixture"}, path: "tools/fixture2", binary: true, leftOut: false},
		{base: withBuild, path: "tools/fixture2", binary: true, leftOut: true},
		// Python caches and coverage.
		{base: pyBase, path: "pkg/__pycache__/__init__.cpython-311.pyc", binary: true, leftOut: true, wantInWhy: "`__pycache__/`"},
		{base: pyBase, path: ".pytest_cache/v/cache/nodeids", leftOut: true},
		{base: pyBase, path: "shout.egg-info/PKG-INFO", leftOut: true},
		{base: pyBase, path: ".coverage", binary: true, leftOut: true, wantInWhy: "`.coverage`"},
		{base: pyBase, path: "htmlcov/index.html", leftOut: true},
		{base: pyBase, path: "pkg/generated.py", leftOut: false},
		{base: pyBase, path: "pkg/data.bin", binary: true, leftOut: true, wantInWhy: "`.bin`"},
		// PHP, Node, Rust, Java.
		{base: []string{"composer.json", "src/A.php"}, path: ".phpunit.result.cache", leftOut: true},
		{base: []string{"package.json", "index.js"}, path: "node_modules/left-pad/index.js", leftOut: true},
		{base: []string{"Cargo.toml", "src/lib.rs"}, path: "target/debug/deps/lib.d", leftOut: true},
		{base: []string{"pom.xml", "src/A.java"}, path: "src/A.class", binary: true, leftOut: true},
		// A kind the repository tracks stays: the same directory, extension
		// or name.
		{base: withBuild, path: "build/out.txt", leftOut: false},
		{base: withBuild, path: "lib/other.so", binary: true, leftOut: false},
		{base: withBuild, path: "gen/lexer.go", leftOut: false},
		{base: withBuild, path: "pkg/.coverage", binary: true, leftOut: false},
		{base: []string{"docs/logo.png"}, path: "docs/icon.png", binary: true, leftOut: false},
		// A build directory elsewhere than the tracked one is still one.
		{base: withBuild, path: "sub/build/x.txt", leftOut: true},
	} {
		tr := newTracked(tc.base, func(ps []string) bool {
			return slices.ContainsFunc(ps, func(p string) bool { return slices.Contains(tc.binBase, p) })
		})
		why := commandOutput(tc.path, tc.binary, tr)
		if (why != "") != tc.leftOut {
			t.Errorf("%s (binary %v) over %q: left out %v (%q), want %v", tc.path, tc.binary, tc.base, why != "", why, tc.leftOut)
		}
		if !strings.Contains(why, tc.wantInWhy) {
			t.Errorf("%s: why %q lacks %q", tc.path, why, tc.wantInWhy)
		}
	}
}

// TestTrackedAsksForBinariesOnce: the base's extensionless files are read
// once, and only when a file needs it.
func TestTrackedAsksForBinariesOnce(t *testing.T) {
	var asked [][]string
	tr := newTracked([]string{"Makefile", "a/LICENSE", "a/b.c"}, func(ps []string) bool {
		asked = append(asked, ps)
		return false
	})
	commandOutput("a/b.o", true, tr)
	if len(asked) != 0 {
		t.Fatalf("asked %q for a file with an extension", asked)
	}
	commandOutput("x", true, tr)
	commandOutput("y", true, tr)
	if len(asked) != 1 || !slices.Equal(asked[0], []string{"Makefile", "a/LICENSE"}) {
		t.Errorf("asked %q, want once for the extensionless files", asked)
	}
}

// TestSetupEnvChange: any change in a .venv the base tracks nothing in
// is setup's environment, left out; a tracked one, or another output
// directory, is not (commandOutput judges those, for added files only).
func TestSetupEnvChange(t *testing.T) {
	untracked := newTracked([]string{"pkg/a.py"}, func([]string) bool { return false })
	trackedVenv := newTracked([]string{".venv/bin/activate"}, func([]string) bool { return false })
	for _, tc := range []struct {
		path string
		t    tracked
		out  bool
	}{
		{".venv/bin/python", untracked, true},
		{"sub/.venv/lib/python3.11/site-packages/x.pth", untracked, true},
		{".venv/bin/python", trackedVenv, false},
		{"pkg/__pycache__/a.pyc", untracked, false},
		{"venv.py", untracked, false},
	} {
		if got := setupEnvChange(tc.path, tc.t) != ""; got != tc.out {
			t.Errorf("setupEnvChange(%q) left out = %v, want %v", tc.path, got, tc.out)
		}
	}
}

// TestLeftOutFinding: one finding per output directory, counting its
// files; one per file elsewhere.
func TestLeftOutFinding(t *testing.T) {
	for _, tc := range []struct {
		l    leftOut
		want string
	}{
		{leftOut{path: "tests/test_sum", why: "it is binary", files: 1}, "This file, made by the model's commands rather than its file tools, was left out of the commit and of the final checks: it is binary."},
		{leftOut{path: ".venv/", why: "w", files: 2, dir: true, setup: true}, "2 files here, added, changed or deleted by the model, was left out of the commit and of the final checks: w."},
		{leftOut{path: "pkg/__pycache__/", why: "w", files: 1, dir: true}, "1 file here, made by"},
		{leftOut{path: "pkg/__pycache__/", why: "w", files: 3, dir: true}, "3 files here, made by"},
	} {
		f := tc.l.finding()
		if f.Kind != KindCommandOutput || f.Path != tc.l.path || !strings.HasPrefix(f.Detail, tc.want) {
			t.Errorf("%+v: finding %+v, want detail starting %q", tc.l, f, tc.want)
		}
	}
	if got := outputDirOf("a/node_modules/b/node_modules/c.js"); got != "a/node_modules" {
		t.Errorf("outputDirOf = %q, want the outermost a/node_modules", got)
	}
}
