package verify

import (
	"context"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/sandbox"
)

// scriptedSandbox answers each command with a canned exit code and
// output, and counts how often each ran.
type scriptedSandbox struct {
	answers map[string]struct {
		exit int
		out  string
	}
	runs map[string]int
}

func (s *scriptedSandbox) Exec(_ context.Context, cmd sandbox.Command) (sandbox.Result, error) {
	script := strings.TrimSuffix(strings.TrimPrefix(cmd.Script, "{ "), "\n} 2>&1")
	// The runner's preludes ask for machine output; the answers are
	// keyed by the check's own command.
	for _, k := range []TestKind{KindGo, KindPytest, KindMaven} {
		script = strings.TrimPrefix(script, prelude(k))
	}
	if s.runs == nil {
		s.runs = map[string]int{}
	}
	s.runs[script]++
	a := s.answers[script]
	return sandbox.Result{ExitCode: a.exit, Stdout: sandbox.Output{Head: []byte(a.out), Total: int64(len(a.out))}}, nil
}
func (s *scriptedSandbox) DisableNetwork(context.Context) error { return nil }
func (s *scriptedSandbox) ID() string                           { return "scripted" }
func (s *scriptedSandbox) Close() error                         { return nil }

func TestRunnerCouldNotRunAndGates(t *testing.T) {
	sb := &scriptedSandbox{answers: map[string]struct {
		exit int
		out  string
	}{
		"go build ./...":   {1, "./x.go:1:1: syntax error\n"},
		"npm run build":    {0, ""},
		"npm test":         {0, "TAP version 13\nok 1 - a\n1..1\n# tests 1\n# pass 1\n# fail 0\n"},
		"python -m pytest": {127, "/bin/sh: 1: python: not found\n"},
		"mocha":            {0, "\n\n  0 passing (1ms)\n\n"},
	}}
	checks := []Check{
		{Name: "build (go)", Run: "go build ./...", Gate: true, Project: "go"},
		{Name: "test (go)", Run: "go test ./...", Project: "go", Kind: KindGo},
		{Name: "build (npm)", Run: "npm run build", Gate: true, Project: "npm"},
		{Name: "test (npm)", Run: "npm test", Project: "npm", Kind: KindNodeTest},
		{Name: "test (pytest)", Run: "python -m pytest", Project: "pytest", Kind: KindPytest},
		{Name: "mocha", Run: "mocha"},
	}
	res, err := (&Runner{Sandbox: sb, Checks: checks}).Run(context.Background(), Final)
	if err != nil {
		t.Fatal(err)
	}
	goTest, npmTest, py, mocha := res[1], res[3], res[4], res[5]
	if goTest.Ran || goTest.NotRunReason != "build (go) failed" {
		t.Errorf("go test = %+v, want not run because the Go build failed", goTest)
	}
	if !npmTest.Ran || !npmTest.Passed || npmTest.Summary == nil || npmTest.Summary.Passed != 1 || npmTest.GoTests() != nil {
		t.Errorf("npm test = %+v, want run despite the Go build, with a TAP summary and no Go summary", npmTest)
	}
	if !py.CouldNotRun || py.Ran || py.Runs != 1 || sb.runs["python -m pytest"] != 1 || py.NotRunReason != "`python` not found in the image" {
		t.Errorf("pytest = %+v (ran %d times), want could not run, once", py, sb.runs["python -m pytest"])
	}
	if !mocha.ZeroTests || !mocha.Passed {
		t.Errorf("mocha = %+v, want zero tests", mocha)
	}
	if sb.runs["go build ./..."] != 3 {
		t.Errorf("the failing build ran %d times, want 3 (re-runs)", sb.runs["go build ./..."])
	}
	got, reason := Decide(OutcomeInput{FilesChanged: 1, Final: res})
	if got != Unverified || !strings.Contains(reason, "test (pytest) could not run: `python` not found in the image") || !strings.Contains(reason, "mocha ran no tests") {
		t.Errorf("Decide = %s (%s)", got, reason)
	}
}

