package githubjob

import (
	"strings"
	"testing"

	"github.com/patchwright/patchwright/jobs/pipeline"
	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/patchwright/patchwright/report"
	"github.com/patchwright/patchwright/verify"
)

// TestStatusProgressCarriesBaseline: once the Executor reports the
// baseline, the status comment ticks it with each check's result.
func TestStatusProgressCarriesBaseline(t *testing.T) {
	s := &statusComment{issue: tasks.Issue{Number: 41}, status: report.Status{Issue: 41}}
	s.progress(pipeline.Progress{Phase: pipeline.PhaseBaseline})
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
	s.progress(pipeline.Progress{Phase: pipeline.PhaseAgent, Step: 1, Tool: "read_file", Baseline: base})
	s.progress(pipeline.Progress{Phase: pipeline.PhaseAgent, Step: 2, Tool: "edit"})
	after, err := report.StatusComment(s.status)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(after, "[x] Baseline: build ✅ test ❌") {
		t.Errorf("status comment lacks the baseline results:\n%s", after)
	}
}
