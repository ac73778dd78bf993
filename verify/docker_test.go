package verify

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/docker"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// dockerEnv is one real sandbox (docker.Docker on the offline test image)
// over one workspace directory, shared by the scenarios of
// TestDockerRunner in turn: the Go build cache lives in the sandbox's
// HOME, so the standard library is compiled once, not once per scenario.
type dockerEnv struct {
	dir string
	sb  sandbox.Sandbox
}

func newDockerEnv(t *testing.T) *dockerEnv {
	t.Helper()
	d := sandboxtest.NewDocker(t, docker.Options{})
	dir := sandboxtest.Workspace(t)
	sb := sandboxtest.New(t, d, sandbox.Spec{Workspace: dir})
	return &dockerEnv{dir: dir, sb: sb}
}

// fixture is a small git repository created for one test.
type fixture struct {
	t    *testing.T
	dir  string
	sb   sandbox.Sandbox
	base string // the commit the change starts from
}

// newFixture empties the shared workspace and makes it a fresh git
// repository holding files, committed as the base.
func newFixture(t *testing.T, env *dockerEnv, files map[string]string) *fixture {
	t.Helper()
	entries, err := os.ReadDir(env.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(env.dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	f := &fixture{t: t, dir: env.dir, sb: env.sb}
	f.write(files)
	f.git("init", "-q")
	f.git("add", "-A")
	f.git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "base")
	f.base = strings.TrimSpace(f.git("rev-parse", "HEAD"))
	sandboxtest.HandOver(t, f.dir)
	return f
}

func (f *fixture) write(files map[string]string) {
	f.t.Helper()
	for name, content := range files {
		p := filepath.Join(f.dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			f.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o666); err != nil {
			f.t.Fatal(err)
		}
	}
}

func (f *fixture) git(args ...string) string {
	f.t.Helper()
	out, err := exec.Command("git", append([]string{"-c", "safe.directory=*", "-C", f.dir}, args...)...).CombinedOutput()
	if err != nil {
		f.t.Fatalf("git %v: %v: %s", args, err, out)
	}
	return string(out)
}

func (f *fixture) workspace() *sandbox.Workspace {
	f.t.Helper()
	ws, err := sandbox.OpenWorkspace(f.dir)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { ws.Close() })
	return ws
}

