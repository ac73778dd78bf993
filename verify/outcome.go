package verify

import (
	"fmt"
	"strings"

	"github.com/patchwright/patchwright/internal/text"
)

// Outcome is the run's result in docs/design.md §4.5.
type Outcome string

// The outcomes of docs/design.md §4.5.
const (
	Verified   Outcome = "verified"
	Unverified Outcome = "unverified"
	Failed     Outcome = "failed"
	NoChange   Outcome = "no_change"
	Stopped    Outcome = "stopped"
	Error      Outcome = "error"
)

// OutcomeInput is every fact the outcome depends on.
type OutcomeInput struct {
	// InfraError, when set, says what infrastructure failed (Docker,
	// GitHub, the model provider); it wins over everything else.
	InfraError string
	// StopReason, when set, says which budget, loop detector, timeout or
	// cancel ended the run.
	StopReason string
	// FilesChanged is the number of files in the diff.
	FilesChanged int
	// Baseline and Final are the two phases' results.
	Baseline, Final []CheckResult
	// Secret, when set, says what the secret scan found in the change:
	// such a change is never published, so the run is failed (a check the
	// application runs failed), and a stopped run says so too.
	Secret string
	// Blocking are the one-sentence details of the findings that keep a
	// change from being verified (tests removed, skipped, loosened, or none
	// run): a run that would be verified is unverified, naming the first.
	Blocking []string
	// Harness are the files of the test harness the change added or
	// edited (the paths of findings' harness_changed findings, whose
	// details are not in Blocking): a run whose checks all passed is
	// unverified, and its reason names them before any other finding,
	// because the checks ran with them.
	Harness []string
	// NotFetched are the dependencies the change needs that dependency
	// setup held back (a Go module on a host the setup network may not
	// reach): the final checks ran without them, so what they say, pass
	// or fail, is not about the change as written.
	NotFetched []string
}

// Decide returns the outcome and a one-line reason. It is a pure function
// of its input so every rule of docs/design.md §4.5 has a table test.
func Decide(in OutcomeInput) (Outcome, string) {
	o, reason := decideChecks(in)
	if in.Secret != "" {
		secret := "the change adds what looks like a secret (" + in.Secret + "), so nothing was committed"
		switch o {
		case Error:
		case Stopped:
			return o, oneLine(reason + "; " + secret)
		default:
			return Failed, oneLine(secret)
		}
	}
	if len(in.NotFetched) > 0 {
		switch o {
		case Verified, Failed:
			return Unverified, oneLine(notFetchedReason(in))
		case Unverified:
			return o, oneLine(notFetchedReason(in) + "; " + reason)
		}
	}
	if o == Verified && len(in.Harness) > 0 {
		return Unverified, oneLine(harnessReason(in))
	}
	if o == Verified && len(in.Blocking) > 0 {
		why := strings.TrimSuffix(in.Blocking[0], ".")
		if why != "" {
			why = strings.ToLower(why[:1]) + why[1:]
		}
		if len(in.Blocking) > 1 {
			why += fmt.Sprintf(" (and %d more findings)", len(in.Blocking)-1)
		}
		return Unverified, oneLine("every check passed, but " + why)
	}
	return o, reason
}

// notFetchedReason names up to three dependencies that were not fetched.
func notFetchedReason(in OutcomeInput) string {
	const shown = 3
	deps := strings.Join(in.NotFetched[:min(shown, len(in.NotFetched))], ", ")
	if n := len(in.NotFetched) - shown; n > 0 {
		deps += fmt.Sprintf(" and %d more", n)
	}
	return "the change needs " + deps + ", which dependency setup did not fetch (no allowlist entry names the host), so the final checks ran without them"
}

// harnessReason says that the checks passed with a harness the change
// wrote, naming up to three of its files.
func harnessReason(in OutcomeInput) string {
	const shown = 3
	files := strings.Join(in.Harness[:min(shown, len(in.Harness))], ", ")
	if n := len(in.Harness) - shown; n > 0 {
		files += fmt.Sprintf(" and %d more", n)
	}
	reason := "every check passed, but the change edits how tests run (" + files + "), so the checks prove only what that harness reports"
	if n := len(in.Blocking); n > 0 {
		reason += fmt.Sprintf(" (and %d more findings)", n)
	}
	return reason
}

// decideChecks is docs/design.md §4.5 on the run and its checks alone.
func decideChecks(in OutcomeInput) (Outcome, string) {
	switch {
	case in.InfraError != "":
		return Error, oneLine("infrastructure failure: " + in.InfraError)
	case in.StopReason != "":
		return Stopped, oneLine(in.StopReason)
	case in.FilesChanged == 0:
		return NoChange, "the run ended without changing any file"
	case len(in.Final) == 0:
		return Unverified, "no verification check was configured or detected, so nothing checked the change"
	}
	base := map[string]CheckResult{}
	for _, b := range in.Baseline {
		base[b.Name] = b
	}
	// A regression outranks every reason for doubt.
	for _, f := range in.Final {
		b, ok := base[f.Name]
		if f.Failed() && !f.Flaky && !f.ZeroTests && ok && b.Passed {
			return Failed, fmt.Sprintf("%s (%s) passed before the change and %s after it", f.Name, f.Command, failedHow(f))
		}
		// The image is the same in both phases, so a check that passed
		// and then could not run was broken by the change (a script it
		// deleted, say), not by the image.
		if f.CouldNotRun && ok && b.Passed {
			return Failed, fmt.Sprintf("%s (%s) passed before the change and could not run after it: %s", f.Name, f.Command, f.NotRunReason)
		}
	}
	var why []string
	for _, f := range in.Final {
		b, hasBase := base[f.Name]
		switch {
		case f.CouldNotRun:
			why = append(why, fmt.Sprintf("%s could not run: %s", f.Name, f.NotRunReason))
		case !f.Ran:
			why = append(why, fmt.Sprintf("%s did not run (%s)", f.Name, f.NotRunReason))
		case f.ZeroTests:
			why = append(why, fmt.Sprintf("%s ran no tests: %s", f.Name, f.ZeroTestsDetail))
		case f.Flaky:
			why = append(why, fmt.Sprintf("%s is flaky (%s)", f.Name, f.RunsText()))
		case f.Failed() && hasBase && b.Failed():
			why = append(why, fmt.Sprintf("%s was already failing before the change and still fails", f.Name))
		case f.Failed() && hasBase && !b.Ran:
			why = append(why, fmt.Sprintf("%s fails and did not run before the change, so it is unknown whether the change broke it", f.Name))
		case f.Failed():
			why = append(why, fmt.Sprintf("%s %s and has no baseline to compare with", f.Name, failedHow(f)))
		}
		// A check that failed at baseline and passes now was fixed by
		// the change: nothing to doubt.
	}
	if len(why) > 0 {
		return Unverified, oneLine(strings.Join(why, "; "))
	}
	return Verified, fmt.Sprintf("all %d checks ran and passed after the change", len(in.Final))
}

func failedHow(c CheckResult) string {
	switch {
	case c.TimedOut:
		return "timed out"
	case c.OOMKilled:
		return "ran out of memory"
	}
	return "failed (" + c.ExitText() + ")"
}

// oneLine keeps a reason to one line of reasonable length.
func oneLine(s string) string {
	s = text.Line(s)
	const max = 300
	if len(s) > max {
		s = text.Head(s, max) + "…"
	}
	return s
}
