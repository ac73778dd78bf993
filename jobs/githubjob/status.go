package githubjob

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/patchwright/patchwright/internal/logkey"
	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/pipeline"
	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/patchwright/patchwright/report"
	"github.com/patchwright/patchwright/report/marker"
)

// statusComment is the issue's one status comment, found by its hidden
// marker (so a re-run edits the comment an earlier run posted) and edited
// in place. While a run goes, progress edits are coalesced and sent at
// most once per interval from a goroutine of their own, so the Executor's
// Progress callback never waits on GitHub.
type statusComment struct {
	gh       statusComments
	issue    tasks.Issue
	bot      string
	interval time.Duration
	log      *slog.Logger

	mu     sync.Mutex // guards status
	status report.Status

	wmu sync.Mutex // serialises writes; guards id
	id  int64

	dirty chan struct{}
	quit  chan struct{}
	done  chan struct{}
}

// find looks for the status comment among the bot's comments; only the
// bot's count, so a person quoting the marker cannot redirect the edits.
func (s *statusComment) find(ctx context.Context) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.findLocked(ctx)
}

// findLocked is find with wmu held.
func (s *statusComment) findLocked(ctx context.Context) error {
	cs, err := s.gh.Comments(ctx, s.issue)
	if err != nil {
		return err
	}
	mark := marker.Status(s.issue.Number)
	for _, c := range cs {
		if strings.EqualFold(c.Author, s.bot) && strings.Contains(c.Body, mark) {
			s.id = c.ID
			return nil
		}
	}
	return nil
}

// write renders the current status and sends it.
func (s *statusComment) write(ctx context.Context) error {
	s.mu.Lock()
	st := s.status
	s.mu.Unlock()
	body, err := report.StatusComment(st)
	if err != nil {
		return err
	}
	return s.writeBody(ctx, body)
}

// writeBody creates the comment the first time and edits it afterwards.
func (s *statusComment) writeBody(ctx context.Context, body string) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.id != 0 {
		return s.gh.EditComment(ctx, s.issue, s.id, body)
	}
	id, err := s.gh.PostComment(ctx, s.issue, body)
	if err == nil {
		s.id = id
		return nil
	}
	if _, ok := githubapi.AsRefusal(err); ok {
		return err
	}
	// A 5xx or a timeout can come after GitHub stored the comment (the
	// transport does not send it again): find it by its marker before
	// anything posts a second one.
	if ferr := s.findLocked(ctx); ferr != nil || s.id == 0 {
		return err
	}
	return s.gh.EditComment(ctx, s.issue, s.id, body)
}

// fail marks the run failed for reason, keeping the phase it had reached
// so that the checklist ticks only what ran.
func (s *statusComment) fail(reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.status.Phase != report.PhaseFailed {
		s.status.Reached = s.status.Phase
	}
	s.status.Phase, s.status.Reason = report.PhaseFailed, reason
}

// progress maps the Executor's progress onto the status comment's phases.
func (s *statusComment) progress(p pipeline.Progress) {
	s.mu.Lock()
	switch p.Phase {
	case pipeline.PhaseClone, pipeline.PhaseSandbox, pipeline.PhaseSetup, pipeline.PhaseBaseline, pipeline.PhaseAgent:
		s.status.Phase = report.PhaseWorking
	case pipeline.PhaseFinal, pipeline.PhaseScan, pipeline.PhaseReview, pipeline.PhaseCommit, pipeline.PhasePublish:
		s.status.Phase = report.PhaseVerifying
	default:
		s.mu.Unlock()
		return
	}
	s.status.Step = p.Step
	if p.Baseline != nil {
		s.status.Baseline = p.Baseline
	}
	if p.Tool != "" {
		s.status.LastAction = "called " + p.Tool
	}
	s.mu.Unlock()
	if s.dirty != nil {
		select {
		case s.dirty <- struct{}{}:
		default:
		}
	}
}

// start begins sending progress edits until stop.
func (s *statusComment) start(ctx context.Context) {
	interval := s.interval
	if interval <= 0 {
		interval = DefaultStatusInterval
	}
	s.dirty, s.quit, s.done = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(s.done)
		for {
			select {
			case <-s.quit:
				return
			case <-ctx.Done():
				return
			case <-s.dirty:
			}
			if err := s.write(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("could not update the status comment", logkey.Err, err)
			}
			t := time.NewTimer(interval)
			select {
			case <-s.quit:
				t.Stop()
				return
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
	}()
}

// stop ends the progress edits and waits for one in flight.
func (s *statusComment) stop() {
	if s.quit == nil {
		return
	}
	close(s.quit)
	<-s.done
}
