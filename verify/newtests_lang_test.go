package verify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/verify/testsrc"
)

func TestOverlayable(t *testing.T) {
	for name, want := range map[string]bool{
		"tests/test_calc.py": true, "calc_test.py": true, "calc.py": false, "tests/conftest.py": true,
		"test/calc.js": true, "src/calc.test.ts": true, "src/__tests__/a.jsx": true, "src/calc.js": false, "spec/calc.spec.mjs": true,
		"tests/api.rs": true, "src/tests.rs": true, "src/lib.rs": false, "crates/a/tests/x.rs": true,
		"calc_test.go": true, "calc.go": false, "testdata/in.txt": true, "a/testdata/x.go": true,
		"tests/meson.build": true, "meson.build": false, "tests/CMakeLists.txt": true, "CMakeLists.txt": false,
	} {
		if overlayable(name) != want {
			t.Errorf("overlayable(%s) = %v", name, !want)
		}
	}
}

// hostSandbox runs commands with the host's shell in a directory, for
// the runners the offline Docker test image does not have (pytest, node,
// cargo): the real tools, just not in a container.
type hostSandbox struct {
	dir, path string
}

func (h hostSandbox) Exec(ctx context.Context, cmd sandbox.Command) (sandbox.Result, error) {
	c := exec.CommandContext(ctx, "/bin/sh", "-c", cmd.Script)
	c.Dir = h.dir
	c.Env = append(os.Environ(), "PATH="+h.path, "CARGO_TERM_COLOR=never", "NO_COLOR=1")
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	err := c.Run()
	var exit *exec.ExitError
	code := 0
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		return sandbox.Result{}, err
	}
	return sandbox.Result{ExitCode: code, Stdout: sandbox.Output{Head: out.Bytes(), Total: int64(out.Len())}}, nil
}
func (hostSandbox) DisableNetwork(context.Context) error { return nil }
func (hostSandbox) ID() string                           { return "host" }
func (hostSandbox) Close() error                         { return nil }

