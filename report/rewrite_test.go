package report

import (
	"strings"
	"testing"

	"github.com/patchwright/patchwright/report/marker"
	"github.com/patchwright/patchwright/verify"
)

const pushedSHA = "0123456789abcdef0123456789abcdef01234567"

// prBodyWithPush is a published body: run, history and pushed markers.
func prBodyWithPush(t *testing.T) string {
	t.Helper()
	in := base()
	in.HeadCommit, in.Attempts = pushedSHA, manyAttempts(1)
	body, err := PRBody(in)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// readBack fails unless body carries the pushed commit, the run marker
// and a history of n attempts.
func readBack(t *testing.T, what, body string, n int) {
	t.Helper()
	if got := marker.ParsePushed(body); got != pushedSHA {
		t.Errorf("%s: pushed marker reads %q", what, got)
	}
	if _, _, ok := marker.ParseRun(body); !ok {
		t.Errorf("%s: run marker lost", what)
	}
	if got := len(ParseHistory(body).Attempts); got != n {
		t.Errorf("%s: history has %d attempts, want %d", what, got, n)
	}
	if c := strings.Count(body, "patchwright:history"); c != 1 {
		t.Errorf("%s: %d history markers", what, c)
	}
}

// TestReplaceHistoryKeepsEveryMarker: every body shape the app (or a
// person's edit) leaves, rewritten by an attempt that published nothing,
// still carries each marker it held. Before, a rewrite cut the body at the
// history and dropped the pushed marker written after it.
func TestReplaceHistoryKeepsEveryMarker(t *testing.T) {
	published := prBodyWithPush(t)
	_, sec, _ := strings.Cut(published, historyHeading)
	sec = historyHeading + sec[:strings.Index(sec, "-->")+3]
	shapes := map[string]string{
		"as published": published,
		// A person moved the pushed marker above the history.
		"pushed first": marker.Pushed(pushedSHA) + "\n" + strings.Replace(published, marker.Pushed(pushedSHA), "", 1),
		// A person deleted the visible list: only the hidden line is left.
		"marker only": strings.Replace(published, sec, marker.History([]byte(`{"attempts":[{"number":1}]}`)), 1),
		// A person deleted the whole section: the history is added.
		"no history": strings.Replace(published, sec, "", 1),
		// Text a person wrote after the markers stays after them.
		"text after": published + "\nA reviewer's note.\n",
	}
	for name, body := range shapes {
		h := History{Attempts: manyAttempts(2)}
		got, err := ReplaceHistory(body, h)
		if err != nil {
			t.Fatal(err)
		}
		readBack(t, name, got, 2)
		if name == "text after" && !strings.HasSuffix(got, "A reviewer's note.\n") {
			t.Errorf("%s: the text after the history moved:\n%s", name, got)
		}
		// A second attempt with no change rewrites the rewritten body.
		again, err := ReplaceHistory(got, History{Attempts: manyAttempts(3)})
		if err != nil {
			t.Fatal(err)
		}
		readBack(t, name+", twice", again, 3)
	}
}

// TestReplaceHistoryTooBigKeepsBody: when not even one attempt fits, the
// body comes back whole, markers and all.
func TestReplaceHistoryTooBigKeepsBody(t *testing.T) {
	body := prBodyWithPush(t) + strings.Repeat("x", MaxBody)
	got, err := ReplaceHistory(body, History{Attempts: manyAttempts(1)})
	if err != nil || got != body {
		t.Fatalf("a body too big to grow changed (%v)", err)
	}
}

// TestRepublishReadsBack: a retry that pushed re-renders the body from its
// facts; every marker is the new one, read back from where it stands.
func TestRepublishReadsBack(t *testing.T) {
	in := base()
	in.HeadCommit, in.Attempts, in.Attempt = pushedSHA, manyAttempts(2), 2
	body, err := PRBody(in)
	if err != nil {
		t.Fatal(err)
	}
	readBack(t, "republished", body, 2)
	if _, n, _ := marker.ParseRun(body); n != 2 {
		t.Errorf("run marker says attempt %d, want 2", n)
	}
}

// TestCommentsCarryTheirMarkers: the status and failure comments, which
// edit one another in place, and a plan comment through its settlement,
// each keep the marker that finds them.
func TestCommentsCarryTheirMarkers(t *testing.T) {
	st, err := StatusComment(Status{Issue: 9, Phase: PhaseWorking})
	if err != nil {
		t.Fatal(err)
	}
	in := base()
	in.Issue, in.Outcome = 9, verify.NoChange
	fail, err := FailureComment(in)
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"status": st, "failure": fail} {
		if !strings.Contains(body, marker.Status(9)) {
			t.Errorf("%s comment lacks the status marker", name)
		}
	}
	plan, err := PlanComment(Plan{Issue: 9, Task: "d-1", Text: "1. Do it."})
	if err != nil {
		t.Fatal(err)
	}
	// A writer moved the marker to the end, onto the status line's line.
	edited := strings.Replace(plan, marker.Plan(9, "d-1")+"\n", "", 1)
	edited = strings.TrimRight(edited, "\n") + " " + marker.Plan(9, "d-1") + "\n"
	for _, body := range []string{plan, edited} {
		got, err := PlanSettled(body, PlanSettlement{ApprovedBy: "maria"})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(got, marker.Plan(9, "d-1")) || !strings.Contains(got, "Approved by @maria") {
			t.Errorf("settled plan lost its marker or status:\n%s", got)
		}
	}
}
