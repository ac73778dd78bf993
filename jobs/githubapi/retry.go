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
	"sync"
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

// The kinds of rate limit RetryTransport tells OnLimit about.
const (
	// LimitPrimary: no requests left (X-RateLimit-Remaining: 0).
	LimitPrimary = "primary"
	// LimitSecondary: GitHub's secondary (abuse) limit, with requests left.
	LimitSecondary = "secondary"
)

// RetryTransport retries GitHub requests that failed for a reason that
// passes, as GitHub's rate-limit documentation asks:
//   - a primary rate limit (403 or 429 with X-RateLimit-Remaining: 0)
//     waits until X-RateLimit-Reset; a reset further off than MaxWait is
//     not waited for (the error is returned at once: asking again sooner
//     would only fail again);
//   - a secondary rate limit (429, or a 403 with Retry-After or GitHub's
//     message) waits Retry-After, else a minute, and each further
//     secondary limit of the same request at least twice the last wait;
//   - after a rate limit, other requests with the same credentials wait
//     out the same pause before they are sent (GitHub: requests made
//     while limited can get an integration banned);
//   - 500, 502, 503 and 504 back off exponentially, except for the
//     requests that create content (a comment, a check run, an issue): a
//     5xx can come after GitHub stored it, so sending it again could post
//     it twice. Their caller looks it up before posting again.
//
// Requests whose body cannot be replayed are not retried. Zero fields
// take the defaults named.
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
	// OnLimit, when set, is told of every answer that is a rate limit,
	// with its kind (LimitPrimary, LimitSecondary), retried or not: the
	// transport is the one place that decides what a rate limit is, and
	// metrics count what it decided.
	OnLimit func(kind string)
	// OnWait, when set, is told of every wait before it starts: before a
	// retry, and while another request's rate limit holds the credentials
	// back.
	OnWait func(d time.Duration)

	mu sync.Mutex
	// paused is when each credential (Authorization header) may send
	// again after a rate limit.
	paused map[string]time.Time
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
	if err := t.waitPause(req); err != nil {
		return nil, err
	}
	var last time.Duration // the last secondary-limit wait
	for attempt := 0; ; attempt++ {
		r := req
		if attempt > 0 {
			var err error
			if r, err = rewind(req); err != nil {
				return nil, err
			}
		}
		resp, err := base.RoundTrip(r)
		if err != nil {
			return resp, err
		}
		d := t.decide(req, resp, attempt, last)
		if d.kind != "" && t.OnLimit != nil {
			t.OnLimit(d.kind)
		}
		if attempt >= maxRetries || !d.retry || (req.Body != nil && req.GetBody == nil) {
			return resp, nil
		}
		if d.kind == LimitSecondary {
			last = d.wait
		}
		if d.limit {
			t.pause(req, d.wait)
		}
		// Drain a little so the connection can be reused, then close.
		_, _ = io.CopyN(io.Discard, resp.Body, 64<<10)
		resp.Body.Close()
		if err := t.sleep(req.Context(), d.wait); err != nil {
			return nil, fmt.Errorf("%s %s: waiting %s to retry after HTTP %d: %w", req.Method, req.URL.Path, d.wait, resp.StatusCode, err)
		}
	}
}

// decision is what a response is, whether to retry it and after how long.
type decision struct {
	wait  time.Duration
	retry bool
	// kind is LimitPrimary or LimitSecondary for a rate limit, else "".
	kind string
	// limit: hold the credentials back for wait (a rate limit whose wait
	// is taken).
	limit bool
}

// waitPause waits out a rate-limit pause of req's credentials.
func (t *RetryTransport) waitPause(req *http.Request) error {
	key := req.Header.Get("Authorization")
	t.mu.Lock()
	until := t.paused[key]
	t.mu.Unlock()
	wait := until.Sub(t.now())
	if wait <= 0 {
		return nil
	}
	wait = min(wait, t.maxWait())
	if err := t.sleep(req.Context(), wait); err != nil {
		return fmt.Errorf("%s %s: waiting %s for a rate limit to pass: %w", req.Method, req.URL.Path, wait, err)
	}
	return nil
}

