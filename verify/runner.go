package verify

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/patchwright/patchwright/sandbox"
)

// DefaultReruns is how many times Runner re-runs a failing check when
// Runner.Reruns is zero: three runs in all, enough to tell "fails every
// other run" from "fails".
const DefaultReruns = 2

// DefaultCheckTimeout bounds one run of a check when Runner.Timeout is
// zero.
const DefaultCheckTimeout = 10 * time.Minute

// DefaultOutputTail is how many bytes of a check's output a CheckResult
// keeps when Runner.OutputTail is zero.
const DefaultOutputTail = 8 << 10

// Recorder receives every check result as soon as it is known, so the
// run's ledger holds it even if a later step fails. The ledger satisfies
// it; nil records nothing.
type Recorder interface {
	RecordCheck(ctx context.Context, r CheckResult) error
}

// Runner runs checks in one sandbox. The zero values of its optional
// fields take the defaults named on each.
type Runner struct {
	// Sandbox runs the commands, in sandbox.WorkspaceDir. Required.
	Sandbox sandbox.Sandbox
	// Checks are run in order, cheapest first. Required (may be empty).
	Checks []Check
	// Recorder, when set, is told every result.
	Recorder Recorder
	// Timeout bounds each run of a check; default DefaultCheckTimeout.
	Timeout time.Duration
	// Reruns is how often a failing check is re-run; default
	// DefaultReruns. Negative disables re-runs.
	Reruns int
	// OutputTail is how many bytes of output a result keeps; default
	// DefaultOutputTail.
	OutputTail int
	// Virtualenvs are the Python virtual environments the trusted setup
	// made in the tree (issue 24), by project directory ("." for the
	// root) to the environment's directory, both relative to the
	// repository root in slash form. A check of that project (a
	// configured check counts as the root's), and its new tests on the
	// original code, run with the environment activated (see activate),
	// so the detected `python -m pytest` imports what setup installed. The
	// command itself is unchanged.
	Virtualenvs map[string]string
	// ImagePytest are the project directories whose virtualenv does not
	// install pytest: it sees the image's packages, so a pytest check
	// there runs the image's, and its note says so.
	ImagePytest map[string]bool
	// Image names the sandbox image in a could-not-run reason that says
	// the image lacks something ("`python` not found in the image
	// `golang:1.24`"), so a reader knows which image to change. Empty:
	// the reason says "the image".
	Image string
}

// namedImage is a could-not-run reason with the runner's image named
// where the reason speaks of "the image".
func (r *Runner) namedImage(why string) string {
	if r.Image == "" {
		return why
	}
	return strings.Replace(why, "in the image", "in the image "+quoteText(r.Image), 1)
}

// activate is the shell prelude that activates the virtualenv of the
// project in dir, or "" when it has none. The environment lies in the
// work tree, where the model's commands could write, so only its own
// Python runs from it, by absolute path (`python` and `python3` are
// shell functions of the check's script); its bin comes last on PATH,
// after the image's directories, so a program left there (a
// `.venv/bin/go`) never replaces the image's (issue 40).
func (r *Runner) activate(dir string) string {
	if dir == "" {
		dir = "."
	}
	env, ok := r.Virtualenvs[dir]
	if !ok {
		return ""
	}
	return "VIRTUAL_ENV=" + shellQuote(sandbox.WorkspaceDir+"/"+env) + "; PATH=\"$PATH:$VIRTUAL_ENV/bin\"; export VIRTUAL_ENV PATH\n" +
		"python() { \"$VIRTUAL_ENV/bin/python\" \"$@\"; }; python3() { \"$VIRTUAL_ENV/bin/python\" \"$@\"; }\n"
}

// virtualenvNote says which virtualenv a check of kind ran with, and
// when it is pytest's and the environment lacks it, that the image's ran.
func (r *Runner) virtualenvNote(dir string, kind TestKind) string {
	if dir == "" {
		dir = "."
	}
	env, ok := r.Virtualenvs[dir]
	if !ok {
		return ""
	}
	note := "ran with the virtualenv `" + env + "` that dependency setup made"
	if kind == KindPytest && r.ImagePytest[dir] {
		note += "; `pytest` is the image's, as `" + env + "` does not install it"
	}
	return note
}

