// Package verify runs a repository's own build, lint and test commands in
// the sandbox, before the model edits anything (baseline) and after the loop
// ends (final), and decides the run's outcome from what those commands did
// (DESIGN §4.5). Nothing here trusts the model: a check passed only when a
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

// The two phases of DESIGN §4.5.
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
}

// CheckResult is what one check did in one phase. Its JSON form carries
// the fields of DESIGN §4.5's "checks" entries plus the extra facts the
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
	// Tests is what could be parsed from `go test` output; nil for other
	// commands.
	Tests *GoTestSummary `json:"tests,omitempty"`
}

// MarshalJSON adds duration_ms, the unit of DESIGN §4.5.
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

// Failed reports whether the check ran and did not pass, flaky or not.
func (c CheckResult) Failed() bool { return c.Ran && !c.Passed }

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
