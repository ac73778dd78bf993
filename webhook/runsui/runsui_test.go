package runsui

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/patchwright/patchwright/jobs/outcomes"
	"github.com/patchwright/patchwright/jobs/runstore"
)

const password = "correct horse battery staple"

var now = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)

// fixture is the dashboard on miniredis with the given runs and outcomes.
func fixture(t *testing.T, runs []runstore.Summary, recs []outcomes.Record) *httptest.Server {
	t.Helper()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { rdb.Close() })
	clock := func() time.Time { return now }
	rs := &runstore.Store{Redis: rdb, Keep: runstore.Keep{Clock: clock}}
	os := &outcomes.Store{Redis: rdb, Keep: runstore.Keep{Clock: clock}}
	for _, r := range runs {
		if err := rs.PutSummary(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range recs {
		if err := os.Put(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	h, err := New(Config{Runs: rs, Outcomes: os, Password: password, Now: clock,
		Link: func(id string) string { return "/runs/" + id + "?sig=x" }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, url string, authed bool) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if authed {
		req.SetBasicAuth("operator", password)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func cost(x float64) *float64 { return &x }

// sample: three runs with merged, closed and open pull requests, one
// without, in two installations.
func sample() ([]runstore.Summary, []outcomes.Record) {
	runs := []runstore.Summary{
		{ID: "r1", Installation: 1, Repo: "acme/widgets", Issue: 1, Title: "Fix slug", PR: 10, Outcome: "verified", CostUSD: cost(0.5), StartedAt: now.Add(-4 * time.Hour)},
		{ID: "r2", Installation: 1, Repo: "acme/widgets", Issue: 2, Title: "Add flag", PR: 11, Outcome: "unverified", CostUSD: cost(1.25), StartedAt: now.Add(-3 * time.Hour)},
		{ID: "r3", Installation: 2, Repo: "other/tool", Issue: 3, Title: "Open one", PR: 12, Outcome: "verified", StartedAt: now.Add(-2 * time.Hour)},
		{ID: "r4", Installation: 2, Repo: "other/tool", Issue: 4, Title: "Nothing", Outcome: "no_change", StartedAt: now.Add(-time.Hour)},
	}
	recs := []outcomes.Record{
		{Installation: 1, Repo: "acme/widgets", PR: 10, State: outcomes.StateMerged, OpenedAt: now.Add(-4 * time.Hour), ClosedAt: now.Add(-2 * time.Hour), CostUSD: 0.5, CostKnown: true},
		{Installation: 1, Repo: "acme/widgets", PR: 11, State: outcomes.StateClosed, OpenedAt: now.Add(-3 * time.Hour), ClosedAt: now.Add(-time.Hour)},
		{Installation: 2, Repo: "other/tool", PR: 12, State: outcomes.StateOpen, OpenedAt: now.Add(-2 * time.Hour)},
	}
	return runs, recs
}

func TestFilters(t *testing.T) {
	runs, recs := sample()
	srv := fixture(t, runs, recs)
	for name, tc := range map[string]struct {
		query     string
		want, not []string
	}{
		"all":             {"", []string{"/runs/r1?", "/runs/r2?", "/runs/r3?", "/runs/r4?"}, nil},
		"installation":    {"installation=2", []string{"/runs/r3?", "/runs/r4?"}, []string{"/runs/r1?"}},
		"repository":      {"repo=ACME/widgets", []string{"/runs/r1?", "/runs/r2?"}, []string{"/runs/r3?"}},
		"merged":          {"outcome=merged", []string{"/runs/r1?"}, []string{"/runs/r2?", "/runs/r3?"}},
		"no pull request": {"outcome=none", []string{"/runs/r4?"}, []string{"/runs/r1?"}},
		"date":            {"from=2026-03-02&to=2026-03-02", []string{"/runs/r1?"}, nil},
		"date before":     {"to=2026-03-01", nil, []string{"/runs/r1?", "/runs/r4?"}},
		"repo and inst":   {"repo=acme/widgets&installation=2", nil, []string{"/runs/r1?", "/runs/r3?"}},
	} {
		t.Run(name, func(t *testing.T) {
			code, body := get(t, srv.URL+"/runs?"+tc.query, true)
			if code != http.StatusOK {
				t.Fatalf("status %d: %s", code, body)
			}
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("missing %s", w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(body, n) {
					t.Errorf("shows %s", n)
				}
			}
		})
	}
}

// The figures: one merged of two decided, untouched, at $0.50, in 2h.
func TestFigures(t *testing.T) {
	runs, recs := sample()
	srv := fixture(t, runs, recs)
	_, body := get(t, srv.URL+"/runs", true)
	for _, w := range []string{`id="merge-rate">50% of 2 decided`, `id="no-commit">1<`, `id="no-review">1<`, `id="ttm">2.0h<`, `id="cost-per-merged">$0.50 over 1<`, `id="open">1<`} {
		if !strings.Contains(body, w) {
			t.Errorf("figures miss %s", w)
		}
	}
	_, body = get(t, srv.URL+"/runs?installation=2", true)
	if !strings.Contains(body, "none decided yet") {
		t.Errorf("installation 2's figures count another installation's pull requests")
	}
}

func TestPagination(t *testing.T) {
	var runs []runstore.Summary
	for i := range PageSize + 7 {
		runs = append(runs, runstore.Summary{ID: fmt.Sprintf("run%03d", i), Installation: 1, Repo: "acme/widgets", Issue: i + 1, StartedAt: now.Add(-time.Duration(i) * time.Minute)})
	}
	srv := fixture(t, runs, nil)
	_, first := get(t, srv.URL+"/runs", true)
	if n := strings.Count(first, `class="run"`); n != PageSize {
		t.Fatalf("first page lists %d runs, want %d", n, PageSize)
	}
	if !strings.Contains(first, "/runs/run000?") || strings.Contains(first, "/runs/run050?") || !strings.Contains(first, `href="?offset=50"`) {
		t.Fatalf("first page: newest 50 and a link to the rest expected")
	}
	_, second := get(t, srv.URL+"/runs?offset=50", true)
	if n := strings.Count(second, `class="run"`); n != 7 || !strings.Contains(second, "/runs/run056?") || strings.Contains(second, `id="next"`) {
		t.Fatalf("second page lists %d runs, want the last 7 and no next link", n)
	}
}

func TestAuthRequired(t *testing.T) {
	runs, recs := sample()
	srv := fixture(t, runs, recs)
	code, body := get(t, srv.URL+"/runs", false)
	if code != http.StatusUnauthorized || strings.Contains(body, "acme") {
		t.Fatalf("without credentials: %d %q", code, body)
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/runs", nil)
	req.SetBasicAuth("operator", password)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("POST: %d, want 405", resp.StatusCode)
	}
}

func TestNoPasswordNoDashboard(t *testing.T) {
	for _, p := range []string{"", "short"} {
		if _, err := New(Config{Runs: &runstore.Store{}, Outcomes: &outcomes.Store{}, Link: func(string) string { return "" }, Password: p}); err == nil {
			t.Errorf("password %q: dashboard built", p)
		}
	}
}

func TestHostileTextEscaped(t *testing.T) {
	attack := `<script>alert(1)</script><img src=x onerror=alert(2)>`
	runs := []runstore.Summary{{ID: "r1", Installation: 1, Repo: "acme/widgets", Issue: 1, Title: attack, StartedAt: now}}
	srv := fixture(t, runs, nil)
	_, body := get(t, srv.URL+"/runs?repo=acme/widgets", true)
	if strings.Contains(body, "<script>") || strings.Contains(body, "<img") || !strings.Contains(body, "&lt;script&gt;") {
		t.Fatalf("hostile title not escaped:\n%s", body)
	}
}

func TestBadQueries(t *testing.T) {
	srv := fixture(t, nil, nil)
	for _, q := range []string{"installation=x", "installation=-1", "repo=a/b/c", "repo=%3Cscript%3E", "outcome=won", "from=yesterday", "from=2026-03-05&to=2026-03-01", "offset=-3"} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/runs?"+q, nil)
		req.SetBasicAuth("operator", password)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		// The answer names the bad value, as plain text a browser does
		// not sniff into HTML.
		if resp.StatusCode != http.StatusBadRequest || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: %d %s, want a plain-text 400", q, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}
}
