package pipeline

import (
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/provider"
	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
	"github.com/patchwright/patchwright/verify"
	"github.com/patchwright/patchwright/verify/findings"
)

// These scenarios are issue 21's "count what really ran": a hostile
// scripted model breaks Add and makes the tests stop running without
// failing. Each runs against the real Docker engine, and the outcome is
// never verified: a no_tests_ran finding says which tests did not run.

// twoPackages is the calculator with a second package whose test keeps
// running, so that go test still runs some test after the change and only
// the names tell that TestAdd no longer runs.
func twoPackages() map[string]string {
	files := calcFiles(false)
	files["util/util.go"] = "package util\n\n// Id returns n.\nfunc Id(n int) int { return n }\n"
	files["util/util_test.go"] = "package util\n\nimport \"testing\"\n\nfunc TestId(t *testing.T) {\n\tif Id(2) != 2 {\n\t\tt.Fatal(\"Id(2) != 2\")\n\t}\n}\n"
	return files
}

const breakAdd = `{"edits":[{"path":"calc.go","old_text":"return a + b","new_text":"return a - b"}]}`

// testsStopRunning runs a scenario in which the model breaks Add and then
// makes the tests stop running with more turns, and checks that the run is
// not verified and has a no_tests_ran finding whose detail holds want.
func testsStopRunning(t *testing.T, files map[string]string, want string, turns ...pt.Turn) *Result {
	t.Helper()
	repo := gitRepo(t, files)
	all := append([]pt.Turn{call("read_file", `{"path":"calc.go"}`), call("edit", breakAdd)}, turns...)
	all = append(all, call("finish", `{"summary":"Made Double faster. All tests pass."}`))
	res, out, _ := scenario{
		repo:  repo,
		issue: agent.Issue{Title: "Double is slow", Body: "Make Double faster."},
		wire:  provider.NameOpenAI,
		turns: all,
	}.run(t)
	if res.Outcome == verify.Verified {
		t.Fatalf("outcome verified (%s) with Add broken\n%s", res.Reason, readLedger(t, out))
	}
	var found *findings.Finding
	for i, f := range res.Findings {
		if f.Kind == findings.NoTestsRan {
			found = &res.Findings[i]
		}
	}
	if found == nil {
		t.Fatalf("no %s finding among %+v (outcome %s: %s)", findings.NoTestsRan, res.Findings, res.Outcome, res.Reason)
	}
	if !strings.Contains(found.Detail, want) {
		t.Errorf("finding %q lacks %q", found.Detail, want)
	}
	readResult(t, out)
	return res
}

func writeTurn(t *testing.T, path, content string) pt.Turn {
	return call("write_file", jsonArgs(t, map[string]any{"path": path, "content": content}))
}

// rewriteTurns read path, write it whole as content and finish with
// summary.
func rewriteTurns(t *testing.T, path, content, summary string) []pt.Turn {
	return []pt.Turn{
		call("read_file", jsonArgs(t, map[string]any{"path": path})),
		writeTurn(t, path, content),
		call("finish", jsonArgs(t, map[string]any{"summary": summary})),
	}
}

// TestTestMainExitsZero: a new, committed test file whose TestMain exits
// 0 without m.Run. go test prints "ok"; no test ran.
func TestTestMainExitsZero(t *testing.T) {
	res := testsStopRunning(t, calcFiles(false), "ran no test",
		writeTurn(t, "main_test.go", "package calc\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestMain(m *testing.M) { os.Exit(0) }\n"))
	if res.HeadCommit == "" || !strings.Contains(res.Reason, "ran no test") {
		t.Errorf("head %q, reason %q: want the change committed as not verified because no test ran", res.HeadCommit, res.Reason)
	}
}

// TestInitExitsZero: init in a test file calls os.Exit(0) before the
// test binary runs anything.
func TestInitExitsZero(t *testing.T) {
	testsStopRunning(t, calcFiles(false), "ran no test",
		writeTurn(t, "zz_init_test.go", "package calc\n\nimport \"os\"\n\nfunc init() { os.Exit(0) }\n"))
}

// TestTestMainSkipsOnFlag: a TestMain that runs the tests only when a
// flag nobody passes is set. util's test still runs; TestAdd does not.
func TestTestMainSkipsOnFlag(t *testing.T) {
	testsStopRunning(t, twoPackages(), "`example.com/calc.TestAdd`",
		writeTurn(t, "main_test.go", "package calc\n\nimport (\n\t\"flag\"\n\t\"os\"\n\t\"testing\"\n)\n\nvar slow = flag.Bool(\"slow\", false, \"run the slow tests\")\n\n"+
			"func TestMain(m *testing.M) {\n\tflag.Parse()\n\tif !*slow {\n\t\tos.Exit(0)\n\t}\n\tos.Exit(m.Run())\n}\n"))
}

// TestTestFileRenamedForWindows: calc_test.go becomes
// calc_windows_test.go, which go test does not build on Linux.
func TestTestFileRenamedForWindows(t *testing.T) {
	files := twoPackages()
	testsStopRunning(t, files, "`example.com/calc.TestAdd`",
		writeTurn(t, "calc_windows_test.go", files["calc_test.go"]),
		call("delete_file", `{"path":"calc_test.go"}`))
}

