package jobs

import (
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent/verify"
	"github.com/patchwright/patchwright/report"
)

// TestStatusProgressCarriesBaseline: once the Executor reports the
// baseline, the status comment ticks it with each check's result.
func TestStatusProgressCarriesBaseline(t *testing.T) {
	s := &statusComment{issue: Issue{Number: 41}, status: report.Status{Issue: 41}}
	s.progress(Progress{Phase: PhaseBaseline})
	before, err := report.StatusComment(s.status)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(before, "[x] Baseline") {
		t.Fatalf("baseline ticked before it ran:\n%s", before)
	}
	base := []verify.CheckResult{
		{Name: "build", Ran: true, Passed: true},
		{Name: "test", Ran: true, Passed: false},
	}
	s.progress(Progress{Phase: PhaseAgent, Step: 1, Tool: "read_file", Baseline: base})
	s.progress(Progress{Phase: PhaseAgent, Step: 2, Tool: "edit"})
	after, err := report.StatusComment(s.status)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(after, "[x] Baseline: build ✅ test ❌") {
		t.Errorf("status comment lacks the baseline results:\n%s", after)
	}
}
