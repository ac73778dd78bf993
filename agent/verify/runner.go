package verify

import (
	"context"
	"fmt"
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
	return CheckResult{Name: c.Name, Command: c.Run, Phase: phase, ExitCode: -1, NotRunReason: why}
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
	out, err := r.exec(ctx, c.Run)
	if err != nil {
		return CheckResult{}, fmt.Errorf("run check %s (%s): %w", c.Name, phase, err)
	}
	res := CheckResult{
		Name: c.Name, Command: c.Run, Phase: phase, Ran: true,
		ExitCode: out.ExitCode, Passed: out.ExitCode == 0 && !out.TimedOut,
		Duration: out.Duration, TimedOut: out.TimedOut, OOMKilled: out.OOMKilled,
		Output: r.tail(out.text), Runs: 1,
	}
	describe(&res, c, out.text)
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
	rerun := goTestRerun(c.Run, res.Tests)
	if rerun == "" {
		rerun = c.Run
	} else {
		res.RerunCommand = rerun
	}
	for range r.reruns() {
		again, err := r.exec(ctx, rerun)
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

// describe reads a run's output into res: the test runner's summary,
// whether the command could not run at all, and whether it ran no test.
func describe(res *CheckResult, c Check, text string) {
	kind := KindOf(c)
	if kind == KindGo {
		res.Tests = ParseGoTest(text)
	}
	res.Summary = ParseTestOutput(kind, text)
	if res.TimedOut || res.OOMKilled {
		return
	}
	if why := couldNotRun(res.ExitCode, text); why != "" {
		res.Ran, res.Passed, res.CouldNotRun, res.NotRunReason = false, false, true, why
		return
	}
	if detail := zeroTests(kind, res.ExitCode, res.Summary); detail != "" {
		res.ZeroTests, res.ZeroTestsDetail = true, detail
	}
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
	case kind == KindGo:
		return "go test ran no test in any package ([no test files] or [no tests to run])"
	case s.Skipped > 0:
		return fmt.Sprintf("%s ran no test (%d skipped)", kind, s.Skipped)
	}
	return fmt.Sprintf("%s ran no test", kind)
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
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultCheckTimeout
	}
	// 2>&1 keeps compiler errors and test output in the order they were
	// written, which is what annotations and re-runs parse.
	res, err := r.Sandbox.Exec(ctx, sandbox.Command{Script: "{ " + script + "\n} 2>&1", Timeout: timeout})
	if err != nil {
		return execOutput{}, err
	}
	return execOutput{Result: res, text: joinOutput(res.Stdout) + joinOutput(res.Stderr)}, nil
}

// joinOutput renders a capped stream with a marker where bytes were
// dropped.
func joinOutput(o sandbox.Output) string {
	if !o.Truncated() {
		return string(o.Head) + string(o.Tail)
	}
	dropped := o.Total - int64(len(o.Head)+len(o.Tail))
	return fmt.Sprintf("%s\n[… %d bytes not kept …]\n%s", o.Head, dropped, o.Tail)
}
