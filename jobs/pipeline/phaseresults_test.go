package pipeline

import (
	"reflect"
	"slices"
	"testing"
)

// TestRunHoldsPhaseResults pins run's shape (issue 40): what spans the
// run (executor, job, clock, clone, workspace, ledger, scanner, the
// progress lock) and one field per phase's result. A new loose field
// fails here: put it in the result of the phase that establishes it
// (phaseresults.go), or, if it truly spans the run, add it below and say
// why in its comment.
func TestRunHoldsPhaseResults(t *testing.T) {
	want := []string{
		// What spans the run.
		"e", "job", "start", "repo", "ws", "ledger", "scanner", "mu", "progress", "clock", "spans",
		// One per phase, in the order they run.
		"clone", "box", "first", "baseline", "model", "fin", "ended",
	}
	typ := reflect.TypeFor[run]()
	var got []string
	for i := range typ.NumField() {
		f := typ.Field(i)
		got = append(got, f.Name)
		if !slices.Contains(want, f.Name) {
			t.Errorf("run has a loose field %s (%s): put it in its phase's result (phaseresults.go)", f.Name, f.Type)
		}
	}
	for _, name := range want {
		if !slices.Contains(got, name) {
			t.Errorf("run lost its field %s; update this test's list", name)
		}
	}
}