// TestRunnerNamesTheImage: a check that could not run because the image
// lacks its program names the image, so the reader knows which image to
// change (issue 42: the public golang image has no Python).
func TestRunnerNamesTheImage(t *testing.T) {
	sb := &scriptedSandbox{answers: map[string]struct {
		exit int
		out  string
	}{"python -m pytest": {127, "/bin/sh: 1: python: not found\n"}}}
	checks := []Check{{Name: "test", Run: "python -m pytest", Kind: KindPytest}}
	res, err := (&Runner{Sandbox: sb, Checks: checks, Image: "golang:1.24"}).Run(context.Background(), Final)
	if err != nil {
		t.Fatal(err)
	}
	if want := "`python` not found in the image `golang:1.24`"; res[0].NotRunReason != want {
		t.Errorf("reason %q, want %q", res[0].NotRunReason, want)
	}
}

// TestRunnerConfiguredGateStopsAll keeps the old rule for configured
// checks: they have no project, and a failing build skips everything
// after it.
func TestRunnerConfiguredGateStopsAll(t *testing.T) {
	sb := &scriptedSandbox{answers: map[string]struct {
		exit int
		out  string
	}{"make": {2, "boom\n"}}}
	res, err := (&Runner{Sandbox: sb, Checks: []Check{Configured("build", "make"), Configured("test", "make test"), {Name: "web", Run: "npm test", Project: "npm"}}, Reruns: -1}).Run(context.Background(), Baseline)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res[1:] {
		if r.Ran || r.NotRunReason != "build failed" {
			t.Errorf("%s = %+v, want not run", r.Name, r)
		}
	}
}

// TestRunnerZeroTestsNotRerun: pytest's exit 5 (no tests collected) is
// not a failing test, and re-running cannot change it.
func TestRunnerZeroTestsNotRerun(t *testing.T) {
	sb := &scriptedSandbox{answers: map[string]struct {
		exit int
		out  string
	}{"python -m pytest": {5, outputFixture(t, "pytest_no_tests.txt")}}}
	res, err := (&Runner{Sandbox: sb, Checks: []Check{{Name: "test", Run: "python -m pytest", Kind: KindPytest}}}).Run(context.Background(), Final)
	if err != nil {
		t.Fatal(err)
	}
	if r := res[0]; !r.ZeroTests || !r.Ran || r.Passed || r.Runs != 1 || sb.runs["python -m pytest"] != 1 {
		t.Errorf("result = %+v after %d runs, want zero tests, run once", r, sb.runs["python -m pytest"])
	}
}

// TestRunnerChoosesPython3: on an image without python the check runs
// with python3, records the command that ran and says why; with python
// it runs as detected.
func TestRunnerChoosesPython3(t *testing.T) {
	const probe = "if command -v python >/dev/null 2>&1; then echo keep; elif command -v python3 >/dev/null 2>&1; then echo swap; fi"
	for answer, want := range map[string]string{"swap\n": "cd py && python3 -m pytest", "keep\n": "cd py && python -m pytest", "": "cd py && python -m pytest"} {
		sb := &scriptedSandbox{answers: map[string]struct {
			exit int
			out  string
		}{probe: {0, answer}, want: {0, outputFixture(t, "pytest_pass.txt")}}}
		res, err := (&Runner{Sandbox: sb, Checks: []Check{{Name: "test", Run: "cd py && python -m pytest", Kind: KindPytest}}}).Run(context.Background(), Final)
		if err != nil {
			t.Fatal(err)
		}
		r := res[0]
		if r.Command != want || !r.Passed || sb.runs[want] != 1 || sb.runs[probe] != 1 {
			t.Errorf("probe %q: ran %q (%+v), want %q", answer, r.Command, sb.runs, want)
		}
		if swapped := answer == "swap\n"; swapped != strings.Contains(r.Note, "`python` is not in the image") {
			t.Errorf("probe %q: note %q", answer, r.Note)
		}
	}
}

// recordingSandbox keeps every script and answers exit 0.
type recordingSandbox struct{ scripts []string }

func (s *recordingSandbox) Exec(_ context.Context, cmd sandbox.Command) (sandbox.Result, error) {
	s.scripts = append(s.scripts, cmd.Script)
	return sandbox.Result{}, nil
}
func (s *recordingSandbox) DisableNetwork(context.Context) error { return nil }
func (s *recordingSandbox) ID() string                           { return "recording" }
func (s *recordingSandbox) Close() error                         { return nil }