// hostRepo commits files as the base, then writes change over them, and
// returns the workspace, the base and the changed paths.
func hostRepo(t *testing.T, files, change map[string]string) (*sandbox.Workspace, BaseTree, []string) {
	t.Helper()
	dir := t.TempDir()
	write := func(m map[string]string) {
		for name, content := range m {
			p := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	write(files)
	git("init", "-q")
	git("add", "-A")
	git("commit", "-qm", "base")
	head := git("rev-parse", "HEAD")
	write(change)
	base := gitBase{dir: dir, commit: head}
	ws, err := sandbox.OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	var changed []string
	for name := range change {
		changed = append(changed, name)
	}
	slices.Sort(changed)
	return ws, base, changed
}

// needTool skips when the host lacks a runner these tests drive.
func needTool(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s is not installed (apt-get install python3-pytest mocha nodejs cargo)", path)
	}
}

// shimPath is a PATH whose `python` is Debian's python3 (which has
// pytest), ahead of the host's own.
func shimPath(t *testing.T) string {
	bin := t.TempDir()
	if err := os.Symlink("/usr/bin/python3", filepath.Join(bin, "python")); err != nil {
		t.Fatal(err)
	}
	return bin + ":" + os.Getenv("PATH")
}

func runNewTests(t *testing.T, ws *sandbox.Workspace, base BaseTree, changed []string) map[string]NewTestResult {
	t.Helper()
	return runNewTestsPath(t, ws, base, changed, shimPath(t))
}

func runNewTestsPath(t *testing.T, ws *sandbox.Workspace, base BaseTree, changed []string, path string) map[string]NewTestResult {
	t.Helper()
	d, err := Detect(ws, DetectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	found, err := FindNewTests(ws, base, changed, d)
	if err != nil {
		t.Fatal(err)
	}
	r := &Runner{Sandbox: hostSandbox{dir: ws.Dir(), path: path}, Checks: d.Checks}
	results, err := r.RunNewTestsOnBase(context.Background(), ws, base, found, changed)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]NewTestResult{}
	for _, res := range results {
		out[res.Name] = res
	}
	if _, err := os.Stat(filepath.Join(ws.Dir(), baseDir)); !os.IsNotExist(err) {
		t.Errorf("the original tree was left behind: %v", err)
	}
	return out
}

func wantStatuses(t *testing.T, got map[string]NewTestResult, want map[string]NewTestStatus) {
	t.Helper()
	for name, st := range want {
		if got[name].Status != st {
			t.Errorf("%s: %s (%s), want %s; command %q, output:\n%s", name, got[name].Status, got[name].Reason, st, got[name].Command, got[name].Output)
		}
	}
	if len(got) != len(want) {
		t.Errorf("found %d new tests, want %d: %v", len(got), len(want), got)
	}
}

func TestNewPythonTestsOnHost(t *testing.T) {
	needTool(t, "/usr/lib/python3/dist-packages/pytest")
	ws, base, changed := hostRepo(t, map[string]string{
		"pyproject.toml":     "[project]\nname = \"calc\"\nversion = \"0\"\n",
		"conftest.py":        "",
		"calc.py":            "def add(a, b):\n    return a - b\n",
		"tests/test_calc.py": "from calc import add\n\n\ndef test_old():\n    assert add(0, 0) == 0\n",
	}, map[string]string{
		"calc.py": "def add(a, b):\n    return a + b\n",
		"tests/test_calc.py": "from calc import add\n\n\ndef test_old():\n    assert add(0, 0) == 0\n\n\n" +
			"def test_add():\n    assert add(2, 3) == 5\n\n\nclass TestMore:\n    def test_zero(self):\n        assert add(1, 0) == 1\n",
	})
	got := runNewTests(t, ws, base, changed)
	wantStatuses(t, got, map[string]NewTestStatus{"test_add": FailsBefore, "TestMore::test_zero": PassesBefore})
	if c := got["test_add"].Command; !strings.Contains(c, "'tests/test_calc.py::test_add'") {
		t.Errorf("command %q does not select the node ID", c)
	}
}

func TestNewJSTestsOnHost(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	needTool(t, node)
	ws, base, changed := hostRepo(t, map[string]string{
		"package.json":      `{"name":"calc","scripts":{"test":"node --test"}}`,
		"calc.js":           "exports.add = (a, b) => a - b;\n",
		"test/calc.test.js": "const test = require('node:test');\nconst assert = require('node:assert');\nconst { add } = require('../calc');\n",
	}, map[string]string{
		"calc.js": "exports.add = (a, b) => a + b;\n",
		"test/calc.test.js": "const test = require('node:test');\nconst assert = require('node:assert');\nconst { add } = require('../calc');\n\n" +
			"test('adds two numbers', () => {\n  assert.strictEqual(add(2, 3), 5);\n});\n\n" +
			"test('adds zero', () => {\n  assert.strictEqual(add(0, 0), 0);\n});\n",
	})
	got := runNewTests(t, ws, base, changed)
	wantStatuses(t, got, map[string]NewTestStatus{"adds two numbers": FailsBefore, "adds zero": PassesBefore})
}

func TestNewRustTestsOnHost(t *testing.T) {
	cargo, err := exec.LookPath("cargo")
	if err != nil {
		t.Skip("cargo is not installed")
	}
	needTool(t, cargo)
	lib := "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n"
	ws, base, changed := hostRepo(t, map[string]string{
		"Cargo.toml":   "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"src/lib.rs":   lib,
		"tests/api.rs": "use calc::add;\n",
	}, map[string]string{
		"src/lib.rs": strings.Replace(lib, "a - b", "a + b", 1) +
			"\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn unit_adds() {\n        assert_eq!(super::add(1, 1), 2);\n    }\n}\n",
		"tests/api.rs": "use calc::add;\n\n#[test]\nfn adds_two() {\n    assert_eq!(add(2, 3), 5);\n}\n\n#[test]\nfn adds_zero() {\n    assert_eq!(add(0, 0), 0);\n}\n",
	})
	got := runNewTests(t, ws, base, changed)
	// Issue 27: the unit test in src/lib.rs runs too, its #[cfg(test)]
	// module laid over the original src/lib.rs.
	wantStatuses(t, got, map[string]NewTestStatus{"adds_two": FailsBefore, "adds_zero": PassesBefore, "unit_adds": FailsBefore})
}

func TestCannotShowWithoutProject(t *testing.T) {
	r := &Runner{Sandbox: hostSandbox{dir: t.TempDir(), path: "/usr/bin:/bin"}}
	res, err := r.runLangOnBase(context.Background(), []NewTest{{Name: "t", File: "x.test.js", Lang: LangJS, ID: "t"}})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Status != CannotShow || !strings.Contains(res[0].Reason, "no javascript project") {
		t.Errorf("result = %+v", res[0])
	}
	res, _ = r.runLangOnBase(context.Background(), []NewTest{{Name: "t", File: "test/x.test.js", Lang: LangJS, ID: "t", Dir: "."}})
	if res[0].Status != CannotShow || !strings.Contains(res[0].Reason, "runs no JavaScript test runner") {
		t.Errorf("unknown runner: %+v", res[0])
	}
}

// TestNewMochaTestsInSubprojectOnHost runs Debian's mocha from the
// workspace's node_modules/.bin for a project in a subdirectory, the way
// setup's `npm install` leaves it.
func TestNewMochaTestsInSubprojectOnHost(t *testing.T) {
	needTool(t, "/usr/share/nodejs/mocha/bin/mocha.js")
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	ws, base, changed := hostRepo(t, map[string]string{
		"go.mod":                "module example.com/m\n\ngo 1.22\n",
		"web/package.json":      `{"name":"web","scripts":{"test":"mocha"}}`,
		"web/calc.js":           "exports.add = (a, b) => a - b;\n",
		"web/test/calc.spec.js": "const assert = require('assert');\nconst { add } = require('../calc');\n",
	}, map[string]string{
		"web/calc.js": "exports.add = (a, b) => a + b;\n",
		"web/test/calc.spec.js": "const assert = require('assert');\nconst { add } = require('../calc');\n\n" +
			"describe('calc', function () {\n  it('adds two numbers', function () {\n    assert.strictEqual(add(2, 3), 5);\n  });\n" +
			"  it('adds zero', function () {\n    assert.strictEqual(add(0, 0), 0);\n  });\n});\n",
	})
	bin := filepath.Join(ws.Dir(), "web", "node_modules", ".bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/usr/share/nodejs/mocha/bin/mocha.js", filepath.Join(bin, "mocha")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("NODE_PATH", "/usr/share/nodejs") // Debian's mocha finds its own modules there
	// Only node on PATH: mocha must come from the workspace's
	// node_modules/.bin, not from the host's /usr/bin.
	only := t.TempDir()
	node, _ := exec.LookPath("node")
	if err := os.Symlink(node, filepath.Join(only, "node")); err != nil {
		t.Fatal(err)
	}
	got := runNewTestsPath(t, ws, base, changed, only)
	wantStatuses(t, got, map[string]NewTestStatus{"adds two numbers": FailsBefore, "adds zero": NotRunBefore})
	if c := got["adds zero"].Command; c != "PATH=../../../web/node_modules/.bin:../../../node_modules/.bin:$PATH mocha 'test/calc.spec.js'" {
		t.Errorf("command = %q", c)
	}
}

// TestNewPythonTestsEditableInstall: with the package importable from the
// workspace (as `pip install -e .` in setup leaves it, here through
// PYTHONPATH), the run on the original code must still import the
// original code, or every new test would seem to pass before the change.
func TestNewPythonTestsEditableInstall(t *testing.T) {
	needTool(t, "/usr/lib/python3/dist-packages/pytest")
	ws, base, changed := hostRepo(t, map[string]string{
		"pyproject.toml": "[project]\nname = \"calc\"\nversion = \"0\"\n",
		"src/calc.py":    "def add(a, b):\n    return a - b\n",
	}, map[string]string{
		"src/calc.py":        "def add(a, b):\n    return a + b\n",
		"tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
	})
	t.Setenv("PYTHONPATH", filepath.Join(ws.Dir(), "src"))
	got := runNewTests(t, ws, base, changed)
	wantStatuses(t, got, map[string]NewTestStatus{"test_add": FailsBefore})
}

// TestNewGoTestsInNestedModuleOnHost: a new test in a module below the
// root runs from that module's directory in the original tree.
func TestNewGoTestsInNestedModuleOnHost(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not on PATH")
	}
	ws, base, changed := hostRepo(t, map[string]string{
		"api/go.mod":       "module example.com/api\n\ngo 1.22\n",
		"api/calc/calc.go": "package calc\n\nfunc Add(a, b int) int { return a - b }\n",
	}, map[string]string{
		"api/calc/calc.go":      "package calc\n\nfunc Add(a, b int) int { return a + b }\n",
		"api/calc/calc_test.go": addTest,
	})
	got := runNewTestsPath(t, ws, base, changed, os.Getenv("PATH"))
	wantStatuses(t, got, map[string]NewTestStatus{"TestAdd": FailsBefore})
	if c := got["TestAdd"].Command; c != "cd api && go test -count=1 -v -run '^(TestAdd)$' ./calc" {
		t.Errorf("command = %q", c)
	}
}

// TestMesonNewTestCommand: new Meson tests are run by name after the
// original tree is configured and built, and found in the JUnit report
// under the project's name.
func TestMesonNewTestCommand(t *testing.T) {
	tests := []NewTest{{Dir: ".", File: "tests/meson.build", Lang: LangCTest, Kind: KindMeson, Name: "percent_part", ID: "percent_part"},
		{Dir: ".", File: "tests/meson.build", Lang: LangCTest, Kind: KindMeson, Name: "it's", ID: "it's"}}
	got := reportedCommand(KindMeson, tests, "")
	want := `meson setup builddir >/dev/null && meson compile -C builddir && meson test -C builddir --print-errorlogs 'percent_part' 'it'\''s'`
	if got != want {
		t.Errorf("command:\n got %s\nwant %s", got, want)
	}
	if why := cannotShowWhy(tests[0]); why != "" {
		t.Errorf("cannot show: %s", why)
	}
	s := parseReport(KindMeson, []byte(outputFixture(t, "meson_fail.junit.xml")))
	for name, want := range map[string]NewTestStatus{"fails": FailsBefore, "passes": PassesBefore, "absent": NotRunBefore} {
		nt := NewTest{Lang: LangCTest, Kind: KindMeson, Name: name, ID: name}
		if got, _ := classifyReported(nt, 1, "", s); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
}

// TestPHPUnitNamespacedNames: PHPUnit's JUnit report writes a namespaced
// class with dots, the tests' names as PHP spells them use backslashes:
// both name the same test.
func TestPHPUnitNamespacedNames(t *testing.T) {
	report := `<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="Html2Text\HtmlCharsTest" tests="3" assertions="3" errors="0" failures="1" skipped="0">
    <testcase name="testLaquoAndRaquo" class="Html2Text\HtmlCharsTest" classname="Html2Text.HtmlCharsTest" assertions="1" time="0.01">
      <failure type="PHPUnit\Framework\ExpectationFailedException">Failed asserting that two strings are identical.</failure>
    </testcase>
    <testcase name="testNbsp" class="Html2Text\HtmlCharsTest" classname="Html2Text.HtmlCharsTest" assertions="1" time="0.01"/>
    <testcase name="testSymbols with data set #0" class="Html2Text\HtmlCharsTest" classname="Html2Text.HtmlCharsTest" assertions="1" time="0.01">
      <failure type="PHPUnit\Framework\ExpectationFailedException">no</failure>
    </testcase>
  </testsuite>
</testsuites>`
	s := parseReport(KindPHPUnit, []byte(report))
	if s == nil {
		t.Fatal("no summary from the report")
	}
	for name, want := range map[string]NewTestStatus{
		"HtmlCharsTest::testLaquoAndRaquo": FailsBefore,
		"HtmlCharsTest::testNbsp":          PassesBefore,
		"HtmlCharsTest::testSymbols":       FailsBefore,
		"OtherTest::testNbsp":              NotRunBefore,
		"CharsTest::testNbsp":              NotRunBefore, // a suffix of the class is another class
	} {
		nt := NewTest{Lang: LangPHP, Kind: KindPHPUnit, Name: name}
		if got, _ := classifyReported(nt, 1, "", s); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
}

// TestPHPUnitNewTestCommandOnOriginalTree: the original tree has no
// vendor/, so the image's phpunit runs the new tests there.
func TestPHPUnitNewTestCommandOnOriginalTree(t *testing.T) {
	tests := []NewTest{{Dir: ".", File: "test/HtmlCharsTest.php", Lang: LangPHP, Kind: KindPHPUnit, Name: "HtmlCharsTest::testNbsp", ID: "testNbsp"}}
	got := reportedCommand(KindPHPUnit, tests, "vendor/bin/phpunit --log-junit "+phpunitXMLPath)
	want := "phpunit --log-junit " + phpunitXMLPath + ` --filter '/::(testNbsp)( |$)/' 'test/HtmlCharsTest.php'`
	if got != want {
		t.Errorf("command:\n got %s\nwant %s", got, want)
	}
}

// TestMakeNewTestCannotBeShownAlone: a Make project's new test program
// (its own main, no test framework) is a new test, and the body says why
// it cannot be run alone on the original code; a deleted one is not.
func TestMakeNewTestCannotBeShownAlone(t *testing.T) {
	files := map[string]string{
		"Makefile":           "TESTS = tests/test_a\n\ntest: $(TESTS)\n\tfor t in $(TESTS); do ./$$t || exit 1; done\n",
		"src/num.c":          "int one(void) { return 2; }\n",
		"tests/test_a.c":     "int main(void) { return 0; }\n",
		"tests/test_gone.c":  "int main(void) { return 0; }\n",
		"tests/test_still.c": "int main(void) { return 0; }\n",
	}
	ws, base, _ := hostRepo(t, files, map[string]string{
		"src/num.c":         "int one(void) { return 1; }\n",
		"tests/test_one.c":  "int main(void) { return one() != 1; }\n",
		"tests/test_a.c":    "int main(void) { return 1 - 1; }\n",
		"tests/test_gone.c": "",
	})
	if err := os.Remove(filepath.Join(ws.Dir(), "tests/test_gone.c")); err != nil {
		t.Fatal(err)
	}
	d, err := Detect(ws, DetectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	found, err := FindNewTests(ws, base, []string{"src/num.c", "tests/test_a.c", "tests/test_gone.c", "tests/test_one.c"}, d)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range found {
		got = append(got, fmt.Sprintf("%s added=%v", n.Name, n.Added))
		if why := cannotShowWhy(n); !strings.Contains(why, "the Makefile's test target builds and runs its tests together") {
			t.Errorf("%s: cannot show %q", n.Name, why)
		}
	}
	if want := []string{"tests/test_a.c added=false", "tests/test_one.c added=true"}; !slices.Equal(got, want) {
		t.Errorf("new tests %q, want %q", got, want)
	}
}

// TestTestUnitDescribedNames: test-unit defines `test "nil title" do` as
// the method "test: nil title", so a new test of that form is named, run
// alone (-n) and read back by that name; minitest's form stays
// test_nil_title.
func TestTestUnitDescribedNames(t *testing.T) {
	src := testsrc.Test{Name: "SlugTest#test_nil_title", Short: "test_nil_title", Described: "nil title"}
	for kind, want := range map[TestKind]string{KindTestUnit: "SlugTest#test: nil title", KindMinitest: "SlugTest#test_nil_title"} {
		nt := NewTest{File: "test/slug_test.rb", Lang: LangRuby, Kind: kind}
		nameTest(&nt, found{Test: src}, LangRuby)
		if nt.Name != want || nt.ID != want {
			t.Errorf("%s: name %q id %q, want %q", kind, nt.Name, nt.ID, want)
		}
	}
	nt := NewTest{File: "test/slug_test.rb", Lang: LangRuby, Kind: KindTestUnit}
	nameTest(&nt, found{Test: src}, LangRuby)
	cmd := reportedCommand(KindTestUnit, []NewTest{nt}, "bundle exec "+minitestRunner)
	if want := `bundle exec ruby -Ilib -Itest 'test/slug_test.rb' -v -n '/^(test: nil title)$/'`; cmd != want {
		t.Errorf("command %q, want %q", cmd, want)
	}
	out := "SlugTest: \n  test: nil title:\t\t\tE\n===\nError: test: nil title(SlugTest): NoMethodError: undefined method `downcase' for nil\n" +
		"1 tests, 0 assertions, 0 failures, 1 errors, 0 pendings, 0 omissions, 0 notifications\n"
	if status, _ := classifyReported(nt, 1, out, parseTestUnit(outputLines(out))); status != FailsBefore {
		t.Errorf("status %s, want %s", status, FailsBefore)
	}
}