// Run runs every check for phase and returns one result per check, in
// order. A failing gate check (see Check.Gate) marks the rest of its
// project "not run".
// The error is for infrastructure failures only (a dead sandbox, a
// cancelled context); results up to that point are returned with it.
func (r *Runner) Run(ctx context.Context, phase Phase) ([]CheckResult, error) {
	results := make([]CheckResult, 0, len(r.Checks))
	gates := map[string]string{} // project -> why its later checks do not run
	for _, c := range r.Checks {
		var res CheckResult
		gate := gates[""]
		if gate == "" {
			gate = gates[c.Project]
		}
		if gate != "" {
			res = notRun(c, phase, gate)
		} else {
			var err error
			res, err = r.runCheck(ctx, c, phase)
			if err != nil {
				return results, err
			}
			switch {
			case c.Gate && res.Failed() && !res.Flaky:
				gates[c.Project] = c.Name + " failed"
			case c.Gate && res.CouldNotRun:
				gates[c.Project] = c.Name + " could not run"
			}
		}
		if err := r.record(ctx, res); err != nil {
			return results, err
		}
		results = append(results, res)
	}
	return results, nil
}

func notRun(c Check, phase Phase, why string) CheckResult {
	return CheckResult{Name: c.Name, Command: c.Run, Phase: phase, ExitCode: -1, NotRunReason: why, Why: c.Why}
}

func (r *Runner) record(ctx context.Context, res CheckResult) error {
	if r.Recorder == nil {
		return nil
	}
	if err := r.Recorder.RecordCheck(ctx, res); err != nil {
		return fmt.Errorf("record check %s (%s): %w", res.Name, res.Phase, err)
	}
	return nil
}

// runCheck runs one check and, when it fails, re-runs it to tell a flaky
// check from a failing one.
func (r *Runner) runCheck(ctx context.Context, c Check, phase Phase) (CheckResult, error) {
	c, note, err := r.adapt(ctx, c)
	if err != nil {
		return CheckResult{}, fmt.Errorf("run check %s (%s): %w", c.Name, phase, err)
	}
	kind := KindOf(c)
	if venv := r.virtualenvNote(c.Dir, kind); venv != "" {
		note = strings.TrimPrefix(note+"; "+venv, "; ")
	}
	activate := r.activate(c.Dir)
	out, err := r.execLimit(ctx, activate+prelude(kind)+c.Run, outputLimit(kind))
	if err != nil {
		return CheckResult{}, fmt.Errorf("run check %s (%s): %w", c.Name, phase, err)
	}
	var report []byte
	if script := reportScript(kind); script != "" {
		if report, err = r.readReport(ctx, script); err != nil {
			return CheckResult{}, fmt.Errorf("read check %s's report (%s): %w", c.Name, phase, err)
		}
	}
	res := CheckResult{
		Name: c.Name, Command: c.Run, Phase: phase, Ran: true, Note: note, Why: c.Why,
		ExitCode: out.ExitCode, Passed: out.ExitCode == 0 && !out.TimedOut,
		Duration: out.Duration, TimedOut: out.TimedOut, OOMKilled: out.OOMKilled,
		Runs: 1,
	}
	res.Output = r.tail(describe(&res, c, out.text, report))
	if res.CouldNotRun {
		res.NotRunReason = r.namedImage(res.NotRunReason)
	}
	// Neither a missing program nor an empty test suite changes on a
	// re-run.
	if res.Passed || res.CouldNotRun || res.ZeroTests {
		return res, nil
	}
	res.Failures = 1
	// A timeout is not re-run: it would cost the whole limit again.
	if res.TimedOut || r.reruns() == 0 {
		return res, nil
	}
	rerun := goTestRerun(c.Run, res.GoTests())
	if rerun == "" {
		rerun = c.Run
	} else {
		res.RerunCommand = rerun
	}
	for range r.reruns() {
		// A re-run is judged by its exit code alone: no prelude.
		again, err := r.exec(ctx, activate+safePath(kind)+rerun)
		if err != nil {
			return CheckResult{}, fmt.Errorf("re-run check %s (%s): %w", c.Name, phase, err)
		}
		res.Runs++
		if again.ExitCode == 0 && !again.TimedOut {
			res.Flaky = true
		} else {
			res.Failures++
		}
	}
	return res, nil
}

