package report

import (
	"fmt"

	"github.com/patchwright/patchwright/report/marker"
	"github.com/patchwright/patchwright/verify"
)

// Phase is where a run stands, for the issue's status comment.
type Phase string

// Phases of a run, in order; Done and Failed end it.
const (
	PhaseQueued    Phase = "queued"
	PhaseWorking   Phase = "working"
	PhaseVerifying Phase = "verifying"
	PhaseDone      Phase = "done"
	PhaseFailed    Phase = "failed"
)

var phaseOrder = map[Phase]int{PhaseQueued: 0, PhaseWorking: 1, PhaseVerifying: 2, PhaseDone: 3, PhaseFailed: 3}

// Status is what the status comment shows. Zero fields are left out.
type Status struct {
	Issue       int
	Phase       Phase
	RunURL      string
	TriggeredBy string
	// Trigger says what started a run nobody asked for by hand (the
	// repository's CI failing); "" for a person's trigger.
	Trigger string
	// BaseBranch and BaseCommit say what was cloned.
	BaseBranch string
	BaseCommit string
	Image      string
	Baseline   []verify.CheckResult
	Step       int
	MaxSteps   int
	// LastAction is a short description of the last tool call, for
	// example "ran go test ./slug/...".
	LastAction string
	// PullRequestURL is set once the pull request exists (for a retry,
	// from the start): a failed run's headline links it, left as it was.
	PullRequestURL string
	// Reached is, for a failed run, the phase it had reached when it
	// failed: the checklist ticks only the phases before it.
	Reached Phase
	Outcome verify.Outcome
	Reason  string
	// CostUSD is the run's estimated model cost, from the same price
	// table as the body's; nil before the run ends or without a price.
	CostUSD *float64
}

type statusData struct {
	Status
	Marker string
	Order  int
	// Ended: the run is over (done or failed).
	Ended bool
	// Cost is the cost line; "" while the run goes on.
	Cost string
}

// StatusComment renders the issue's status comment for s.Phase.
func StatusComment(s Status) (string, error) {
	s.RunURL = safeURL(s.RunURL)
	s.PullRequestURL = safeURL(s.PullRequestURL)
	if len(s.BaseCommit) > 7 {
		s.BaseCommit = s.BaseCommit[:7]
	}
	if _, ok := phaseOrder[s.Phase]; !ok {
		return "", fmt.Errorf("render status comment: unknown phase %q", s.Phase)
	}
	d := statusData{Status: s, Marker: marker.Status(s.Issue), Order: phaseOrder[s.Phase], Ended: phaseOrder[s.Phase] == phaseOrder[PhaseDone]}
	if s.Phase == PhaseFailed {
		d.Order = phaseOrder[s.Reached]
	}
	if s.CostUSD != nil {
		d.Cost = cost(s.CostUSD)
	}
	return fit(execute("status", d))
}

// failureData is what the failure template sees.
type failureData struct {
	Input
	Marker string
	Rows   []row
	Cost   string
	Advice []string
}

// FailureComment renders the comment posted on the issue, in place of the
// status comment, when no pull request is opened: why, what was tried and
// what the user can do.
func FailureComment(in Input) (string, error) {
	d := failureData{Input: in, Marker: marker.Status(in.Issue), Cost: cost(in.CostUSD), Rows: rows(in, 0)}
	d.LogURL = safeURL(in.LogURL)
	d.OpenPullRequestURL = safeURL(in.OpenPullRequestURL)
	d.Advice = advice(in)
	if s, cut := truncate(in.Summary, 500); cut {
		d.Summary = s + " …"
	}
	return fit(execute("failure", d))
}

// advice says what the user can do next, by outcome.
func advice(in Input) []string {
	if in.Merging {
		return []string{"The base branch still does not merge into the pull request cleanly. Resolve the conflict on the branch by hand, or comment `/agent rebase` on the pull request to have Patchwright try again."}
	}
	switch in.Outcome {
	case verify.NoChange:
		return []string{"If the issue still needs a change, add detail (what should happen, an example input and output) and comment `/agent retry`."}
	case verify.Stopped:
		return []string{"Add detail to the issue and comment `/agent retry`, or raise the limits in `.github/agent.yml` (`limits: {max_steps: …, max_minutes: …}`)."}
	case verify.Error:
		return []string{"This was a failure of Patchwright's own machinery, not of your repository: comment `/agent retry` to try again; if it keeps happening, tell the operator and include the run link."}
	case verify.Failed:
		return []string{"The best attempt broke a check that passes on the base branch. Add detail to the issue and comment `/agent retry`."}
	}
	return []string{"Comment `/agent retry` with more detail to try again."}
}

// fit refuses a comment over GitHub's limit; the templates bound their
// inputs, so this is a guard, not a path users should see.
func fit(s string, err error) (string, error) {
	if err != nil {
		return "", err
	}
	if len(s) >= MaxBody {
		return "", fmt.Errorf("rendered comment is %d bytes (limit %d)", len(s), MaxBody)
	}
	return s, nil
}
