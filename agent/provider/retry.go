package provider

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Retry defaults.
const (
	DefaultMaxRetries = 4
	DefaultBaseDelay  = time.Second
	DefaultMaxDelay   = time.Minute
)

// Retry is the policy for transient failures. The SDKs' own retry loops
// are switched off: both retry every 429, including OpenAI's
// insufficient_quota, which never succeeds on retry.
type Retry struct {
	// MaxRetries is how many times a transient failure is retried after the
	// first attempt. Zero means DefaultMaxRetries; negative means never.
	MaxRetries int
	// BaseDelay is the first backoff step, doubled on every retry.
	// Zero means DefaultBaseDelay.
	BaseDelay time.Duration
	// MaxDelay caps the backoff. A Retry-After longer than MaxDelay ends the
	// retries, so the job queue can reschedule instead of holding a worker.
	// Zero means DefaultMaxDelay.
	MaxDelay time.Duration
	// Sleep waits between attempts; nil means a timer that stops when ctx
	// ends. Tests inject one that records the wait and returns at once.
	Sleep func(ctx context.Context, d time.Duration) error
}

func (r Retry) maxRetries() int {
	switch {
	case r.MaxRetries < 0:
		return 0
	case r.MaxRetries == 0:
		return DefaultMaxRetries
	}
	return r.MaxRetries
}

func (r Retry) maxDelay() time.Duration {
	if r.MaxDelay <= 0 {
		return DefaultMaxDelay
	}
	return r.MaxDelay
}

// backoff is the wait before retry number n (1-based): the server's
// Retry-After when given, otherwise exponential with jitter in [d/2, d]
// so that many workers hitting one limit do not retry in step.
func (r Retry) backoff(n int, serverWait time.Duration) time.Duration {
	if serverWait > 0 {
		return serverWait
	}
	base := r.BaseDelay
	if base <= 0 {
		base = DefaultBaseDelay
	}
	d := r.maxDelay()
	if n < 30 { // beyond that the shift overflows; the cap applies anyway
		d = min(base<<(n-1), d)
	}
	return d/2 + rand.N(d/2+1)
}

func (r Retry) sleep(ctx context.Context, d time.Duration) error {
	if r.Sleep != nil {
		return r.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// do runs call until it succeeds, fails with something other than a
// transient *Error, or the retries are used up.
func (r Retry) do(ctx context.Context, log *slog.Logger, call func(context.Context) (*Response, error)) (*Response, error) {
	limit := r.maxRetries()
	for attempt := 1; ; attempt++ {
		resp, err := call(ctx)
		if err == nil {
			return resp, nil
		}
		var pe *Error
		if !errors.As(err, &pe) {
			return nil, err
		}
		pe.Attempts = attempt
		if pe.Kind != KindTransient || attempt > limit || pe.RetryAfter > r.maxDelay() {
			return nil, pe
		}
		wait := r.backoff(attempt, pe.RetryAfter)
		log.WarnContext(ctx, "model call failed, retrying",
			"provider", pe.Provider, "status", pe.StatusCode, "code", pe.Code,
			"attempt", attempt, "wait", wait)
		if err := r.sleep(ctx, wait); err != nil {
			return nil, fmt.Errorf("wait to retry after %w: %w", pe, err)
		}
	}
}

// retryAfter reads the wait a response asks for: retry-after-ms (OpenAI),
// then Retry-After in seconds or as an HTTP date. Zero when absent or
// unreadable.
func retryAfter(h http.Header) time.Duration {
	if h == nil {
		return 0
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}
