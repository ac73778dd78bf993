package outcomes_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"

	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/githubtest"
	"github.com/patchwright/patchwright/jobs/outcomes"
	"github.com/patchwright/patchwright/jobs/redistest"
	"github.com/patchwright/patchwright/jobs/tasks"
)

const testRedisDB = 9 // each package its own DB: packages' tests run in parallel

// env is the GitHub fake with acme/widgets, the app's client on it, a
// store on real Redis and the fake's clock.
type env struct {
	fake  *githubtest.Server
	app   *githubapi.App
	store *outcomes.Store
	now   time.Time
}

func newEnv(t *testing.T) *env {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	e := &env{fake: githubtest.New(t, &key.PublicKey), now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
	e.fake.AddRepo(githubtest.Repo{Owner: "acme", Name: "widgets", DefaultBranch: "main"})
	e.fake.SetClock(func() time.Time { return e.now })
	if e.app, err = githubapi.NewApp(githubtest.AppID, pemKey, e.fake.URL, &githubapi.RetryTransport{Sleep: (&githubtest.Sleeps{}).Sleep}); err != nil {
		t.Fatal(err)
	}
	e.store = &outcomes.Store{Redis: redistest.Client(t, testRedisDB)}
	return e
}

// open opens agent/issue-n's pull request through the app, with a
// commit by the app, and notes its run's cost (nil: unpriced).
func (e *env) open(t *testing.T, issue int, cost *float64) tasks.Issue {
	t.Helper()
	repo := tasks.Issue{InstallationID: 11, Owner: "acme", Repo: "widgets"}
	pr, err := e.app.CreatePullRequest(context.Background(), repo,
		githubapi.NewPullRequest{Title: "Fix", Head: "agent/issue-" + string(rune('0'+issue)), Base: "main", Body: "b"})
	if err != nil {
		t.Fatal(err)
	}
	e.fake.AddPullCommit("acme", "widgets", pr.Number, strings.Repeat(string(rune('a'+issue)), 40), githubtest.BotLogin)
	repo.Number = issue
	if err := e.store.NoteRun(context.Background(), repo, pr.Number, "openai:gpt-4.1", cost); err != nil {
		t.Fatal(err)
	}
	repo.Number = pr.Number
	return repo
}

func usd(v float64) *float64 { return &v }

// A merged pull request with only the app's commits and no review, one a
// person reviewed, a closed one and an open one, each
// classified from the fake through the app's client, stored in Redis and
// read back from /metrics.
func TestOutcomesOnMetrics(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	untouched := e.open(t, 1, usd(0.5))
	reviewed := e.open(t, 2, usd(1.5))
	closed := e.open(t, 3, usd(0.25))
	open := e.open(t, 4, nil)
	e.fake.AddReview("acme", "widgets", reviewed.Number, "omar", "APPROVED", "")
	e.now = e.now.Add(2 * time.Hour)
	e.fake.MergePull("acme", "widgets", untouched.Number)
	e.now = e.now.Add(2 * time.Hour)
	e.fake.MergePull("acme", "widgets", reviewed.Number)
	e.fake.ClosePull("acme", "widgets", closed.Number)

	c := &outcomes.Classifier{GitHub: e.app, Store: e.store, AppLogin: githubtest.BotLogin}
	for _, pr := range []tasks.Issue{untouched, reviewed, closed, open, untouched} { // the repeat is a redelivery
		if _, err := c.Classify(ctx, pr); err != nil {
			t.Fatal(err)
		}
	}
	got := scrape(t, e.store)
	l := `installation="11",model="openai:gpt-4.1",repository="acme/widgets"`
	for _, want := range []string{
		`patchwright_agent_pull_requests{` + l + `,state="merged"} 2`,
		`patchwright_agent_pull_requests{` + l + `,state="closed"} 1`,
		`patchwright_agent_pull_requests{` + l + `,state="open"} 1`,
		`patchwright_agent_pull_requests{` + l + `,state="superseded"} 0`,
		`patchwright_agent_pull_requests_merged_without_human_commit{` + l + `} 2`,
		`patchwright_agent_pull_requests_merged_without_human_review{` + l + `} 1`,
		`patchwright_agent_pull_request_merge_rate{` + l + `} 0.6666666666666666`,
		`patchwright_agent_pull_request_cost_per_merged_usd{` + l + `} 1`,
		`patchwright_agent_pull_request_time_to_merge_seconds_bucket{` + l + `,le="3600"} 0`,
		`patchwright_agent_pull_request_time_to_merge_seconds_bucket{` + l + `,le="14400"} 2`,
		`patchwright_agent_pull_request_time_to_merge_seconds_sum{` + l + `} 21600`,
		`patchwright_agent_pull_request_time_to_merge_seconds_count{` + l + `} 2`,
		"patchwright_outcomes_up 1",
		"patchwright_outcomes_unreadable 0",
	} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", got)
	}
}

