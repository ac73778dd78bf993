package webhook

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/patchwright/patchwright/internal/logkey"
)

// Deliveries is the app's delivery log on GitHub. *githubapi.App satisfies it.
type Deliveries interface {
	Deliveries(ctx context.Context, cursor string) ([]*github.HookDelivery, string, error)
	Redeliver(ctx context.Context, id int64) error
}

// Redeliverer defaults.
const (
	// DefaultRedeliverInterval is how often the delivery log is read.
	DefaultRedeliverInterval = 5 * time.Minute
	// DefaultRedeliverLookback is how far back deliveries are considered;
	// GitHub keeps them for 3 days.
	DefaultRedeliverLookback = 24 * time.Hour
	// MaxRedeliveries is how often one GUID is requested again.
	MaxRedeliveries = 3
	// maxPages bounds one pass over the log (100 deliveries a page).
	maxPages = 10
)

// Redeliverer asks GitHub to redeliver failed deliveries, which GitHub never
// does by itself. A delivery GUID counts as failed when none of its attempts
// got a 2xx or 4xx answer: a 4xx is Patchwright's final word on that body
// (bad signature, malformed), while 5xx and no answer (status 0: timeout or
// connection refused) are worth another try. The newest attempt of a failed
// GUID is redelivered, at most MaxRedeliveries times per process. A
// redelivery keeps its GUID, so a job that was in fact enqueued is not
// enqueued twice (the task ID is the delivery GUID).
type Redeliverer struct {
	// Source is the delivery log; required.
	Source Deliveries
	// Lookback is how far back to look; default DefaultRedeliverLookback.
	Lookback time.Duration
	// Logger; default slog.Default().
	Logger *slog.Logger
	// Now is the clock; default time.Now.
	Now func() time.Time

	requested map[string]int // GUID → redeliveries requested
}

// Run calls Pass every interval (default DefaultRedeliverInterval) until ctx ends.
func (r *Redeliverer) Run(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = DefaultRedeliverInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, err := r.Pass(ctx); err != nil && ctx.Err() == nil {
			r.logger().Error("redeliver failed deliveries", logkey.Err, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Pass reads the log once and requests redeliveries; it returns how many.
func (r *Redeliverer) Pass(ctx context.Context) (int, error) {
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	lookback := r.Lookback
	if lookback <= 0 {
		lookback = DefaultRedeliverLookback
	}
	if r.requested == nil {
		r.requested = map[string]int{}
	}
	since := now().Add(-lookback)
	states, order, err := r.readLog(ctx, since)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, guid := range order {
		s := states[guid]
		if s.ok || r.requested[guid] >= MaxRedeliveries {
			continue
		}
		if err := r.Source.Redeliver(ctx, s.newest); err != nil {
			return n, err
		}
		r.requested[guid]++
		n++
		r.logger().Info("requested redelivery", logkey.Delivery, guid, "attempt_id", s.newest)
	}
	return n, nil
}

// guidState is what the log says of one delivery GUID: its newest
// attempt, and whether any attempt got a 2xx or 4xx answer.
type guidState struct {
	newest int64
	ok     bool
}

// readLog reads the delivery log back to since, at most maxPages pages:
// the GUIDs in log order (newest first) and their states.
func (r *Redeliverer) readLog(ctx context.Context, since time.Time) (map[string]*guidState, []string, error) {
	states := map[string]*guidState{}
	var order []string
	cursor := ""
	for range maxPages {
		page, next, err := r.Source.Deliveries(ctx, cursor)
		if err != nil {
			return nil, nil, err
		}
		old := false
		for _, d := range page {
			if d.GetDeliveredAt().Time.Before(since) {
				old = true
				continue
			}
			s, seen := states[d.GetGUID()]
			if !seen {
				s = &guidState{newest: d.GetID()}
				states[d.GetGUID()] = s
				order = append(order, d.GetGUID())
			}
			if code := d.GetStatusCode(); code >= 200 && code < 500 {
				s.ok = true
			}
		}
		if old || next == "" {
			break
		}
		cursor = next
	}
	return states, order, nil
}

func (r *Redeliverer) logger() *slog.Logger {
	if r.Logger != nil {
		return r.Logger
	}
	return slog.Default()
}
