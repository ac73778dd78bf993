// Package verify runs a repository's own build, lint and test commands in
// the sandbox, before the model edits anything (baseline) and after the loop
// ends (final), and decides the run's outcome from what those commands did
// (docs/design.md §4.5). Nothing here trusts the model: a check passed only when a
// command ran and exited zero.
package verify

import (
	"encoding/json"
	"fmt"
	"regexp"
	"time"
)

// Phase says when a check ran.
type Phase string

// The two phases of docs/design.md §4.5.
const (
	// Baseline runs on the untouched code, before any edit.
	Baseline Phase = "baseline"
	// Final runs after the loop, whatever the model said.
	Final Phase = "final"
)

// Check is one verification command, from .github/agent.yml `verify` or
// detected from the repository.
type Check struct {
	// Name is the short label shown in reports, for example "test".
	Name string
	// Run is the shell command, run with /bin/sh -c in the workspace.
	Run string
	// Gate marks a cheap check whose failure makes the later, more
	// expensive checks of the same phase pointless: they are then recorded
	// as not run. Detected build steps are gates; configured checks are
	// gates when named "build" or "compile".
	Gate bool
	// Kind is the test runner whose output the check prints, so its
	// summary can be parsed; "" leaves it to the command (see KindOf).
	Kind TestKind
	// Dir is the project directory the check runs in, relative to the
	// repository root in slash form: "." for the root. "" for configured
	// checks, which cover the whole repository.
	Dir string
	// Project labels a detected check's project ("go", "web: npm"): a
	// failing gate skips only the later checks of its own project, so a
	// broken Go build does not hide the JavaScript tests. Configured
	// checks have none, and their gate skips every later check.
	Project string
	// Why says, in one line, why detection chose this command ("Gemfile
	// and spec/: RSpec"); "" for configured checks.
	Why string
}

// CheckResult is what one check did in one phase. Its JSON form carries
// the fields of docs/design.md §4.5's "checks" entries plus the extra facts the
// report needs.
type CheckResult struct {
	Name    string `json:"name"`
	Command string `json:"command"`
	Phase   Phase  `json:"phase"`
	// Ran is false when the check was never started (NotRunReason says
	// why).
	Ran bool `json:"ran"`
	// ExitCode is the first run's exit code; -1 when it did not run.
	ExitCode int `json:"exit_code"`
	// Passed is true only when the first run exited zero. A check that
	// failed and then passed on a re-run is Flaky, never Passed.
	Passed   bool          `json:"passed"`
	Duration time.Duration `json:"-"`
	// NotRunReason says why Ran is false, for example "build failed".
	NotRunReason string `json:"not_run_reason,omitempty"`
	TimedOut     bool   `json:"timed_out,omitempty"`
	OOMKilled    bool   `json:"oom_killed,omitempty"`
	// Output is the tail of the first run's combined output.
	Output string `json:"output_tail,omitempty"`
	// Runs counts every run of the check in this phase, the first and the
	// re-runs; Failures counts the failing ones.
	Runs     int `json:"runs"`
	Failures int `json:"failures"`
	// Flaky is set when the first run failed and a re-run passed.
	Flaky bool `json:"flaky,omitempty"`
	// RerunCommand is the command used for re-runs when it differs from
	// Command (for Go, only the failing tests).
	RerunCommand string `json:"rerun_command,omitempty"`
	// Note says, in one line, how the runner adapted the command to the
	// image, for example "`python` is not in the image; ran `python3`".
	// Command is then what ran.
	Note string `json:"note,omitempty"`
	// Why is the detected check's Check.Why: why this command was chosen.
	Why string `json:"why,omitempty"`
	// CouldNotRun is set when the command started but could not do its
	// work because a program it needs is missing from the image (exit
	// 126/127, "command not found", a missing toolchain or test runner).
	// Ran is then false and NotRunReason says what was missing, for
	// example "`python` not found in the image". It is never re-run.
	CouldNotRun bool `json:"could_not_run,omitempty"`
	// Summary is what the test runner reported (counts, test names, and
	// go test's packages), read once by the runner's parser (see KindOf)
	// from its machine output where it has one; nil when the check is no
	// test run we know or its output had no summary.
	Summary *TestSummary `json:"summary,omitempty"`
	// ZeroTests is set when a test check executed no test although it did
	// not fail (exit 0, or the runner's own "no tests" exit such as
	// pytest's 5): its pass says nothing. ZeroTestsDetail says, in one
	// line, what the runner reported.
	ZeroTests       bool   `json:"zero_tests,omitempty"`
	ZeroTestsDetail string `json:"zero_tests_detail,omitempty"`
}

// MarshalJSON adds duration_ms, the unit of docs/design.md §4.5.
func (c CheckResult) MarshalJSON() ([]byte, error) {
	type plain CheckResult
	return json.Marshal(struct {
		plain
		DurationMS int64 `json:"duration_ms"`
	}{plain(c), c.Duration.Milliseconds()})
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (c *CheckResult) UnmarshalJSON(data []byte) error {
	type plain CheckResult
	var v struct {
		plain
		DurationMS int64 `json:"duration_ms"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return fmt.Errorf("decode check result: %w", err)
	}
	*c = CheckResult(v.plain)
	c.Duration = time.Duration(v.DurationMS) * time.Millisecond
	return nil
}

// GoTests is go test's view by package, or nil when the check is no go
// test run.
func (c CheckResult) GoTests() *GoTestSummary { return c.Summary.GoTests() }

// Failed reports whether the check ran and did not pass, flaky or not.
func (c CheckResult) Failed() bool { return c.Ran && !c.Passed }

// NotRunText is the one line a report shows for a check that did not
// run: "could not run: `python` not found in the image" or "not run:
// build failed"; "" when the check ran.
func (c CheckResult) NotRunText() string {
	switch {
	case c.Ran:
		return ""
	case c.CouldNotRun:
		return "could not run: " + c.NotRunReason
	}
	return "not run: " + c.NotRunReason
}

// RunsText describes the re-runs, for example "1 of 3 runs failed"; empty
// when the check ran once.
func (c CheckResult) RunsText() string {
	if c.Runs <= 1 {
		return ""
	}
	return fmt.Sprintf("%d of %d runs failed", c.Failures, c.Runs)
}

// pytestRE finds pytest in a check's command.
var pytestRE = regexp.MustCompile(`(^|[\s/;&|(])(python3? -m )?pytest(\s|$)`)

// ExitText is "exit N", with what N means when the tool is known to give
// it a meaning a reader would not guess: pytest exits 5 when it collected
// no tests, which is not a test failing.
func (c CheckResult) ExitText() string {
	s := fmt.Sprintf("exit %d", c.ExitCode)
	if c.ExitCode == 5 && pytestRE.MatchString(c.Command) {
		s += ", pytest collected no tests"
	}
	return s
}