// runner detects the checks and returns a runner over a fresh sandbox,
// with every result recorded.
func (f *fixture) runner(rec *memRecorder) *Runner {
	f.t.Helper()
	d, err := Detect(f.workspace(), DetectOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return &Runner{Sandbox: f.sb, Checks: d.Checks, Recorder: rec, Timeout: 5 * time.Minute}
}

type memRecorder struct{ results []CheckResult }

func (m *memRecorder) RecordCheck(_ context.Context, r CheckResult) error {
	m.results = append(m.results, r)
	return nil
}

func (f *fixture) run(r *Runner, phase Phase) []CheckResult {
	f.t.Helper()
	res, err := r.Run(context.Background(), phase)
	if err != nil {
		f.t.Fatalf("%s run: %v", phase, err)
	}
	return res
}

func byName(rs []CheckResult, name string) CheckResult {
	for _, r := range rs {
		if r.Name == name {
			return r
		}
	}
	return CheckResult{}
}

const gomod = "module example.com/calc\n\ngo 1.22\n"

const calcGood = "package calc\n\nfunc Add(a, b int) int { return a + b }\n\nfunc Sub(a, b int) int { return a - b }\n"

const calcBuggy = "package calc\n\nfunc Add(a, b int) int { return a - b }\n\nfunc Sub(a, b int) int { return a + b }\n"

const addTest = "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Fatalf(\"Add(2, 3) = %d, want 5\", got)\n\t}\n}\n"

func scenarioPreexistingFailure(t *testing.T, env *dockerEnv) {
	f := newFixture(t, env, map[string]string{"go.mod": gomod, "calc.go": calcBuggy, "calc_test.go": addTest})
	r := f.runner(&memRecorder{})
	baseline := f.run(r, Baseline)
	bt := byName(baseline, "test")
	if !bt.Ran || bt.Passed || bt.Flaky || bt.Runs != 3 || bt.Failures != 3 {
		t.Fatalf("baseline test = %+v, want a failure on all 3 runs", bt)
	}
	if got := bt.GoTests().FailedTestNames(); len(got) != 1 || got[0] != "TestAdd" {
		t.Errorf("failing tests = %v, want [TestAdd]", got)
	}
	if !strings.Contains(bt.RerunCommand, "-run '^(TestAdd)$' example.com/calc") {
		t.Errorf("rerun command %q does not target TestAdd", bt.RerunCommand)
	}
	f.write(map[string]string{"README.md": "docs only\n"})
	final := f.run(r, Final)
	got, reason := Decide(OutcomeInput{FilesChanged: 1, Baseline: baseline, Final: final})
	if got != Unverified || !strings.Contains(reason, "already failing") {
		t.Errorf("outcome = %s (%s), want unverified because already failing", got, reason)
	}
}

func scenarioBuildBreak(t *testing.T, env *dockerEnv) {
	f := newFixture(t, env, map[string]string{"go.mod": gomod, "calc.go": calcGood, "calc_test.go": addTest})
	rec := &memRecorder{}
	r := f.runner(rec)
	baseline := f.run(r, Baseline)
	for _, c := range baseline {
		if !c.Passed {
			t.Fatalf("baseline %s failed: %s", c.Name, c.Output)
		}
	}
	f.write(map[string]string{"calc.go": "package calc\n\nfunc Add(a, b int) int { return a + }\n"})
	final := f.run(r, Final)
	if b := byName(final, "build"); b.Passed || !strings.Contains(b.Output, "calc.go:3") {
		t.Errorf("final build = %+v, want a failure naming calc.go:3", b)
	}
	for _, name := range []string{"vet", "test"} {
		if c := byName(final, name); c.Ran || c.NotRunReason != "build failed" {
			t.Errorf("final %s = %+v, want not run because build failed", name, c)
		}
	}
	got, reason := Decide(OutcomeInput{FilesChanged: 1, Baseline: baseline, Final: final})
	if got != Failed || !strings.Contains(reason, "build") {
		t.Errorf("outcome = %s (%s), want failed on build", got, reason)
	}
	if len(rec.results) != 6 {
		t.Errorf("recorded %d results, want 6 (3 checks × 2 phases)", len(rec.results))
	}
}

func scenarioFixVerified(t *testing.T, env *dockerEnv) {
	f := newFixture(t, env, map[string]string{"go.mod": gomod, "calc.go": calcBuggy, "calc_test.go": addTest})
	r := f.runner(&memRecorder{})
	baseline := f.run(r, Baseline)
	if byName(baseline, "test").Passed {
		t.Fatal("baseline test passed on buggy code")
	}
	f.write(map[string]string{"calc.go": calcGood})
	final := f.run(r, Final)
	got, reason := Decide(OutcomeInput{FilesChanged: 1, Baseline: baseline, Final: final})
	if got != Verified {
		t.Errorf("outcome = %s (%s), want verified; final: %+v", got, reason, final)
	}
	if ft := byName(final, "test"); ft.GoTests() == nil || len(ft.GoTests().PackagesOK) != 1 {
		t.Errorf("final test summary = %+v, want one ok package", ft.GoTests())
	}
}

// flakyTest fails on every other run, counting runs in a file under /tmp,
// which lives as long as the container (no other scenario uses the name).
const flakyTest = `package calc

import (
	"os"
	"strconv"
	"testing"
)

func TestFlaky(t *testing.T) {
	const counter = "/tmp/flaky-counter"
	data, _ := os.ReadFile(counter)
	n, _ := strconv.Atoi(string(data))
	if err := os.WriteFile(counter, []byte(strconv.Itoa(n+1)), 0o666); err != nil {
		t.Fatal(err)
	}
	if n%2 == 0 {
		t.Fatalf("run %d fails", n)
	}
}
`

func scenarioFlaky(t *testing.T, env *dockerEnv) {
	f := newFixture(t, env, map[string]string{"go.mod": gomod, "calc.go": calcGood, "calc_test.go": addTest})
	r := f.runner(&memRecorder{})
	f.write(map[string]string{"flaky_test.go": flakyTest})
	final := f.run(r, Final)
	ft := byName(final, "test")
	if ft.Passed || !ft.Flaky || ft.Runs != 3 || ft.Failures != 2 {
		t.Fatalf("final test = %+v, want flaky with 2 of 3 runs failed", ft)
	}
	if ft.RunsText() != "2 of 3 runs failed" {
		t.Errorf("RunsText = %q", ft.RunsText())
	}
	if !strings.Contains(ft.RerunCommand, "'^(TestFlaky)$'") {
		t.Errorf("rerun %q is not limited to TestFlaky", ft.RerunCommand)
	}
	got, reason := Decide(OutcomeInput{FilesChanged: 1, Baseline: []CheckResult{pass("build", Baseline), pass("vet", Baseline), pass("test", Baseline)}, Final: final})
	if got != Unverified || !strings.Contains(reason, "flaky") {
		t.Errorf("outcome = %s (%s), want unverified because flaky", got, reason)
	}
}

func scenarioNewTests(t *testing.T, env *dockerEnv) {
	f := newFixture(t, env, map[string]string{"go.mod": gomod, "calc.go": calcBuggy, "calc_test.go": addTest})
	ws := f.workspace()
	r := f.runner(&memRecorder{})
	// The change fixes Sub and adds two tests: TestSub fails on the old
	// code, TestAddZero passes on it too. TestAdd is unchanged.
	newTests := addTest + `
func TestSub(t *testing.T) {
	if got := Sub(5, 3); got != 2 {
		t.Fatalf("Sub(5, 3) = %d, want 2", got)
	}
}

func TestAddZero(t *testing.T) {
	if got := Add(0, 0); got != 0 {
		t.Fatal(got)
	}
}
`
	f.write(map[string]string{"calc.go": calcGood, "calc_test.go": newTests})
	changed := []string{"calc.go", "calc_test.go"}
	base := gitBase{dir: f.dir, commit: f.base}
	found, err := FindNewGoTests(ws, base, changed)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 2 || found[0].Name != "TestAddZero" || found[1].Name != "TestSub" || !found[0].Added {
		t.Fatalf("new tests = %+v, want TestAddZero and TestSub, added", found)
	}
	results, err := r.RunNewTestsOnBase(context.Background(), ws, base, found, changed)
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]NewTestStatus{}
	for _, res := range results {
		status[res.Name] = res.Status
	}
	if status["TestSub"] != FailsBefore || status["TestAddZero"] != PassesBefore {
		t.Errorf("statuses = %v, want TestSub fails_before and TestAddZero passes_before; output:\n%s", status, results[0].Output)
	}
	if _, err := os.Stat(filepath.Join(f.dir, baseDir)); !os.IsNotExist(err) {
		t.Errorf("the original tree was left in the workspace: %v", err)
	}
	if out := f.git("status", "--porcelain"); strings.Contains(out, "patchwright") {
		t.Errorf("git status shows the original tree: %s", out)
	}
}

