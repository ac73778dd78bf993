// Package interrupt carries a job's interrupt through its context: the
// channel a worker's drain or an operator's pause closes, what closed it,
// and the bookkeeping context after a job's own has ended. It imports
// nothing of ours, so the worker need not compile the agent to use it.
package interrupt

import (
	"context"
	"errors"
	"time"
)

type interruptKey struct{}

// With returns ctx carrying ch, which a worker's drain closes
// shortly before its grace period ends: the job's model loop then stops
// between steps and the job pushes what it has as a draft marked
// interrupted (jobs/githubjob hands ch to agent.WithInterrupt).
func With(ctx context.Context, ch <-chan struct{}) context.Context {
	return context.WithValue(ctx, interruptKey{}, ch)
}

// Chan is ctx's interrupt channel, nil (never closed) when none.
func Chan(ctx context.Context) <-chan struct{} {
	ch, _ := ctx.Value(interruptKey{}).(<-chan struct{})
	return ch
}

// ErrHandedBack ends a run that a drain interrupted before the model had
// changed anything: there is nothing to push, so the job goes back to the
// queue like one whose grace period ran out (no failure counted).
var ErrHandedBack = errors.New("the worker is shutting down and the run had no change yet: handed back to the queue")

// After is for bookkeeping after a job's own context may have ended
// (timeout or cancel): it keeps ctx's values but not its cancellation, and
// gives the bookkeeping five seconds.
func After(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
}

type interruptWhyKey struct{}

// WithWhy returns ctx carrying why, which says what closed its
// interrupt channel when something other than a drain did (an operator's
// pause): read once the channel is closed, "" for a drain.
func WithWhy(ctx context.Context, why func() string) context.Context {
	return context.WithValue(ctx, interruptWhyKey{}, why)
}

// Why is what interrupted ctx's run, "" for a drain (or none).
func Why(ctx context.Context) string {
	if why, ok := ctx.Value(interruptWhyKey{}).(func() string); ok {
		return why()
	}
	return ""
}
