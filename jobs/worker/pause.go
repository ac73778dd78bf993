package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/patchwright/patchwright/internal/logkey"
	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/interrupt"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// ErrPaused is the error of an agent job whose scope an operator paused
// (`patchwright pause`). Like ErrWaiting it is no failure: asynq puts the
// job back, and it starts once the pause is lifted. Nothing is lost.
var ErrPaused = errors.New("paused by the operator")

// pausePoll is how often a running job, and a held job on its last try,
// read the pauses: a pause reaches a running job within this, at its next
// step after that.
const pausePoll = time.Second

// pausedDelay is how long a held job stays back before it looks again.
const pausedDelay = 3 * time.Second

// hold returns ErrPaused when a pause covers issue, after telling the
// issue once per pause that its job is held. A job on its last try waits
// here instead (asynq archives a last try whatever the error).
func (h *Handlers) hold(ctx context.Context, issue tasks.Issue, run tasks.Attempt) error {
	for {
		p, paused, err := h.Queue.PausedFor(ctx, issue)
		if err != nil || !paused {
			return err
		}
		h.answerPaused(ctx, p, issue)
		if !run.Last() {
			return fmt.Errorf("%w (%s, by %s)", ErrPaused, p.Scope, p.By)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pausePoll):
		}
	}
}

// answerPaused says on the issue, once per issue and pause, that its job
// waits for the operator. A reply that could not be queued is logged and
// claimed back, so the next look says it.
func (h *Handlers) answerPaused(ctx context.Context, p jobs.Pause, issue tasks.Issue) {
	log := h.Logger.With(logkey.Issue, issue.String())
	first, err := h.Queue.ClaimPauseAnswer(ctx, p, issue)
	if err != nil || !first {
		if err != nil {
			log.Warn("could not claim the pause answer", logkey.Err, err)
		}
		return
	}
	id := fmt.Sprintf("pause:%d:%s", p.At.Unix(), strings.NewReplacer("/", "_", "#", "_", ":", "_").Replace(issue.String()+"@"+p.Scope.String()))
	msg := PausedMessage(p)
	if _, err := h.Queue.EnqueueReply(ctx, tasks.Reply{Issue: issue, DeliveryID: id, Body: msg}); err != nil {
		log.Warn("could not queue the pause answer", logkey.Err, err)
		if uerr := h.Queue.UnclaimPauseAnswer(ctx, p, issue); uerr != nil {
			log.Warn("could not claim the pause answer back", logkey.Err, uerr)
		}
	}
}

// PausedMessage is the one answer an issue gets while a pause holds its
// job.
func PausedMessage(p jobs.Pause) string {
	return fmt.Sprintf("Patchwright is paused by the operator for %s (since %s). This request is kept in the queue and starts when the operator resumes; nothing needs to be done again.",
		p.Scope, p.At.Format(time.RFC3339))
}

// watchPause returns ctx whose interrupt channel (interrupt.With)
// closes when the drain's does or when a pause comes to cover issue; the
// model loop then stops at its next step and the pipeline pushes the work
// so far as a draft. stop ends the watch.
func (h *Handlers) watchPause(ctx context.Context, issue tasks.Issue) (_ context.Context, stop func()) {
	ch := make(chan struct{})
	var mu sync.Mutex
	why := ""
	done := make(chan struct{})
	drain := interrupt.Chan(ctx)
	// The watch reads the job's context as it came in: ctx is rebound
	// below, after the goroutine starts.
	jobCtx := ctx
	go func() {
		defer close(ch)
		for {
			select {
			case <-done:
				return
			case <-drain:
				return
			case <-time.After(pausePoll):
			}
			p, paused, err := h.Queue.PausedFor(jobCtx, issue)
			if err != nil {
				h.Logger.Warn("could not read the pauses", logkey.Issue, issue.String(), logkey.Err, err)
				continue
			}
			if paused {
				mu.Lock()
				why = PausedInterruption(p)
				mu.Unlock()
				h.Logger.Info("job interrupted: paused by the operator", logkey.Issue, issue.String(), "scope", p.Scope.String(), "by", p.By)
				return
			}
		}
	}()
	read := func() string { mu.Lock(); defer mu.Unlock(); return why }
	ctx = interrupt.WithWhy(interrupt.With(ctx, ch), read)
	var once sync.Once
	return ctx, func() { once.Do(func() { close(done) }) }
}

// PausedInterruption is the stop reason (after "interrupted: ") of a run
// an operator's pause stopped.
func PausedInterruption(p jobs.Pause) string {
	return fmt.Sprintf("paused by the operator (%s, by %s) before the model finished, so its work so far was pushed as a draft. The final checks were skipped, so nothing verified this change. Comment `/agent retry` after the operator resumes to continue", p.Scope, p.By)
}
