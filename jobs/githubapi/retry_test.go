package githubapi_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/githubtest"
)

// hooks records what RetryTransport reported.
type hooks struct {
	mu     sync.Mutex
	limits []string
	waits  []time.Duration
}

func (h *hooks) limit(kind string) { h.mu.Lock(); h.limits = append(h.limits, kind); h.mu.Unlock() }
func (h *hooks) wait(d time.Duration) {
	h.mu.Lock()
	h.waits = append(h.waits, d)
	h.mu.Unlock()
}

// answer serves one canned response.
func answer(status int, header http.Header, body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range header {
			w.Header()[k] = v
		}
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	})
}

func fromFault(f githubtest.Fault) http.Handler { return answer(f.Status, f.Header, f.Body) }

// TestRateLimitKinds is the one table of what a rate limit is: every
// answer goes once through a transport that may not retry, and OnLimit
// must be told exactly the kind the table names.
func TestRateLimitKinds(t *testing.T) {
	reset := time.Now().Add(time.Minute)
	permission := `{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest/issues/comments#create-an-issue-comment"}`
	cases := []struct {
		name string
		h    http.Handler
		want string
	}{
		{"primary 403", fromFault(githubtest.PrimaryRateLimit("GET", "/", reset)), githubapi.LimitPrimary},
		{"primary 429", answer(429, http.Header{"X-Ratelimit-Remaining": {"0"}}, ""), githubapi.LimitPrimary},
		{"primary past the longest wait", answer(403, http.Header{"X-Ratelimit-Remaining": {"0"},
			"X-Ratelimit-Reset": {fmt.Sprint(time.Now().Add(time.Hour).Unix())}}, ""), githubapi.LimitPrimary},
		{"429 with quota left", answer(429, nil, ""), githubapi.LimitSecondary},
		{"403 with Retry-After", answer(403, http.Header{"Retry-After": {"30"}}, ""), githubapi.LimitSecondary},
		{"GitHub's secondary limit", fromFault(githubtest.SecondaryRateLimit("GET", "/", 1)), githubapi.LimitSecondary},
		{"documentation URL only", answer(403, nil, `{"message":"Slow down.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`), githubapi.LimitSecondary},
		{"abuse detection", answer(403, nil, `{"message":"You have triggered an abuse detection mechanism."}`), githubapi.LimitSecondary},
		{"permission denied", answer(403, nil, permission), ""},
		{"server error", answer(502, nil, ""), ""},
		{"ok", answer(200, nil, "{}"), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(c.h)
			defer srv.Close()
			h := &hooks{}
			rt := &githubapi.RetryTransport{MaxRetries: -1, OnLimit: h.limit, OnWait: h.wait}
			resp, err := (&http.Client{Transport: rt}).Get(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			var want []string
			if c.want != "" {
				want = []string{c.want}
			}
			if fmt.Sprint(h.limits) != fmt.Sprint(want) {
				t.Errorf("OnLimit told %q, want %q", h.limits, want)
			}
			if len(h.waits) != 0 {
				t.Errorf("OnWait told %v with retries off", h.waits)
			}
		})
	}
}

// TestHooksSeeEveryLimitAndWait: a secondary limit retried twice is two
// limits and two waits, and a request sent while the credentials are held
// back is told of that wait too. The body of a classified 403 still
// reaches the caller whole.
func TestHooksSeeEveryLimitAndWait(t *testing.T) {
	f := githubtest.SecondaryRateLimit("GET", "/", 1)
	var mu sync.Mutex
	left := 2
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		limited := left > 0
		left--
		mu.Unlock()
		if limited && r.URL.Path == "/limited" {
			fromFault(f).ServeHTTP(w, r)
			return
		}
		fmt.Fprint(w, "{}")
	}))
	defer srv.Close()
	h := &hooks{}
	sleeps := &githubtest.Sleeps{}
	now := time.Now()
	rt := &githubapi.RetryTransport{Sleep: sleeps.Sleep, Now: func() time.Time { return now }, OnLimit: h.limit, OnWait: h.wait}
	client := &http.Client{Transport: rt}
	for _, p := range []string{"/limited", "/next"} {
		req, _ := http.NewRequestWithContext(context.Background(), "GET", srv.URL+p, nil)
		req.Header.Set("Authorization", "token x")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %s", p, resp.Status)
		}
	}
	wantLimits := []string{githubapi.LimitSecondary, githubapi.LimitSecondary}
	wantWaits := []time.Duration{time.Minute, 2 * time.Minute, 2 * time.Minute}
	if fmt.Sprint(h.limits) != fmt.Sprint(wantLimits) || fmt.Sprint(h.waits) != fmt.Sprint(wantWaits) {
		t.Fatalf("limits %v waits %v, want %v and %v", h.limits, h.waits, wantLimits, wantWaits)
	}
	if fmt.Sprint(sleeps.All()) != fmt.Sprint(h.waits) {
		t.Fatalf("OnWait %v, but the transport slept %v", h.waits, sleeps.All())
	}

	// Classifying reads a 403's body; the caller still gets it whole.
	limited := httptest.NewServer(fromFault(f))
	defer limited.Close()
	resp, err := (&http.Client{Transport: &githubapi.RetryTransport{MaxRetries: -1}}).Get(limited.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, _ := io.ReadAll(resp.Body); string(b) != f.Body {
		t.Fatalf("body after classification = %q, want %q", b, f.Body)
	}
}