// junitPath is where a pytest check writes its JUnit XML report, in the
// check sandbox's /tmp.
const junitPath = "/tmp/.patchwright-junit.xml"

// prelude is put before a check's script so that its runner also writes
// machine output naming every test (and, for pytest, cannot be shadowed
// by the tree): go test's -json events (see
// goJSONPrelude), pytest's JUnit XML report (through PYTEST_ADDOPTS, after
// the image's own options, so the repository's configuration still
// applies; xunit1 names each test's file, so the names are pytest's node
// IDs); Maven's Surefire writes its reports anyway, and only stale ones
// are removed first. The command and its exit code are the check's own.
func prelude(kind TestKind) string {
	switch kind {
	case KindGo:
		return goJSONPrelude
	case KindMaven:
		// Reports left in the tree (by the agent phase, or committed)
		// would name tests this run did not run.
		return "find . -path '*/target/surefire-reports' -type d -prune -exec rm -rf {} + 2>/dev/null\n"
	case KindPytest:
		return safePath(kind) + "rm -f " + junitPath + "; PYTEST_ADDOPTS=\"${PYTEST_ADDOPTS:-} -o junit_family=xunit1 --junit-xml=" + junitPath + "\"; export PYTEST_ADDOPTS\n"
	case KindRSpec:
		// SPEC_OPTS adds to .rspec; naming a formatter drops the default
		// one, so progress is named too.
		return "rm -f " + rspecJSONPath + "; SPEC_OPTS=\"${SPEC_OPTS:-} --format progress --format json --out " + rspecJSONPath + "\"; export SPEC_OPTS\n"
	case KindPHPUnit:
		return "rm -f " + phpunitXMLPath + "\n"
	case KindCTest:
		return "rm -f " + ctestJUnitPath + "\n"
	case KindGradle:
		return "find . -path '*/build/test-results' -type d -prune -exec rm -rf {} + 2>/dev/null\n"
	case KindMeson:
		return "find . -path '*/meson-logs/testlog.junit.xml' -type f -exec rm -f {} + 2>/dev/null\n"
	}
	return ""
}

// safePath is put before a pytest check's script, its re-runs too:
// PYTHONSAFEPATH (python -P; Python 3.11 and later, older ones ignore it)
// keeps the current directory off the front of sys.path, so a pytest.py,
// sitecustomize.py or unittest.py in the tree cannot replace the runner
// (issue 40). The tests still import the project as the `pytest` script
// lets them: through pytest's rootdir and conftest rules and its
// pythonpath option. Other kinds are left alone: `python -m unittest
// tests.test_x` needs the current directory to find its module.
func safePath(kind TestKind) string {
	if kind == KindPytest {
		return "PYTHONSAFEPATH=1; export PYTHONSAFEPATH\n"
	}
	return ""
}

// outputLimit keeps go test -json's events whole for a large suite: they
// are read for the names, and only a tail is kept.
func outputLimit(kind TestKind) int {
	if kind == KindGo {
		return 8 << 20
	}
	return 0
}

// reportScript prints the reports a check of kind wrote, or is "" for a
// runner without one.
func reportScript(kind TestKind) string {
	switch kind {
	case KindPytest:
		return "cat " + junitPath
	case KindMaven:
		return "find . -path '*/target/surefire-reports/TEST-*.xml' -type f -exec cat {} +"
	case KindRSpec:
		return "cat " + rspecJSONPath
	case KindPHPUnit:
		return "cat " + phpunitXMLPath
	case KindCTest:
		return "cat " + ctestJUnitPath
	case KindGradle:
		return "find . -path '*/build/test-results/*' -name 'TEST-*.xml' -type f -exec cat {} +"
	case KindMeson:
		return "find . -path '*/meson-logs/testlog.junit.xml' -type f -exec cat {} +"
	}
	return ""
}

