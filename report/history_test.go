package report

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/patchwright/patchwright/verify"
)

// manyAttempts is a history at its bound, with long reasons.
func manyAttempts(n int) []Attempt {
	var out []Attempt
	start := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	for i := range n {
		out = append(out, Attempt{Number: i + 1, Started: start.Add(time.Duration(i) * time.Hour), TriggeredBy: "maria",
			Trigger: "/agent retry", Outcome: verify.Failed, Reason: strings.Repeat("a check failed after the change; ", 30)})
	}
	return out
}

// TestBodyWithHistoryFitsLimit: the history is part of what is fitted to
// GitHub's limit, so a body that alone is just under it stays under it
// with twenty attempts and failed-check output in the history.
func TestBodyWithHistoryFitsLimit(t *testing.T) {
	in := base()
	in.Outcome = verify.Failed
	for i := range 12 {
		c := verify.CheckResult{Name: fmt.Sprintf("check%d", i), Command: "make check", Phase: verify.Final, Ran: true, ExitCode: 2,
			Output: strings.Repeat("failing output line\n", 400)}
		in.Final = append(in.Final, c)
	}
	in.Attempts = manyAttempts(25)
	body, err := PRBody(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(body) >= MaxBody {
		t.Fatalf("body with history is %d bytes, limit %d", len(body), MaxBody)
	}
	h := ParseHistory(body)
	if len(h.Attempts) == 0 || h.Attempts[len(h.Attempts)-1].Number != 25 {
		t.Fatalf("history lost the latest attempt: %+v", h.Attempts)
	}
	if !strings.Contains(body, historyHeading) {
		t.Error("body has no visible attempt history")
	}
}

// TestHistoryRoundTrip: what PRBody writes, ParseHistory reads, with the
// failed final checks for the next attempt.
func TestHistoryRoundTrip(t *testing.T) {
	in := base()
	in.Final[2].Passed, in.Final[2].ExitCode, in.Final[2].Output = false, 1, "--- FAIL: TestX\n"
	in.Attempts = manyAttempts(2)
	body, err := PRBody(in)
	if err != nil {
		t.Fatal(err)
	}
	h := ParseHistory(body)
	if len(h.Attempts) != 2 || h.Attempts[1].TriggeredBy != "maria" || len(h.Failed) != 1 || h.Failed[0].Name != "test" {
		t.Fatalf("history = %+v", h)
	}
	if ParseHistory("no history here").Attempts != nil {
		t.Error("a body without a history gave one")
	}
	if got := ParseHistory("<!-- patchwright:history !!! -->"); got.Attempts != nil {
		t.Errorf("a broken marker gave %+v", got)
	}
}

// TestReplaceHistory: an attempt that published nothing replaces the
// history section of the old body, leaving the rest, within the limit.
func TestReplaceHistory(t *testing.T) {
	old, err := PRBody(func() Input { in := base(); in.Attempts = manyAttempts(1); return in }())
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReplaceHistory(old, History{Attempts: manyAttempts(2)})
	if err != nil {
		t.Fatal(err)
	}
	before, _, _ := strings.Cut(old, historyHeading)
	if !strings.HasPrefix(got, before) || strings.Count(got, historyHeading) != 1 {
		t.Fatalf("the body around the history changed:\n%s", got)
	}
	if n := len(ParseHistory(got).Attempts); n != 2 {
		t.Fatalf("history has %d attempts, want 2", n)
	}
	big := strings.Repeat("x", MaxBody-200)
	got, err = ReplaceHistory(big, History{Attempts: manyAttempts(20)})
	if err != nil || len(got) >= MaxBody {
		t.Fatalf("ReplaceHistory on a full body: %d bytes, %v", len(got), err)
	}
}