// pause holds req's credentials back for wait.
func (t *RetryTransport) pause(req *http.Request, wait time.Duration) {
	key := req.Header.Get("Authorization")
	until := t.now().Add(wait)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.paused == nil {
		t.paused = map[string]time.Time{}
	}
	now := t.now()
	for k, u := range t.paused {
		if !u.After(now) {
			delete(t.paused, k) // tokens rotate: keep the map small
		}
	}
	if until.After(t.paused[key]) {
		t.paused[key] = until
	}
}

func (t *RetryTransport) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

// decide reads resp: the one rule for what a rate limit is (see
// RetryTransport), as go-github's CheckResponse has it. last is the wait
// after this request's previous secondary limit (0 for none).
func (t *RetryTransport) decide(req *http.Request, resp *http.Response, attempt int, last time.Duration) decision {
	code := resp.StatusCode
	retryAfter, hasRetryAfter := retryAfter(resp)
	switch {
	case (code == http.StatusForbidden || code == http.StatusTooManyRequests) && resp.Header.Get("X-RateLimit-Remaining") == "0":
		wait := t.untilReset(resp)
		if hasRetryAfter {
			wait = max(wait, retryAfter)
		}
		return decision{wait: wait, retry: wait <= t.maxWait(), kind: LimitPrimary, limit: wait <= t.maxWait()}
	case code == http.StatusTooManyRequests, code == http.StatusForbidden && secondaryLimit(resp):
		wait := SecondaryLimitWait
		if hasRetryAfter {
			wait = retryAfter
		}
		wait = max(wait, 2*last)
		return decision{wait: min(wait, t.maxWait()), retry: true, kind: LimitSecondary, limit: true}
	case code == http.StatusInternalServerError, code == http.StatusBadGateway,
		code == http.StatusServiceUnavailable, code == http.StatusGatewayTimeout:
		if createsContent(req) {
			return decision{}
		}
		wait := t.backoff() << attempt
		if hasRetryAfter {
			wait = retryAfter
		}
		return decision{wait: min(wait, t.maxWait()), retry: true}
	}
	return decision{}
}

func retryAfter(resp *http.Response) (time.Duration, bool) {
	s, err := strconv.Atoi(strings.TrimSpace(resp.Header.Get("Retry-After")))
	if err != nil || s < 0 {
		return 0, false
	}
	return time.Duration(s) * time.Second, true
}

// createsContent reports whether req adds something GitHub keeps once per
// request: a comment or a check run. Everything else Patchwright sends is
// safe to send twice (edits replace, a second pull request or reaction is
// refused or answered 200, a token is just another token).
func createsContent(req *http.Request) bool {
	if req.Method != http.MethodPost {
		return false
	}
	p := strings.TrimRight(req.URL.Path, "/")
	return strings.HasSuffix(p, "/comments") || strings.HasSuffix(p, "/check-runs") ||
		strings.HasSuffix(p, "/issues")
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

// secondaryLimit reports whether a 403 is GitHub's secondary rate limit:
// a Retry-After header, or the message or documentation URL GitHub sends
// for it (the commonest comes with neither Retry-After nor a spent quota).
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
		DocURL  string `json:"documentation_url"`
	}
	_ = json.Unmarshal(b, &e)
	m := strings.ToLower(e.Message)
	return strings.Contains(m, "secondary rate limit") || strings.Contains(m, "abuse detection") ||
		strings.HasSuffix(e.DocURL, "#secondary-rate-limits") || strings.HasSuffix(e.DocURL, "#about-secondary-rate-limits")
}

func (t *RetryTransport) untilReset(resp *http.Response) time.Duration {
	reset, err := strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64)
	if err != nil {
		return SecondaryLimitWait
	}
	return max(time.Unix(reset, 0).Sub(t.now())+time.Second, time.Second)
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
	if t.OnWait != nil {
		t.OnWait(d)
	}
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