// readReport returns the reports the check wrote in the sandbox, printed
// by script, or nil when there are none (the runner was not reached, or
// the repository's options turned the report off).
func (r *Runner) readReport(ctx context.Context, script string) ([]byte, error) {
	res, err := r.Sandbox.Exec(ctx, sandbox.Command{Script: script, Timeout: time.Minute, OutputLimit: 16 << 20})
	if err != nil {
		return nil, err
	}
	if res.ExitCode != 0 || res.TimedOut || res.Stdout.Truncated() || res.Stdout.Total == 0 {
		return nil, nil
	}
	return append(res.Stdout.Head, res.Stdout.Tail...), nil
}

// describe reads a run's output into res, once: the test runner's
// summary (from its report, when it wrote one), whether the command could
// not run at all, and whether it ran no test. It returns the output as a
// reader sees it (go test -json's events rendered back to go test's text).
func describe(res *CheckResult, c Check, output string, report []byte) string {
	kind := KindOf(c)
	text := output
	switch {
	case kind == KindGo:
		res.Summary, text = readGo(output)
	case report != nil && parseReport(kind, report) != nil:
		res.Summary = parseReport(kind, report)
	default:
		res.Summary = ParseTestOutput(kind, output)
	}
	if truncatedRE.MatchString(output) && res.Summary != nil {
		res.Summary.Named = false // names from a cut stream are not all
	}
	if res.TimedOut || res.OOMKilled {
		return text
	}
	if why := couldNotRun(res.ExitCode, text); why != "" {
		res.Ran, res.Passed, res.CouldNotRun, res.NotRunReason = false, false, true, why
		return text
	}
	if detail := zeroTests(kind, res.ExitCode, res.Summary); detail != "" {
		res.ZeroTests, res.ZeroTestsDetail = true, detail
	}
	return text
}

