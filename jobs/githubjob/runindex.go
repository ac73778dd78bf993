package githubjob

import (
	"context"
	"log/slog"
	"time"

	"github.com/patchwright/patchwright/internal/logkey"
	"github.com/patchwright/patchwright/jobs/interrupt"
	"github.com/patchwright/patchwright/jobs/pipeline"
	"github.com/patchwright/patchwright/jobs/runstore"
	"github.com/patchwright/patchwright/verify"
)

// RunIndex keeps each run's summary for the runs dashboard;
// *runstore.Store is one.
type RunIndex interface {
	PutSummary(ctx context.Context, s runstore.Summary) error
}

// runEntry is one run's summary while the run goes on; a nil entry (no
// RunIndex) does nothing.
type runEntry struct {
	index RunIndex
	s     runstore.Summary
	log   *slog.Logger
}

// indexRun starts run id's summary; nil when the pipeline keeps none.
func (p *Pipeline) indexRun(a request, id string, log *slog.Logger) *runEntry {
	if p.Runs == nil {
		return nil
	}
	return &runEntry{index: p.Runs, log: log, s: runstore.Summary{ID: id, Installation: a.issue.InstallationID,
		Repo: a.issue.Owner + "/" + a.issue.Repo, Issue: a.issue.Number, StartedAt: p.now().UTC()}}
}

// started lists the run, with the issue's title, while it goes on.
func (e *runEntry) started(ctx context.Context, pub *publisher) {
	if e == nil {
		return
	}
	e.s.Title = pub.title
	e.put(ctx)
}

// ended stores how the run ended: res's outcome and cost (an error when
// it ended with none) and the pull request it published or updated.
func (e *runEntry) ended(ctx context.Context, res *pipeline.Result, pub *publisher, now time.Time) {
	if e == nil {
		return
	}
	e.s.EndedAt = now.UTC()
	e.s.Outcome = string(verify.Error)
	if res != nil {
		e.s.Outcome, e.s.CostUSD = string(res.Outcome), res.CostUSD
	}
	switch {
	case pub == nil:
	case pub.published != 0:
		e.s.PR = pub.published
	case pub.pr != nil:
		e.s.PR = pub.pr.Number
	}
	e.put(ctx)
}

func (e *runEntry) put(ctx context.Context) {
	// A dashboard entry is not worth failing or delaying a run for.
	actx, cancel := interrupt.After(ctx)
	defer cancel()
	if err := e.index.PutSummary(actx, e.s); err != nil {
		e.log.Warn("the run is missing from the runs dashboard", logkey.Err, err)
	}
}
