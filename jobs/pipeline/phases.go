package pipeline

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/patchwright/patchwright/jobs/runstore"
)

// FilePhases is the run's phase timings (Timings as JSON), written into
// Job.OutDir beside the files of docs/design.md §4.1 at the end of every run
// that got as far as its ledger; runstore owns the name.
const FilePhases = runstore.FilePhases

// PhaseQueued is the time before the pipeline started: from the enqueue
// of the trigger (Job.EnqueuedAt) to Execute, so the wait in the queue
// and the worker's acknowledgement (reaction, status comment, reading the
// issue). It is in Timings only when Job.EnqueuedAt is set.
const PhaseQueued Phase = "queued"

// PhaseTime is how long one phase of a run took.
type PhaseTime struct {
	Phase    Phase         `json:"phase"`
	Duration time.Duration `json:"-"`
	// DurationMS is Duration in milliseconds, for the JSON form.
	DurationMS int64 `json:"duration_ms"`
}

// Timings are a run's phases in the order they ran, each with its
// duration, and the application's latency from the trigger to the
// published change.
type Timings struct {
	RunID string `json:"run_id"`
	// EnqueuedAt is Job.EnqueuedAt; zero when unknown.
	EnqueuedAt time.Time `json:"enqueued_at,omitzero"`
	// Phases are the phases that ran, PhaseQueued first when EnqueuedAt
	// is known. A phase the run did not reach is absent.
	Phases []PhaseTime `json:"phases"`
	// Total is the time from the start of Execute to its end.
	Total   time.Duration `json:"-"`
	TotalMS int64         `json:"total_ms"`
	// ToPublished is the time from EnqueuedAt to the end of the publish
	// phase (for the GitHub worker: the label to the pull request),
	// set only when the run published something (Result.URL) and
	// EnqueuedAt is known; zero otherwise.
	ToPublished   time.Duration `json:"-"`
	ToPublishedMS int64         `json:"to_published_ms,omitempty"`
}

// phaseClock times the phases as run.phase starts them: each start ends
// the phase before it. Guarded by run.mu.
type phaseClock struct {
	cur   Phase
	since time.Time
	done  []PhaseTime
	// published is when the publish phase ended with a URL; zero if not.
	published time.Time
}

// startLocked ends the current phase at now and starts name (PhaseDone
// starts nothing).
func (c *phaseClock) startLocked(name Phase, now time.Time) {
	if c.cur != "" && c.cur != PhaseDone {
		c.done = append(c.done, phaseTime(c.cur, now.Sub(c.since)))
	}
	c.cur, c.since = name, now
}

func phaseTime(p Phase, d time.Duration) PhaseTime {
	return PhaseTime{Phase: p, Duration: d, DurationMS: d.Milliseconds()}
}

// timings ends the current phase and returns the run's Timings.
func (r *run) timings(published bool) Timings {
	now := r.e.now()
	r.mu.Lock()
	if published && r.clock.cur == PhaseDone {
		// The publish phase ended where PhaseDone began.
		r.clock.published = r.clock.since
	}
	r.clock.startLocked(PhaseDone, now)
	phases := append([]PhaseTime(nil), r.clock.done...)
	publishedAt := r.clock.published
	r.mu.Unlock()
	t := Timings{RunID: r.job.ID, Total: now.Sub(r.start), TotalMS: now.Sub(r.start).Milliseconds()}
	if !r.job.EnqueuedAt.IsZero() {
		t.EnqueuedAt = r.job.EnqueuedAt.UTC()
		phases = append([]PhaseTime{phaseTime(PhaseQueued, r.start.Sub(r.job.EnqueuedAt))}, phases...)
		if !publishedAt.IsZero() {
			t.ToPublished = publishedAt.Sub(r.job.EnqueuedAt)
			t.ToPublishedMS = t.ToPublished.Milliseconds()
		}
	}
	t.Phases = phases
	return t
}

// recordTimings writes FilePhases and hands the timings to
// Executor.Timings. A run that wrote no ledger has no output directory to
// write into, and records nothing.
func (r *run) recordTimings(published bool) error {
	if r.ledger == nil {
		return nil
	}
	t := r.timings(published)
	if r.e.Timings != nil {
		r.e.Timings(t)
	}
	data, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return fmt.Errorf("encode phase timings: %w", err)
	}
	return writeFile(filepath.Join(r.job.OutDir, FilePhases), append(data, '\n'))
}