// TestRunnerActivatesVirtualenvs (issue 24): a check of a project whose
// directory has a virtualenv runs with its python by absolute path and
// its bin last on PATH (issue 40: a program left in the tree's .venv/bin
// must not replace the image's); the same command, and the note says so.
// Other projects' checks do not.
func TestRunnerActivatesVirtualenvs(t *testing.T) {
	sb := &recordingSandbox{}
	checks := []Check{
		{Name: "test (py)", Run: "cd 'api' && python -m pytest", Dir: "api", Kind: KindPytest, Project: "api: pytest"},
		{Name: "test (npm)", Run: "npm test", Dir: ".", Kind: KindNodeTest, Project: "npm"},
	}
	res, err := (&Runner{Sandbox: sb, Checks: checks, Virtualenvs: map[string]string{"api": "api/.venv"}}).Run(context.Background(), Final)
	if err != nil {
		t.Fatal(err)
	}
	want := "VIRTUAL_ENV='/workspace/api/.venv'; PATH=\"$PATH:$VIRTUAL_ENV/bin\"; export VIRTUAL_ENV PATH\n" +
		"python() { \"$VIRTUAL_ENV/bin/python\" \"$@\"; }; python3() { \"$VIRTUAL_ENV/bin/python\" \"$@\"; }\n"
	var py, npm []string
	for _, s := range sb.scripts {
		switch {
		case strings.Contains(s, "pytest") || strings.Contains(s, "command -v python"):
			py = append(py, s)
		case strings.Contains(s, "npm test"):
			npm = append(npm, s)
		}
	}
	if len(py) == 0 || len(npm) == 0 {
		t.Fatalf("scripts %q", sb.scripts)
	}
	for _, s := range py {
		if !strings.HasPrefix(strings.TrimPrefix(s, "{ "), want) {
			t.Errorf("pytest script without the virtualenv:\n%s", s)
		}
	}
	for _, s := range npm {
		if strings.Contains(s, "VIRTUAL_ENV") {
			t.Errorf("npm script with the virtualenv:\n%s", s)
		}
	}
	if res[0].Command != checks[0].Run || !strings.Contains(res[0].Note, "virtualenv `api/.venv`") || res[1].Note != "" {
		t.Errorf("results %+v", res)
	}
}

// TestRunnerFallsBackToImagePHPUnit: with vendor/bin/phpunit missing the
// check runs the image's phpunit and the note names the path and why;
// with it there, or no phpunit in the image, the check runs as detected.
func TestRunnerFallsBackToImagePHPUnit(t *testing.T) {
	const detected = "cd lib && vendor/bin/phpunit --log-junit /tmp/j.xml"
	const probe = "cd lib && if [ -e vendor/bin/phpunit ]; then echo keep; elif ! command -v phpunit >/dev/null 2>&1; then echo keep; elif [ -d vendor ]; then echo partial; else echo absent; fi"
	for answer, want := range map[string]struct{ run, note string }{
		"absent\n":  {"cd lib && phpunit --log-junit /tmp/j.xml", "`vendor/bin/phpunit` is missing (there is no `vendor/`: `composer install` did not run or failed in setup), so the check ran the image's `phpunit`"},
		"partial\n": {"cd lib && phpunit --log-junit /tmp/j.xml", "`vendor/bin/phpunit` is missing (`vendor/` exists but `composer install` did not install it), so the check ran the image's `phpunit`"},
		"keep\n":    {detected, ""},
	} {
		sb := &scriptedSandbox{answers: map[string]struct {
			exit int
			out  string
		}{probe: {0, answer}, want.run: {0, outputFixture(t, "phpunit_pass.txt")}}}
		res, err := (&Runner{Sandbox: sb, Checks: []Check{{Name: "test", Run: detected, Kind: KindPHPUnit, Dir: "lib"}}}).Run(context.Background(), Final)
		if err != nil {
			t.Fatal(err)
		}
		if r := res[0]; r.Command != want.run || r.Note != want.note || sb.runs[probe] != 1 {
			t.Errorf("probe %q: ran %q with note %q (%+v), want %q, %q", answer, r.Command, r.Note, sb.runs, want.run, want.note)
		}
	}
}