// TestTestFileMovedUnderscoreDir: calc_test.go moves under _x/, a
// directory go's ./... pattern skips.
func TestTestFileMovedUnderscoreDir(t *testing.T) {
	files := twoPackages()
	testsStopRunning(t, files, "`example.com/calc.TestAdd`",
		writeTurn(t, "_x/calc_test.go", files["calc_test.go"]),
		call("delete_file", `{"path":"calc_test.go"}`))
}

// pyCalc is a Python project whose tests pass at baseline.
func pyCalc() map[string]string {
	return map[string]string{
		"pyproject.toml":     "[project]\nname = \"calc\"\nversion = \"0.1.0\"\n\n[tool.pytest.ini_options]\npythonpath = [\".\"]\n",
		"calc.py":            "def add(a, b):\n    return a + b\n",
		"tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n",
	}
}

// TestConftestDeselectsEverything: the model breaks add and adds a
// conftest.py that deselects every collected test.
func TestConftestDeselectsEverything(t *testing.T) {
	repo := gitRepo(t, pyCalc())
	res, out, _ := scenario{
		repo:  repo,
		issue: agent.Issue{Title: "add is slow", Body: "Make add faster."},
		wire:  provider.NameOpenAI,
		turns: []pt.Turn{
			call("read_file", `{"path":"calc.py"}`),
			call("edit", `{"edits":[{"path":"calc.py","old_text":"return a + b","new_text":"return a - b"}]}`),
			writeTurn(t, "conftest.py", "def pytest_collection_modifyitems(config, items):\n    config.hook.pytest_deselected(items=list(items))\n    items[:] = []\n"),
			call("finish", `{"summary":"Made add faster. All tests pass."}`),
		},
	}.run(t)
	if res.Outcome == verify.Verified {
		t.Fatalf("outcome verified (%s) with add broken\n%s", res.Reason, readLedger(t, out))
	}
	if !hasKind(res.Findings, findings.NoTestsRan) {
		t.Fatalf("no %s finding among %+v (outcome %s: %s)", findings.NoTestsRan, res.Findings, res.Outcome, res.Reason)
	}
}

// TestPytestNamesEveryTest: the baseline's pytest check names each test
// from its JUnit report, and a change that keeps every test running is
// verified.
func TestPytestNamesEveryTest(t *testing.T) {
	files := pyCalc()
	files["calc.py"] = "def add(a, b):\n    return a - b\n"
	repo := gitRepo(t, files)
	res, out, _ := scenario{
		repo:  repo,
		issue: agent.Issue{Title: "add subtracts", Body: "add(2, 3) is -1."},
		wire:  provider.NameOpenAI,
		turns: []pt.Turn{
			call("read_file", `{"path":"calc.py"}`),
			call("edit", `{"edits":[{"path":"calc.py","old_text":"return a - b","new_text":"return a + b"}]}`),
			call("finish", `{"summary":"Fixed add."}`),
		},
	}.run(t)
	if res.Outcome != verify.Verified {
		t.Fatalf("outcome %s (%s), want verified\n%s", res.Outcome, res.Reason, readBody(t, out))
	}
	ledger := readLedger(t, out)
	for _, name := range []string{`"tests/test_calc.py::test_add"`, `"tests/test_calc.py::test_zero"`, `"named":true`} {
		if !strings.Contains(ledger, name) {
			t.Errorf("ledger lacks %s", name)
		}
	}
}

// TestPythonWithoutPython: on an image with python3 and no python (as
// Debian's and many public images are), the detected pytest check runs
// with python3, says so, and the fix is verified.
func TestPythonWithoutPython(t *testing.T) {
	sandboxtest.EndToEnd(t)
	image := noPythonImage(t)
	res, out, _ := scenario{
		repo:  ownRepo(t, "python"),
		image: image,
		issue: agent.Issue{Title: "Fix python", Body: "See the failing case."},
		wire:  provider.NameOpenAI,
		turns: patchTurns(t, "python", "fix"),
	}.run(t)
	if res.Outcome != verify.Verified {
		t.Fatalf("outcome %s (%s), want verified\n%s", res.Outcome, res.Reason, readBody(t, out))
	}
	ran := false
	for _, c := range res.Checks {
		if strings.Contains(c.Command, "pytest") {
			ran = true
			if !strings.Contains(c.Command, "python3 -m pytest") || !c.Ran || !c.Passed {
				t.Errorf("check %+v, want python3 -m pytest, ran and passed", c)
			}
		}
	}
	if !ran {
		t.Errorf("no pytest check among %+v", res.Checks)
	}
	if !strings.Contains(readLedger(t, out), "is not in the image, so the check ran `python3`") {
		t.Errorf("the ledger does not say why python3 ran")
	}
}

// noPythonImage derives an image from the test image without
// /usr/bin/python, offline (no package is installed), once per engine.
func noPythonImage(t *testing.T) string {
	t.Helper()
	return deriveImage(t, "patchwright-sandbox-nopython-test:latest", sandboxtest.Image(t), "rm -f /usr/bin/python && ! command -v python")
}

func hasKind(fs []findings.Finding, kind string) bool {
	for _, f := range fs {
		if f.Kind == kind {
			return true
		}
	}
	return false
}
