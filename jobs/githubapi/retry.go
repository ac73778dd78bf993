package githubapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Retry defaults. GitHub asks clients that hit a secondary rate limit
// without a Retry-After header to wait at least a minute; 5xx answers are
// usually gone within seconds.
const (
	// DefaultMaxRetries is how often one request is tried again.
	DefaultMaxRetries = 4
	// DefaultBackoff is the first wait after a 5xx; it doubles each time.
	DefaultBackoff = time.Second
	// SecondaryLimitWait is the wait after a secondary rate limit that came
	// without Retry-After.
	SecondaryLimitWait = time.Minute
	// DefaultMaxWait caps any single wait, Retry-After included: a job
	// would rather fail and be retried by the queue than sleep for an hour.
	DefaultMaxWait = 5 * time.Minute
)

// RetryTransport retries GitHub requests that failed for a reason that
// passes: 429, a 403 that is a rate limit (secondary, or primary with no
// requests left), and 500, 502, 503 and 504. It waits what Retry-After
// says, else until X-RateLimit-Reset for a primary limit, else a minute for
// a secondary limit, else an exponential backoff. Requests whose body
// cannot be replayed are not retried. Zero fields take the defaults named.
type RetryTransport struct {
	// Base sends the requests; default http.DefaultTransport.
	Base http.RoundTripper
	// MaxRetries; default DefaultMaxRetries (negative: no retries).
	MaxRetries int
	// Backoff is the first 5xx wait; default DefaultBackoff.
	Backoff time.Duration
	// MaxWait caps a wait; default DefaultMaxWait.
	MaxWait time.Duration
	// Sleep waits d or until ctx ends; default a timer. Tests inject one
	// that records the wait and returns at once.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock for X-RateLimit-Reset; default time.Now.
	Now func() time.Time
}

// RoundTrip implements http.RoundTripper.
func (t *RetryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	maxRetries := t.MaxRetries
	if maxRetries == 0 {
		maxRetries = DefaultMaxRetries
	}
	for attempt := 0; ; attempt++ {
		r := req
		if attempt > 0 {
			var err error
			if r, err = rewind(req); err != nil {
				return nil, err
			}
		}
		resp, err := base.RoundTrip(r)
		if err != nil || attempt >= maxRetries {
			return resp, err
		}
		wait, retry := t.waitFor(resp, attempt)
		if !retry || (req.Body != nil && req.GetBody == nil) {
			return resp, nil
		}
		// Drain a little so the connection can be reused, then close.
		_, _ = io.CopyN(io.Discard, resp.Body, 64<<10)
		resp.Body.Close()
		if err := t.sleep(req.Context(), wait); err != nil {
			return nil, fmt.Errorf("%s %s: waiting %s to retry after HTTP %d: %w", req.Method, req.URL.Path, wait, resp.StatusCode, err)
		}
	}
}

func rewind(req *http.Request) (*http.Request, error) {
	r := req.Clone(req.Context())
	if req.GetBody != nil {
		b, err := req.GetBody()
		if err != nil {
			return nil, fmt.Errorf("replay body of %s %s: %w", req.Method, req.URL.Path, err)
		}
		r.Body = b
	}
	return r, nil
}

// waitFor decides whether resp is worth a retry and how long to wait.
// It reads (and puts back) a 403 body to tell a rate limit from a denial.
func (t *RetryTransport) waitFor(resp *http.Response, attempt int) (time.Duration, bool) {
	var wait time.Duration
	switch code := resp.StatusCode; {
	case code == http.StatusTooManyRequests:
		wait = SecondaryLimitWait
	case code == http.StatusForbidden:
		primary := resp.Header.Get("X-RateLimit-Remaining") == "0"
		if !primary && !secondaryLimit(resp) {
			return 0, false
		}
		wait = SecondaryLimitWait
		if primary {
			wait = t.untilReset(resp)
		}
	case code == http.StatusInternalServerError, code == http.StatusBadGateway,
		code == http.StatusServiceUnavailable, code == http.StatusGatewayTimeout:
		wait = t.backoff() << attempt
	default:
		return 0, false
	}
	if s, err := strconv.Atoi(strings.TrimSpace(resp.Header.Get("Retry-After"))); err == nil && s >= 0 {
		wait = time.Duration(s) * time.Second
	}
	return min(wait, t.maxWait()), true
}

// secondaryLimit reports whether a 403 is GitHub's secondary rate limit:
// a Retry-After header, or the message GitHub sends for it.
func secondaryLimit(resp *http.Response) bool {
	if resp.Header.Get("Retry-After") != "" {
		return true
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	if err != nil {
		return false
	}
	var e struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(b, &e)
	m := strings.ToLower(e.Message)
	return strings.Contains(m, "secondary rate limit") || strings.Contains(m, "abuse detection")
}

func (t *RetryTransport) untilReset(resp *http.Response) time.Duration {
	reset, err := strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64)
	if err != nil {
		return SecondaryLimitWait
	}
	now := time.Now
	if t.Now != nil {
		now = t.Now
	}
	return max(time.Unix(reset, 0).Sub(now())+time.Second, time.Second)
}

func (t *RetryTransport) backoff() time.Duration {
	if t.Backoff > 0 {
		return t.Backoff
	}
	return DefaultBackoff
}

func (t *RetryTransport) maxWait() time.Duration {
	if t.MaxWait > 0 {
		return t.MaxWait
	}
	return DefaultMaxWait
}

func (t *RetryTransport) sleep(ctx context.Context, d time.Duration) error {
	if t.Sleep != nil {
		return t.Sleep(ctx, d)
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
