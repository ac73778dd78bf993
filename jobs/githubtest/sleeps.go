package githubtest

import (
	"context"
	"sync"
	"time"
)

// Sleeps records the waits a retry policy asks for instead of waiting:
// pass its Sleep where a package takes a sleep function. Safe for
// concurrent use.
type Sleeps struct {
	mu    sync.Mutex
	waits []time.Duration
}

// Sleep records d and returns at once, with the context's error.
func (s *Sleeps) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waits = append(s.waits, d)
	return ctx.Err()
}

// All returns the waits so far, in order.
func (s *Sleeps) All() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}