// A record that does not decode is counted and left out, not a failed
// scrape; Redis gone is patchwright_outcomes_up 0.
func TestScrapeSurvivesBadRecordsAndRedis(t *testing.T) {
	e := newEnv(t)
	if err := e.store.Redis.HSet(context.Background(), outcomes.Key, "11/acme/widgets#9", "{not json").Err(); err != nil {
		t.Fatal(err)
	}
	if got := scrape(t, e.store); !strings.Contains(got, "patchwright_outcomes_unreadable 1\n") || !strings.Contains(got, "patchwright_outcomes_up 1\n") {
		t.Errorf("with a bad record:\n%s", got)
	}
	gone := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	t.Cleanup(func() { gone.Close() })
	if got := scrape(t, &outcomes.Store{Redis: gone}); !strings.Contains(got, "patchwright_outcomes_up 0\n") {
		t.Errorf("without Redis:\n%s", got)
	}
}

// scrape serves a registry with the store's collector over HTTP, as
// serve's /metrics does, and returns one scrape's text.
func scrape(t *testing.T, s *outcomes.Store) string {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(&outcomes.Collector{Store: s})
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d, %v\n%s", resp.StatusCode, err, body)
	}
	return string(body)
}

// A retry's cost adds to the first run's; one unpriced run makes the
// pull request's cost unknown (left out of cost per merged pull request)
// rather than too low.
func TestRunCostsAddUp(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := &outcomes.Classifier{GitHub: e.app, Store: e.store, AppLogin: githubtest.BotLogin}
	retried := e.open(t, 1, usd(0.5))
	unpriced := e.open(t, 2, usd(0.5))
	if err := e.store.NoteRun(ctx, issueOf(retried, 1), retried.Number, "openai:gpt-4.1", usd(0.25)); err != nil {
		t.Fatal(err)
	}
	if err := e.store.NoteRun(ctx, issueOf(unpriced, 2), unpriced.Number, "openai:gpt-4.1", nil); err != nil {
		t.Fatal(err)
	}
	e.fake.MergePull("acme", "widgets", retried.Number)
	e.fake.MergePull("acme", "widgets", unpriced.Number)
	if r, err := c.Classify(ctx, retried); err != nil || !r.CostKnown || r.CostUSD != 0.75 || r.Model != "openai:gpt-4.1" {
		t.Errorf("retried: %+v, %v; want $0.75 known", r, err)
	}
	if r, err := c.Classify(ctx, unpriced); err != nil || r.CostKnown {
		t.Errorf("unpriced: %+v, %v; want the cost unknown", r, err)
	}
	if got := scrape(t, e.store); !strings.Contains(got, `patchwright_agent_pull_request_cost_per_merged_usd{installation="11",model="openai:gpt-4.1",repository="acme/widgets"} 0.75`+"\n") {
		t.Errorf("cost per merged pull request should count the priced one only:\n%s", got)
	}
}

func issueOf(pr tasks.Issue, n int) tasks.Issue {
	pr.Number = n
	return pr
}

// A pull request closed unmerged and then replaced by a newer one for the
// same issue is superseded, whether its close is classified before the
// new one is published or after; one closed with nothing newer is
// closed.
func TestSuperseded(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := &outcomes.Classifier{GitHub: e.app, Store: e.store, AppLogin: githubtest.BotLogin}
	state := func(pr tasks.Issue) string {
		t.Helper()
		r, err := c.Classify(ctx, pr)
		if err != nil {
			t.Fatal(err)
		}
		return r.State
	}
	// Classified first, replaced after.
	first := e.open(t, 1, usd(0.1))
	e.fake.ClosePull("acme", "widgets", first.Number)
	if got := state(first); got != outcomes.StateClosed {
		t.Fatalf("closed with nothing newer: %s", got)
	}
	second := e.open(t, 1, usd(0.1))
	if got := recordState(t, e.store, first); got != outcomes.StateSuperseded {
		t.Errorf("after a newer pull request for the issue: %s, want superseded", got)
	}
	// Replaced first, classified after.
	e.fake.ClosePull("acme", "widgets", second.Number)
	e.open(t, 1, usd(0.1))
	if got := state(second); got != outcomes.StateSuperseded {
		t.Errorf("classified after its replacement: %s, want superseded", got)
	}
	// Another issue's pull request supersedes nothing.
	other := e.open(t, 2, usd(0.1))
	e.fake.ClosePull("acme", "widgets", other.Number)
	e.open(t, 3, usd(0.1))
	if got := state(other); got != outcomes.StateClosed {
		t.Errorf("another issue's newer pull request: %s, want closed", got)
	}
}

func recordState(t *testing.T, s *outcomes.Store, pr tasks.Issue) string {
	t.Helper()
	recs, _, err := s.All(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.PR == pr.Number {
			return r.State
		}
	}
	return "none"
}
