package pipeline

import (
	"context"

	"github.com/patchwright/patchwright/agent/tools"
	"github.com/patchwright/patchwright/verify"
)

// loopPhase is the phase of checks the model asks for with the verify
// tool. It is not part of docs/design.md §4.5: those runs are recorded as the
// tool's commands, and only the baseline and final phases decide the
// outcome.
const loopPhase verify.Phase = "loop"

// ToolVerifier lets the model's verify tool run the checks. It satisfies
// tools.Verifier. Checks run once (no re-runs) and are not sent to the
// runner's Recorder: the tool call records its own commands.
type ToolVerifier struct {
	Runner *verify.Runner
	// Findings, when set, returns the findings on the change so far in
	// one line (see findings.Summary); a non-empty line is shown to the
	// model as one more check, "findings", that fails when it holds a
	// finding that keeps the change from being verified.
	Findings func() (summary string, blocking bool)
}

// Verify implements tools.Verifier.
func (v ToolVerifier) Verify(ctx context.Context) ([]tools.Check, error) {
	r := *v.Runner
	r.Recorder = nil
	r.Reruns = -1
	results, err := r.Run(ctx, loopPhase)
	out := make([]tools.Check, 0, len(results))
	for _, res := range results {
		rec := tools.CommandRecord{
			Command: res.Command, ExitCode: res.ExitCode, Duration: res.Duration,
			TimedOut: res.TimedOut, OOMKilled: res.OOMKilled, Output: res.Output,
		}
		switch {
		case !res.Ran:
			rec.Output = res.NotRunText()
		case res.ZeroTests:
			rec.Output = "passed, but ran no tests (" + res.ZeroTestsDetail + "): its pass shows nothing\n" + rec.Output
		}
		out = append(out, tools.Check{Name: res.Name, Passed: res.Passed, CommandRecord: rec})
	}
	if v.Findings != nil && err == nil {
		if summary, blocking := v.Findings(); summary != "" {
			out = append(out, tools.Check{Name: "findings", Passed: !blocking, CommandRecord: tools.CommandRecord{
				Command: "(Patchwright's review of the diff)", Output: summary}})
		}
	}
	return out, err
}

var _ tools.Verifier = ToolVerifier{}
