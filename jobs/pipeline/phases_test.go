package pipeline

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// fakeClock advances by the step it is told before each reading.
type fakeClock struct {
	t    time.Time
	next time.Duration
}

func (c *fakeClock) now() time.Time {
	c.t = c.t.Add(c.next)
	return c.t
}

// TestTimings: each phase runs from its start to the next one's, the
// queued phase from the enqueue to Execute's start, and the time to the
// published change ends where the publish phase did; phases.json holds
// them under the keys the run page reads.
func TestTimings(t *testing.T) {
	start := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	clock := &fakeClock{t: start}
	out := t.TempDir()
	var got []Timings
	r := &run{
		e:     &Executor{Now: clock.now, Timings: func(tm Timings) { got = append(got, tm) }},
		job:   Job{ID: "timed", OutDir: out, EnqueuedAt: start.Add(-2 * time.Second)},
		start: start,
	}
	if err := r.openLedger(filepath.Join(out, FileLedger)); err != nil {
		t.Fatal(err)
	}
	defer r.closeLedger()
	steps := []struct {
		phase Phase
		took  time.Duration // since the phase before started
	}{
		{PhaseClone, 0}, {PhaseSandbox, 100 * time.Millisecond}, {PhaseBaseline, 300 * time.Millisecond},
		{PhaseAgent, 1500 * time.Millisecond}, {PhaseFinal, 50 * time.Millisecond},
		{PhasePublish, 1200 * time.Millisecond}, {PhaseDone, 400 * time.Millisecond},
	}
	for _, s := range steps {
		clock.next = s.took
		r.phase(s.phase)
	}
	clock.next = 5 * time.Millisecond
	if err := r.recordTimings(true); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("Executor.Timings called %d times, want once", len(got))
	}
	tm := got[0]
	want := []PhaseTime{
		phaseTime(PhaseQueued, 2*time.Second), phaseTime(PhaseClone, 100*time.Millisecond),
		phaseTime(PhaseSandbox, 300*time.Millisecond), phaseTime(PhaseBaseline, 1500*time.Millisecond),
		phaseTime(PhaseAgent, 50*time.Millisecond), phaseTime(PhaseFinal, 1200*time.Millisecond),
		phaseTime(PhasePublish, 400*time.Millisecond),
	}
	if !slices.Equal(tm.Phases, want) {
		t.Errorf("phases\n got %+v\nwant %+v", tm.Phases, want)
	}
	if tm.Total != 3555*time.Millisecond || tm.ToPublished != 5550*time.Millisecond {
		t.Errorf("total %v, to published %v; want 3.555s and 5.55s", tm.Total, tm.ToPublished)
	}
	data, err := os.ReadFile(filepath.Join(out, FilePhases))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		RunID  string `json:"run_id"`
		Phases []struct {
			Phase      string `json:"phase"`
			DurationMS int64  `json:"duration_ms"`
		} `json:"phases"`
		TotalMS       int64 `json:"total_ms"`
		ToPublishedMS int64 `json:"to_published_ms"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	if file.RunID != "timed" || len(file.Phases) != 7 || file.Phases[3].Phase != "baseline" || file.Phases[3].DurationMS != 1500 ||
		file.TotalMS != 3555 || file.ToPublishedMS != 5550 {
		t.Errorf("phases.json:\n%s", data)
	}
}

// TestTimingsWithoutEnqueueOrPublish: a run with no enqueue time (`patchwright
// run`) has no queued phase and no time to a pull request, nor has one
// that published nothing.
func TestTimingsWithoutEnqueueOrPublish(t *testing.T) {
	start := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	for name, job := range map[string]Job{
		"no enqueue time": {ID: "a"},
		"not published":   {ID: "b", EnqueuedAt: start.Add(-time.Second)},
	} {
		clock := &fakeClock{t: start, next: time.Second}
		r := &run{e: &Executor{Now: clock.now}, job: job, start: start}
		r.phase(PhaseClone)
		r.phase(PhaseDone)
		tm := r.timings(name == "no enqueue time")
		if tm.ToPublished != 0 {
			t.Errorf("%s: to published %v, want none", name, tm.ToPublished)
		}
		if hasQueued := slices.ContainsFunc(tm.Phases, func(p PhaseTime) bool { return p.Phase == PhaseQueued }); hasQueued != !job.EnqueuedAt.IsZero() {
			t.Errorf("%s: phases %+v", name, tm.Phases)
		}
	}
}