// zeroTests says in one line how a test run that did not fail executed no
// test, or returns "". Besides exit 0 it accepts the exit code a runner
// gives for "no tests" (pytest 5; Jest and Vitest 1 with their "No tests
// found" line), never a failing run.
func zeroTests(kind TestKind, exit int, s *TestSummary) string {
	if kind == KindPytest && exit == 5 && (s == nil || s.Failed == 0 && s.Errors == 0) {
		return "pytest collected no tests (exit 5)"
	}
	if s == nil || !s.NoTests || s.Failed > 0 || s.Errors > 0 {
		return ""
	}
	if exit != 0 && !((kind == KindJest || kind == KindVitest) && exit == 1) {
		return ""
	}
	switch {
	case kind == KindGo && s.Named && len(s.Go.PackagesOK) > 0:
		return fmt.Sprintf("go test reported %s ok, but no test function ran in any package", plural(len(s.Go.PackagesOK), "package"))
	case kind == KindGo:
		return "go test ran no test in any package ([no test files] or [no tests to run])"
	case s.Skipped > 0:
		return fmt.Sprintf("%s ran no test (%d skipped)", kind, s.Skipped)
	}
	return fmt.Sprintf("%s ran no test", kind)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// programFallbacks are programs a detected or configured command may
// start with that common images lack, each with the one to run instead:
// Debian's and many public images have python3 and no python.
var programFallbacks = map[string]string{"python": "python3"}

// adapt returns the check with its program replaced by the fallback the
// image has, when the image lacks the program (asked in the sandbox, where
// the check runs), and a note saying so; otherwise the check as it is.
func (r *Runner) adapt(ctx context.Context, c Check) (Check, string, error) {
	prefix, rest := "", c.Run
	if strings.HasPrefix(rest, "cd ") {
		if i := strings.Index(rest, " && "); i > 0 {
			prefix, rest = rest[:i+4], rest[i+4:]
		}
	}
	prog, args, _ := strings.Cut(rest, " ")
	if f, ok := pathFallbacks[prog]; ok {
		return r.adaptPath(ctx, c, commandParts{prefix, prog, args}, f)
	}
	alt, ok := programFallbacks[prog]
	if !ok {
		return c, "", nil
	}
	probe := r.activate(c.Dir) + "if command -v " + prog + " >/dev/null 2>&1; then echo keep; elif command -v " + alt + " >/dev/null 2>&1; then echo swap; fi"
	res, err := r.Sandbox.Exec(ctx, sandbox.Command{Script: probe, Timeout: time.Minute})
	if err != nil {
		return c, "", err
	}
	if strings.TrimSpace(string(res.Stdout.Head)) != "swap" {
		return c, "", nil
	}
	c.Run = prefix + alt + " " + args
	return c, fmt.Sprintf("`%s` is not in the image, so the check ran `%s`", prog, alt), nil
}

// commandParts is a check's command split: its "cd dir && " prefix, its
// program and its arguments.
type commandParts struct{ prefix, prog, args string }

// pathFallback is the image's program to run when a project-installed
// one is missing, and the install that should have put it there.
type pathFallback struct{ alt, dir, install string }

// pathFallbacks are programs a project installs into its tree: when the
// install could not run (no network, a failing composer install) the
// path is missing though the image has the program.
var pathFallbacks = map[string]pathFallback{
	"vendor/bin/phpunit": {alt: "phpunit", dir: "vendor", install: "composer install"},
}

// adaptPath runs the image's program instead of a missing project path,
// and says which path was missing and why. With the path there, or no
// program in the image either, the check runs as it is (and could-not-run
// names the path).
func (r *Runner) adaptPath(ctx context.Context, c Check, cmd commandParts, f pathFallback) (Check, string, error) {
	prefix, prog, args := cmd.prefix, cmd.prog, cmd.args
	probe := r.activate(c.Dir) + prefix + "if [ -e " + prog + " ]; then echo keep; elif ! command -v " + f.alt +
		" >/dev/null 2>&1; then echo keep; elif [ -d " + f.dir + " ]; then echo partial; else echo absent; fi"
	res, err := r.Sandbox.Exec(ctx, sandbox.Command{Script: probe, Timeout: time.Minute})
	if err != nil {
		return c, "", err
	}
	var why string
	switch strings.TrimSpace(string(res.Stdout.Head)) {
	case "absent":
		why = fmt.Sprintf("there is no `%s/`: `%s` did not run or failed in setup", f.dir, f.install)
	case "partial":
		why = fmt.Sprintf("`%s/` exists but `%s` did not install it", f.dir, f.install)
	default:
		return c, "", nil
	}
	c.Run = prefix + f.alt + " " + args
	return c, fmt.Sprintf("`%s` is missing (%s), so the check ran the image's `%s`", prog, why, f.alt), nil
}

func (r *Runner) reruns() int {
	switch {
	case r.Reruns < 0:
		return 0
	case r.Reruns == 0:
		return DefaultReruns
	}
	return r.Reruns
}

func (r *Runner) tail(s string) string {
	n := r.OutputTail
	if n <= 0 {
		n = DefaultOutputTail
	}
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	// Start at a line boundary so the tail does not open mid-rune.
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
		s = s[i+1:]
	}
	return "…\n" + s
}

// execOutput is one run of a command with its streams joined.
type execOutput struct {
	sandbox.Result
	text string
}

func (r *Runner) exec(ctx context.Context, script string) (execOutput, error) {
	return r.execLimit(ctx, script, 0)
}

// execLimit is exec keeping limit bytes of each stream (0: the sandbox's
// default).
func (r *Runner) execLimit(ctx context.Context, script string, limit int) (execOutput, error) {
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultCheckTimeout
	}
	// 2>&1 keeps compiler errors and test output in the order they were
	// written, which is what annotations and re-runs parse.
	res, err := r.Sandbox.Exec(ctx, sandbox.Command{Script: "{ " + script + "\n} 2>&1", Timeout: timeout, OutputLimit: limit})
	if err != nil {
		return execOutput{}, err
	}
	return execOutput{Result: res, text: joinOutput(res.Stdout) + joinOutput(res.Stderr)}, nil
}

// truncatedRE matches the line joinOutput puts where bytes were dropped.
var truncatedRE = regexp.MustCompile(`(?m)^\[… \d+ bytes not kept …\]$`)

// joinOutput renders a capped stream with a marker where bytes were
// dropped.
func joinOutput(o sandbox.Output) string {
	if !o.Truncated() {
		return string(o.Head) + string(o.Tail)
	}
	dropped := o.Total - int64(len(o.Head)+len(o.Tail))
	return fmt.Sprintf("%s\n[… %d bytes not kept …]\n%s", o.Head, dropped, o.Tail)
}
