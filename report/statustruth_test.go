package report

import (
	"strings"
	"testing"

	"github.com/patchwright/patchwright/verify"
)

// checked lists the checklist lines of a status comment that are ticked.
func checked(body string) []string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "- [x] ") {
			out = append(out, strings.Fields(l)[2])
		}
	}
	return out
}

// TestFailedStatusTicksOnlyWhatRan: a run that failed ticks the phases
// before the one it reached, never the ones after it.
func TestFailedStatusTicksOnlyWhatRan(t *testing.T) {
	cases := map[Phase]string{
		"":             "Queued",
		PhaseQueued:    "Queued",
		PhaseWorking:   "Queued Clone",
		PhaseVerifying: "Queued Clone Working",
	}
	for reached, want := range cases {
		got, err := StatusComment(Status{Issue: 3, Phase: PhaseFailed, Reached: reached, Reason: "it broke"})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(checked(got), " ") != want {
			t.Errorf("reached %q: ticked %v, want %s", reached, checked(got), want)
		}
		if strings.Contains(got, "/agent stop") {
			t.Errorf("reached %q: a failed run still offers /agent stop", reached)
		}
	}
}

// TestFailedStatusKeepsOpenPullRequest: a failure with a pull request open
// (a retry, a spent CI-fix budget) links it and says why, instead of
// saying Patchwright could not finish.
func TestFailedStatusKeepsOpenPullRequest(t *testing.T) {
	url := "https://github.example/acme/w/pull/2"
	reason := "the 2 automatic fix attempts `ci_fix_attempts` allows are spent"
	got, err := StatusComment(Status{Issue: 3, Phase: PhaseFailed, Reached: PhaseWorking, PullRequestURL: url, Reason: reason})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "left the [pull request]("+url+") as it was") || !strings.Contains(got, "are spent") || strings.Contains(got, "could not finish") {
		t.Errorf("status of a spent budget:\n%s", got)
	}
	in := base()
	in.Issue, in.Outcome, in.OpenPullRequestURL = 3, verify.NoChange, url
	fail, err := FailureComment(in)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(fail, "did not open a pull request") || !strings.Contains(fail, "[pull request]("+url+"), which stays open") {
		t.Errorf("failure comment with an open pull request:\n%s", fail)
	}
	in.OpenPullRequestURL = "javascript:alert(1)"
	if fail, _ := FailureComment(in); strings.Contains(fail, "javascript:") {
		t.Errorf("an unsafe link was rendered:\n%s", fail)
	}
}

// TestStoppedSaysStoppedOnce: a stopped run's reason (as verify.Decide
// gives it) reads "stopped" once in the status, the body and the failure
// comment.
func TestStoppedSaysStoppedOnce(t *testing.T) {
	_, reason := verify.Decide(verify.OutcomeInput{StopReason: "step_limit: the step limit of 40 was reached", FilesChanged: 1})
	st, err := StatusComment(Status{Issue: 3, Phase: PhaseDone, PullRequestURL: "https://github.example/p/1", Outcome: verify.Stopped, Reason: reason})
	if err != nil {
		t.Fatal(err)
	}
	in := base()
	in.Outcome, in.Reason = verify.Stopped, reason
	body, err := PRBody(in)
	if err != nil {
		t.Fatal(err)
	}
	fail, err := FailureComment(in)
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"status": st, "body": body, "failure": fail} {
		if strings.Contains(strings.ToLower(text), "stopped: stopped") || strings.Contains(strings.ToLower(text), "stopped**: stopped") {
			t.Errorf("%s says stopped twice:\n%s", name, text)
		}
		if !strings.Contains(text, "the step limit of 40 was reached") {
			t.Errorf("%s lost the reason", name)
		}
	}
}
