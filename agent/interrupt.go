package agent

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/agent/provider"
	"github.com/patchwright/patchwright/internal/logkey"
)

type interruptKey struct{}

// WithInterrupt returns ctx carrying ch: once ch is closed, a Run under
// that context stops with Interrupted. A tool call or model request still
// running is cut short (its context ends: a command is killed, a stream
// dropped) and recorded so; the turn's calls not yet started are answered
// "not run"; no further request is sent. A worker's drain closes it
// shortly before its grace period ends, so the pipeline can still commit
// and push whatever the tree holds. A nil ch never interrupts.
func WithInterrupt(ctx context.Context, ch <-chan struct{}) context.Context {
	return context.WithValue(ctx, interruptKey{}, ch)
}

type interruptReasonKey struct{}

// WithInterruptReason returns ctx carrying reason, which says what closed
// its interrupt channel when it was not a worker's drain (an operator's
// pause). It is read once the channel is closed; "" means a drain.
func WithInterruptReason(ctx context.Context, reason func() string) context.Context {
	return context.WithValue(ctx, interruptReasonKey{}, reason)
}

// InterruptReason is ctx's interrupt reason (WithInterruptReason), "" for
// a drain or none.
func InterruptReason(ctx context.Context) string {
	if reason, ok := ctx.Value(interruptReasonKey{}).(func() string); ok {
		return reason()
	}
	return ""
}

// interruptStop is the Interrupted stop once ctx's interrupt channel is
// closed, nil before.
func interruptStop(ctx context.Context) *stop {
	ch, _ := ctx.Value(interruptKey{}).(<-chan struct{})
	if ch == nil {
		return nil
	}
	select {
	case <-ch:
		if why := InterruptReason(ctx); why != "" {
			return &stop{Interrupted, why, nil}
		}
		return &stop{Interrupted, "the worker is shutting down: the run was interrupted so its work so far could be pushed before the shutdown grace period ended", nil}
	default:
		return nil
	}
}

// cutOnInterrupt returns a context that also ends when ctx's interrupt
// channel closes, for one tool call or model request, and ended, which
// the caller calls once the call returns: it reports whether the
// interrupt cut the call short rather than the call ending by itself.
func cutOnInterrupt(ctx context.Context) (context.Context, func() (cut bool)) {
	ch, _ := ctx.Value(interruptKey{}).(<-chan struct{})
	if ch == nil {
		return ctx, func() bool { return false }
	}
	c, cancel := context.WithCancel(ctx)
	var state atomic.Int32 // 0 running, 1 returned, 2 cut
	go func() {
		select {
		case <-ch:
			if state.CompareAndSwap(0, 2) {
				cancel()
			}
		case <-c.Done():
		}
	}()
	var once sync.Once
	var cut bool
	return c, func() bool {
		once.Do(func() {
			cut = !state.CompareAndSwap(0, 1)
			cancel()
		})
		return cut
	}
}

// cutText is what the model and the ledger see of a call an interrupt cut.
const cutText = "error: interrupted: the worker is shutting down, and this call was cut short before it finished"

// deliverNotes adds the notes people sent since the last turn to the
// conversation's last user message (a tool result or the opening
// message): the model reads them with the coming request.
func (r *runner) deliverNotes(ctx context.Context) *stop {
	if r.cfg.Notes == nil {
		return nil
	}
	notes, err := r.cfg.Notes(ctx)
	if err != nil {
		r.log.Warn("could not read notes for the run", logkey.Err, err)
		return nil
	}
	for _, n := range notes {
		// Capped as the issue is: 20 notes of a 64 KiB comment each would
		// crowd out the work.
		text := r.withhold(ctx, "note", capText(Sanitize(n.Text), r.lim.MaxIssue))
		if strings.TrimSpace(text) == "" {
			continue
		}
		if _, err := r.cfg.Ledger.Append(&ledger.UserMessage{Step: r.steps + 1, From: n.From, Text: text}); err != nil {
			return r.failure(ctx, Infrastructure, &ledgerError{err})
		}
		msg := fmt.Sprintf("A note from @%s, who has write access to the repository, sent while you work (take it into account from now on):\n<note>\n%s\n</note>", n.From, text)
		last := &r.req.Messages[len(r.req.Messages)-1]
		if last.Role != provider.RoleUser {
			r.req.Messages = append(r.req.Messages, provider.Message{Role: provider.RoleUser})
			last = &r.req.Messages[len(r.req.Messages)-1]
		}
		last.Text = strings.TrimSpace(last.Text + "\n\n" + msg)
	}
	return nil
}