func scenarioNoChecks(t *testing.T, env *dockerEnv) {
	f := newFixture(t, env, map[string]string{"README.md": "just words\n"})
	d, err := Detect(f.workspace(), DetectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := &Runner{Sandbox: f.sb, Checks: d.Checks}
	final := f.run(r, Final)
	got, reason := Decide(OutcomeInput{FilesChanged: 1, Final: final})
	if got != Unverified || !strings.Contains(reason, "no verification check") {
		t.Errorf("outcome = %s (%s), want unverified with no check", got, reason)
	}
	if len(d.Missing) == 0 || !strings.Contains(d.Missing[0], "No build or test command") {
		t.Errorf("Missing = %q", d.Missing)
	}
}

// scenarioCouldNotRun: a check whose program the image lacks could not
// run. That is said once, never as a failing test, and the Go checks of
// the same repository still run.
func scenarioCouldNotRun(t *testing.T, env *dockerEnv) {
	f := newFixture(t, env, map[string]string{"go.mod": gomod, "calc.go": calcGood, "calc_test.go": addTest})
	r := f.runner(&memRecorder{})
	r.Checks = append(r.Checks, Check{Name: "lint", Run: "patchwright-no-such-linter --check ."})
	baseline := f.run(r, Baseline)
	f.write(map[string]string{"README.md": "docs\n"})
	final := f.run(r, Final)
	lint := byName(final, "lint")
	if !lint.CouldNotRun || lint.Ran || lint.Runs != 1 || lint.ExitCode != 127 || lint.NotRunReason != "`patchwright-no-such-linter` not found in the image" {
		t.Fatalf("lint check = %+v, want could not run once: not found", lint)
	}
	if gt := byName(final, "test"); !gt.Passed || gt.Summary == nil {
		t.Errorf("go test = %+v, want passed with a summary", gt)
	}
	got, reason := Decide(OutcomeInput{FilesChanged: 1, Baseline: baseline, Final: final})
	if got != Unverified || !strings.Contains(reason, "lint could not run: `patchwright-no-such-linter` not found in the image") {
		t.Errorf("outcome = %s (%s), want unverified because the linter is missing", got, reason)
	}
}

// scenarioOtherRunners runs detected pytest and node:test checks in the
// sandbox (the test image has both): their summaries are read by their
// own parsers, a fix is verified, and an empty pytest project ran no
// tests.
func scenarioOtherRunners(t *testing.T, env *dockerEnv) {
	if out, err := env.sb.Exec(context.Background(), sandbox.Command{Script: "command -v python && command -v node", Timeout: time.Minute}); err != nil || out.ExitCode != 0 {
		t.Skip("the sandbox image has no python or node; build it with testdata/sandbox-image/build.sh")
	}
	f := newFixture(t, env, map[string]string{
		"pytest.ini":         "[pytest]\n",
		"conftest.py":        "",
		"calc.py":            "def add(a, b):\n    return a - b\n",
		"tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n",
		"package.json":       `{"name":"calc","scripts":{"test":"node --test"}}`,
		"calc.js":            "exports.add = (a, b) => a - b;\n",
		"test/calc.test.js": "const test = require('node:test');\nconst assert = require('node:assert');\nconst { add } = require('../calc');\n\n" +
			"test('adds', () => assert.strictEqual(add(2, 3), 5));\ntest('zero', () => assert.strictEqual(add(0, 0), 0));\n",
	})
	r := f.runner(&memRecorder{})
	baseline := f.run(r, Baseline)
	py, js := byName(baseline, "test (pytest)"), byName(baseline, "test (npm)")
	if s := py.Summary; s == nil || s.Passed != 1 || s.Failed != 1 || !reflect.DeepEqual(s.FailedTests, []string{"tests/test_calc.py::test_add"}) {
		t.Errorf("baseline pytest summary = %+v; output:\n%s", s, py.Output)
	}
	if s := js.Summary; s == nil || s.Passed != 1 || s.Failed != 1 || !reflect.DeepEqual(s.FailedTests, []string{"adds"}) || js.GoTests() != nil {
		t.Errorf("baseline node:test summary = %+v, go summary %+v; output:\n%s", s, js.GoTests(), js.Output)
	}
	f.write(map[string]string{"calc.py": "def add(a, b):\n    return a + b\n", "calc.js": "exports.add = (a, b) => a + b;\n"})
	final := f.run(r, Final)
	if got, reason := Decide(OutcomeInput{FilesChanged: 2, Baseline: baseline, Final: final}); got != Verified {
		t.Errorf("outcome = %s (%s), want verified", got, reason)
	}
	empty := newFixture(t, env, map[string]string{"pytest.ini": "[pytest]\n"})
	res := empty.run(empty.runner(&memRecorder{}), Final)
	if c := byName(res, "test"); !c.ZeroTests || c.ExitCode != 5 || c.Runs != 1 {
		t.Errorf("empty pytest project = %+v, want zero tests (exit 5), run once", c)
	}
}

// scenarioNewTestsOtherLanguages shows new pytest and node:test tests
// failing on the original code inside the real sandbox.
func scenarioNewTestsOtherLanguages(t *testing.T, env *dockerEnv) {
	if out, err := env.sb.Exec(context.Background(), sandbox.Command{Script: "command -v python && command -v node", Timeout: time.Minute}); err != nil || out.ExitCode != 0 {
		t.Skip("the sandbox image has no python or node; build it with testdata/sandbox-image/build.sh")
	}
	f := newFixture(t, env, map[string]string{
		"pyproject.toml":     "[project]\nname = \"calc\"\nversion = \"0\"\n",
		"conftest.py":        "",
		"calc.py":            "def add(a, b):\n    return a - b\n",
		"web/package.json":   `{"name":"web","scripts":{"test":"node --test"}}`,
		"web/calc.js":        "exports.add = (a, b) => a - b;\n",
		"web/test/x.test.js": "const test = require('node:test');\n",
	})
	f.write(map[string]string{
		"calc.py":            "def add(a, b):\n    return a + b\n",
		"tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n",
		"web/calc.js":        "exports.add = (a, b) => a + b;\n",
		"web/test/x.test.js": "const test = require('node:test');\nconst assert = require('node:assert');\nconst { add } = require('../calc');\n\n" +
			"test('adds', () => assert.strictEqual(add(2, 3), 5));\n",
	})
	changed := []string{"calc.py", "tests/test_calc.py", "web/calc.js", "web/test/x.test.js"}
	ws := f.workspace()
	d, err := Detect(ws, DetectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	base := gitBase{dir: f.dir, commit: f.base}
	found, err := FindNewTests(ws, base, changed, d)
	if err != nil {
		t.Fatal(err)
	}
	r := &Runner{Sandbox: f.sb, Checks: d.Checks, Timeout: 5 * time.Minute}
	results, err := r.RunNewTestsOnBase(context.Background(), ws, base, found, changed)
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]NewTestStatus{}
	for _, res := range results {
		status[res.Name] = res.Status
		if res.Status == NotRunBefore || res.Status == CannotShow {
			t.Logf("%s: %s (%s)\n%s", res.Name, res.Status, res.Reason, res.Output)
		}
	}
	want := map[string]NewTestStatus{"test_add": FailsBefore, "test_zero": PassesBefore, "adds": FailsBefore}
	if !reflect.DeepEqual(status, want) {
		t.Errorf("statuses = %v, want %v", status, want)
	}
}

// scenarioNewTestsMinitestAndRustUnit (issue 27): a new minitest method
// and a new unit test in a Rust source file's #[cfg(test)] module are
// both shown failing on the original code in the real sandbox.
func scenarioNewTestsMinitestAndRustUnit(t *testing.T, env *dockerEnv) {
	if out, err := env.sb.Exec(context.Background(), sandbox.Command{Script: "command -v ruby && command -v cargo", Timeout: time.Minute}); err != nil || out.ExitCode != 0 {
		t.Skip("the sandbox image has no ruby or cargo; build it with testdata/sandbox-image/build.sh")
	}
	lib := "pub fn double(a: i32) -> i32 {\n    a + a + 1\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn zero() {\n        let _ = super::double(0);\n    }\n}\n"
	rbTest := "require \"minitest/autorun\"\nrequire \"calc\"\n\nclass CalcTest < Minitest::Test\n  def test_old\n    assert_equal 1, 1\n  end\nend\n"
	f := newFixture(t, env, map[string]string{
		"rs/Cargo.toml":        "[package]\nname = \"dbl\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"rs/src/lib.rs":        lib,
		"rb/Rakefile":          "require \"rake/testtask\"\nRake::TestTask.new(:test) { |t| t.libs << \"lib\" }\n",
		"rb/lib/calc.rb":       "module Calc\n  def self.add(a, b) = a - b\nend\n",
		"rb/test/calc_test.rb": rbTest,
	})
	f.write(map[string]string{
		"rs/src/lib.rs":        strings.Replace(strings.Replace(lib, "a + a + 1", "a + a", 1), "    fn zero() {", "    fn doubles() {\n        assert_eq!(super::double(2), 4);\n    }\n\n    #[test]\n    fn zero() {", 1),
		"rb/lib/calc.rb":       "module Calc\n  def self.add(a, b) = a + b\nend\n",
		"rb/test/calc_test.rb": strings.Replace(rbTest, "  def test_old", "  def test_add\n    assert_equal 5, Calc.add(2, 3)\n  end\n\n  def test_old", 1),
	})
	changed := []string{"rb/lib/calc.rb", "rb/test/calc_test.rb", "rs/src/lib.rs"}
	ws := f.workspace()
	d, err := Detect(ws, DetectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	base := gitBase{dir: f.dir, commit: f.base}
	found, err := FindNewTests(ws, base, changed, d)
	if err != nil {
		t.Fatal(err)
	}
	r := &Runner{Sandbox: f.sb, Checks: d.Checks, Timeout: 5 * time.Minute}
	results, err := r.RunNewTestsOnBase(context.Background(), ws, base, found, changed)
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]NewTestStatus{}
	for _, res := range results {
		status[res.Name] = res.Status
		if res.Status != FailsBefore {
			t.Logf("%s: %s (%s) %s\n%s", res.Name, res.Status, res.Reason, res.Command, res.Output)
		}
	}
	want := map[string]NewTestStatus{"CalcTest#test_add": FailsBefore, "doubles": FailsBefore}
	if !reflect.DeepEqual(status, want) {
		t.Errorf("statuses = %v, want %v", status, want)
	}
}

// scenarioCargo runs detected cargo checks in the sandbox and shows a new
// integration test failing on the original code.
func scenarioCargo(t *testing.T, env *dockerEnv) {
	if out, err := env.sb.Exec(context.Background(), sandbox.Command{Script: "command -v cargo", Timeout: time.Minute}); err != nil || out.ExitCode != 0 {
		t.Skip("the sandbox image has no cargo; build it with testdata/sandbox-image/build.sh")
	}
	lib := "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(super::add(2, 3), 5);\n    }\n}\n"
	f := newFixture(t, env, map[string]string{
		"Cargo.toml": "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"src/lib.rs": lib,
	})
	r := f.runner(&memRecorder{})
	baseline := f.run(r, Baseline)
	bt := byName(baseline, "test")
	if s := bt.Summary; s == nil || s.Failed != 1 || !reflect.DeepEqual(s.FailedTests, []string{"tests::adds"}) {
		t.Fatalf("baseline cargo test = %+v; output:\n%s", bt.Summary, bt.Output)
	}
	f.write(map[string]string{
		"src/lib.rs":   strings.Replace(lib, "a - b", "a + b", 1),
		"tests/api.rs": "#[test]\nfn adds_two() {\n    assert_eq!(calc::add(2, 2), 4);\n}\n",
	})
	final := f.run(r, Final)
	if got, reason := Decide(OutcomeInput{FilesChanged: 2, Baseline: baseline, Final: final}); got != Verified {
		t.Errorf("outcome = %s (%s), want verified", got, reason)
	}
	ws := f.workspace()
	d, err := Detect(ws, DetectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	base := gitBase{dir: f.dir, commit: f.base}
	changed := []string{"src/lib.rs", "tests/api.rs"}
	found, err := FindNewTests(ws, base, changed, d)
	if err != nil {
		t.Fatal(err)
	}
	results, err := r.RunNewTestsOnBase(context.Background(), ws, base, found, changed)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 1 || results[0].Name != "adds_two" || results[0].Status != FailsBefore {
		t.Errorf("new tests = %+v, want adds_two failing before", results)
	}
}

// scenarioMavenOffline: the detected Maven check runs offline (the agent
// phase has no network); with the plugins missing from the local
// repository that is "could not run", not a failing build.
func scenarioMavenOffline(t *testing.T, env *dockerEnv) {
	if out, err := env.sb.Exec(context.Background(), sandbox.Command{Script: "command -v mvn", Timeout: time.Minute}); err != nil || out.ExitCode != 0 {
		t.Skip("the sandbox image has no mvn; build it with testdata/sandbox-image/build.sh")
	}
	f := newFixture(t, env, map[string]string{
		"pom.xml": "<project xmlns=\"http://maven.apache.org/POM/4.0.0\"><modelVersion>4.0.0</modelVersion>" +
			"<groupId>x</groupId><artifactId>calc</artifactId><version>1</version>" +
			"<build><plugins><plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-surefire-plugin</artifactId><version>99.0.0</version></plugin></plugins></build></project>\n",
	})
	res := f.run(f.runner(&memRecorder{}), Final)
	c := byName(res, "test")
	if !c.CouldNotRun || c.Runs != 1 || !strings.Contains(c.NotRunReason, "Maven is offline") {
		t.Errorf("maven check = %+v; output:\n%s", c, c.Output)
	}
}

// scenarioZeroTests: a module whose only test file was emptied of tests
// passes go test, but no test ran.
func scenarioZeroTests(t *testing.T, env *dockerEnv) {
	f := newFixture(t, env, map[string]string{"go.mod": gomod, "calc.go": calcGood, "calc_test.go": addTest})
	r := f.runner(&memRecorder{})
	baseline := f.run(r, Baseline)
	f.write(map[string]string{"calc_test.go": "package calc\n"})
	final := f.run(r, Final)
	ft := byName(final, "test")
	if !ft.Passed || !ft.ZeroTests || ft.Runs != 1 {
		t.Fatalf("final test = %+v, want passed with zero tests", ft)
	}
	got, reason := Decide(OutcomeInput{FilesChanged: 1, Baseline: baseline, Final: final})
	if got != Unverified || !strings.Contains(reason, "ran no tests") {
		t.Errorf("outcome = %s (%s), want unverified because no test ran", got, reason)
	}
}

// TestDockerRunner runs the verification runner in a real sandbox against
// fixture repositories, one scenario after another in one container.
func TestDockerRunner(t *testing.T) {
	sandboxtest.EndToEnd(t)
	env := newDockerEnv(t)
	scenarios := []struct {
		name string
		run  func(*testing.T, *dockerEnv)
	}{
		{"PreexistingFailure", scenarioPreexistingFailure},
		{"BuildBreak", scenarioBuildBreak},
		{"FixVerified", scenarioFixVerified},
		{"Flaky", scenarioFlaky},
		{"NewTests", scenarioNewTests},
		{"NoChecks", scenarioNoChecks},
		{"CouldNotRun", scenarioCouldNotRun},
		{"OtherRunners", scenarioOtherRunners},
		{"NewTestsOtherLanguages", scenarioNewTestsOtherLanguages},
		{"Cargo", scenarioCargo},
		{"NewTestsMinitestAndRustUnit", scenarioNewTestsMinitestAndRustUnit},
		{"MavenOffline", scenarioMavenOffline},
		{"ZeroTests", scenarioZeroTests},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) { sc.run(t, env) })
	}
}
