package metrics

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus"
)

// scrape fetches /metrics from Handler over HTTP and returns its lines.
func scrape(t *testing.T, g prometheus.Gatherer) map[string]bool {
	t.Helper()
	srv := httptest.NewServer(Handler(g))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %s", resp.Status)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]bool{}
	for _, l := range strings.Split(string(b), "\n") {
		lines[l] = true
	}
	return lines
}

func wantLines(t *testing.T, lines map[string]bool, want ...string) {
	t.Helper()
	for _, w := range want {
		if !lines[w] {
			var near []string
			name, _, _ := strings.Cut(w, "{")
			for l := range lines {
				if strings.HasPrefix(l, name) {
					near = append(near, l)
				}
			}
			t.Errorf("scrape lacks %q; lines of that metric: %q", w, near)
		}
	}
}

func TestScrapeAfterRecording(t *testing.T) {
	reg := NewRegistry()
	m := New(reg)

	m.Delivery("issues", 202)
	m.Delivery("issues", 202)
	m.Delivery("issue_comment", 200)
	m.Delivery("x-forged-"+strings.Repeat("a", 100), 401) // folded, not a new series
	m.Delivery("issues", 9999)
	m.Enqueue("issue:solve", "enqueued", 3*time.Millisecond)
	m.Job("issue:solve", "verified", 90*time.Second)
	m.Job("issue:solve", "verified", 100*time.Second)
	m.Job("pr:retry", "failed", 40*time.Second)
	m.ModelUsage("openai:gpt-4.1", Usage{InputTokens: 1000, OutputTokens: 200, CachedInputTokens: 300, CostUSD: 0.25, CostKnown: true})
	m.ModelUsage("openai:gpt-4.1", Usage{InputTokens: 500, CostUSD: 0.5, CostKnown: true})
	m.ModelUsage("openai:local-model", Usage{InputTokens: 10})
	m.SandboxExec(ExecOK, 200*time.Millisecond)
	m.SandboxExec(ExecTimeout, 600*time.Second)
	m.SandboxExec("nonsense", time.Second)
	m.GitHubWait(60 * time.Second)

	wantLines(t, scrape(t, reg),
		`patchwright_webhook_deliveries_total{event="issues",status="202"} 2`,
		`patchwright_webhook_deliveries_total{event="issue_comment",status="200"} 1`,
		`patchwright_webhook_deliveries_total{event="other",status="401"} 1`,
		`patchwright_webhook_deliveries_total{event="issues",status="other"} 1`,
		`patchwright_enqueue_duration_seconds_count{result="enqueued",type="issue:solve"} 1`,
		`patchwright_enqueue_duration_seconds_bucket{result="enqueued",type="issue:solve",le="0.005"} 1`,
		`patchwright_enqueue_duration_seconds_bucket{result="enqueued",type="issue:solve",le="0.0025"} 0`,
		`patchwright_job_duration_seconds_count{outcome="verified",type="issue:solve"} 2`,
		`patchwright_job_duration_seconds_sum{outcome="verified",type="issue:solve"} 190`,
		`patchwright_job_duration_seconds_count{outcome="failed",type="pr:retry"} 1`,
		`patchwright_model_tokens_total{kind="input",model="openai:gpt-4.1"} 1500`,
		`patchwright_model_tokens_total{kind="output",model="openai:gpt-4.1"} 200`,
		`patchwright_model_tokens_total{kind="cached_input",model="openai:gpt-4.1"} 300`,
		`patchwright_model_cost_usd_total{model="openai:gpt-4.1"} 0.75`,
		`patchwright_model_cost_unknown_total{model="openai:local-model"} 1`,
		`patchwright_sandbox_exec_duration_seconds_count{outcome="ok"} 1`,
		`patchwright_sandbox_exec_duration_seconds_count{outcome="timeout"} 1`,
		`patchwright_sandbox_exec_duration_seconds_count{outcome="other"} 1`,
		`patchwright_github_retry_wait_seconds_count 1`,
		`patchwright_github_retry_wait_seconds_sum 60`,
	)
}

func TestNilMetricsDoNothing(t *testing.T) {
	var m *Metrics
	m.Delivery("issues", 202)
	m.Enqueue("t", "r", time.Second)
	m.Job("t", "o", time.Second)
	m.ModelUsage("m", Usage{InputTokens: 1})
	m.SandboxExec(ExecOK, time.Second)
	m.GitHubWait(time.Second)
	m.RateLimited("secondary")
	h := http.NotFoundHandler()
	if got := m.WebhookHandler(h); got == nil {
		t.Fatal("nil handler")
	}
	if m.GitHubTransport(http.DefaultTransport) != http.DefaultTransport {
		t.Fatal("nil Metrics wrapped the transport")
	}
}

func TestWebhookHandlerCountsEachAnswer(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := New(reg)
	h := m.WebhookHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("answer") {
		case "accepted":
			w.WriteHeader(http.StatusAccepted)
			w.WriteHeader(http.StatusInternalServerError) // ignored by net/http too
		case "unauthorized":
			http.Error(w, "bad signature", http.StatusUnauthorized)
		default:
			io.WriteString(w, "pong") // an implicit 200
		}
	}))
	for _, c := range []struct{ event, answer string }{
		{"issues", "accepted"}, {"issues", "unauthorized"}, {"ping", "pong"},
	} {
		r := httptest.NewRequest(http.MethodPost, "/webhook?answer="+c.answer, nil)
		r.Header.Set("X-GitHub-Event", c.event)
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	wantLines(t, scrape(t, reg),
		`patchwright_webhook_deliveries_total{event="issues",status="202"} 1`,
		`patchwright_webhook_deliveries_total{event="issues",status="401"} 1`,
		`patchwright_webhook_deliveries_total{event="ping",status="200"} 1`,
	)
}

func TestGitHubTransport(t *testing.T) {
	gh := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/denied":
			w.WriteHeader(http.StatusForbidden)
		case "/429":
			w.WriteHeader(http.StatusTooManyRequests)
		default:
			w.WriteHeader(http.StatusOK)
		}
	}))
	defer gh.Close()
	reg := prometheus.NewRegistry()
	m := New(reg)
	client := &http.Client{Transport: m.GitHubTransport(nil)}
	for _, p := range []string{"/ok", "/ok", "/denied", "/429"} {
		resp, err := client.Get(gh.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	if _, err := client.Get(closed.URL); err == nil {
		t.Fatal("a closed server answered")
	}
	text := scrape(t, reg)
	wantLines(t, text,
		`patchwright_github_requests_total{status="200"} 2`,
		`patchwright_github_requests_total{status="403"} 1`,
		`patchwright_github_requests_total{status="429"} 1`,
		`patchwright_github_requests_total{status="error"} 1`,
	)
	// What is a rate limit is the retrying transport's decision, told
	// through RateLimited; the counting transport does not guess.
	for l := range text {
		if strings.HasPrefix(l, "patchwright_github_rate_limited_total{") {
			t.Errorf("the counting transport classified a rate limit itself: %s", l)
		}
	}
}

func TestRateLimitedAndWaits(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := New(reg)
	for _, kind := range []string{"primary", "secondary", "secondary", "made-up"} {
		m.RateLimited(kind)
	}
	m.GitHubWait(time.Minute)
	m.GitHubWait(2 * time.Second)
	wantLines(t, scrape(t, reg),
		`patchwright_github_rate_limited_total{kind="primary"} 1`,
		`patchwright_github_rate_limited_total{kind="secondary"} 2`,
		`patchwright_github_rate_limited_total{kind="other"} 1`,
		`patchwright_github_retry_wait_seconds_sum 62`,
		`patchwright_github_retry_wait_seconds_count 2`,
	)
}

// TestQueueDepth enqueues real asynq tasks (on miniredis, which asynq
// runs on unmodified) and reads the depths back through a scrape.
func TestQueueDepth(t *testing.T) {
	mr := miniredis.RunT(t)
	opt := asynq.RedisClientOpt{Addr: mr.Addr()}
	client := asynq.NewClient(opt)
	defer client.Close()
	for i, q := range []string{"agent", "agent", "replies"} {
		if _, err := client.Enqueue(asynq.NewTask("issue:solve", []byte{byte(i)}), asynq.Queue(q)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := client.Enqueue(asynq.NewTask("issue:solve", nil), asynq.Queue("agent"), asynq.ProcessIn(time.Hour)); err != nil {
		t.Fatal(err)
	}
	insp := asynq.NewInspector(opt)
	defer insp.Close()
	reg := prometheus.NewRegistry()
	WatchQueues(reg, insp)
	wantLines(t, scrape(t, reg),
		`patchwright_queue_tasks{queue="agent",state="pending"} 2`,
		`patchwright_queue_tasks{queue="agent",state="scheduled"} 1`,
		`patchwright_queue_tasks{queue="replies",state="pending"} 1`,
		`patchwright_queue_tasks{queue="replies",state="active"} 0`,
		`patchwright_queue_inspect_up 1`,
	)
}

type brokenInspector struct{}

func (brokenInspector) Queues() ([]string, error) {
	return nil, errors.New("redis: connection refused")
}
func (brokenInspector) GetQueueInfo(string) (*asynq.QueueInfo, error) {
	return nil, errors.New("unreachable")
}

func TestQueueDepthWithoutRedis(t *testing.T) {
	reg := NewRegistry()
	New(reg)
	WatchQueues(reg, brokenInspector{})
	lines := scrape(t, reg)
	wantLines(t, lines, `patchwright_queue_inspect_up 0`)
	for l := range lines {
		if strings.HasPrefix(l, "patchwright_queue_tasks{") {
			t.Errorf("reported a depth without Redis: %s", l)
		}
	}
}

func TestNewTwiceOnOneRegistryPanics(t *testing.T) {
	reg := prometheus.NewRegistry()
	New(reg)
	defer func() {
		if recover() == nil {
			t.Fatal("a second New on the same registry did not panic")
		}
	}()
	New(reg)
}

// TestPhaseHistograms: each phase of a run lands in its own series of
// patchwright_phase_duration_seconds, a phase name from outside the known
// set is folded, and label_to_pr_seconds counts what it was given.
func TestPhaseHistograms(t *testing.T) {
	reg := NewRegistry()
	m := New(reg)
	m.Phase("queued", 300*time.Millisecond)
	m.Phase("baseline", 2*time.Second)
	m.Phase("baseline", 4*time.Second)
	m.Phase("secret scan", 20*time.Millisecond)
	m.Phase("x-"+strings.Repeat("b", 50), time.Second)
	m.LabelToPR(12 * time.Second)
	var none *Metrics
	none.Phase("agent", time.Second) // a nil Metrics does nothing
	none.LabelToPR(time.Second)

	lines := scrape(t, reg)
	wantLines(t, lines,
		`patchwright_phase_duration_seconds_bucket{phase="queued",le="0.5"} 1`,
		`patchwright_phase_duration_seconds_count{phase="queued"} 1`,
		`patchwright_phase_duration_seconds_bucket{phase="baseline",le="2.5"} 1`,
		`patchwright_phase_duration_seconds_bucket{phase="baseline",le="5"} 2`,
		`patchwright_phase_duration_seconds_sum{phase="baseline"} 6`,
		`patchwright_phase_duration_seconds_count{phase="secret scan"} 1`,
		`patchwright_phase_duration_seconds_count{phase="other"} 1`,
		`patchwright_label_to_pr_seconds_bucket{le="10"} 0`,
		`patchwright_label_to_pr_seconds_bucket{le="15"} 1`,
		`patchwright_label_to_pr_seconds_sum 12`,
		`patchwright_label_to_pr_seconds_count 1`,
	)
	for l := range lines {
		if strings.Contains(l, "bbbb") {
			t.Errorf("an unknown phase made its own series: %q", l)
		}
	}
}

func TestBuildInfo(t *testing.T) {
	reg := NewRegistry()
	RegisterBuildInfo(reg, Build{Version: "v1.2.0", Commit: "abc123-modified", GoVersion: "go1.26.8"})
	wantLines(t, scrape(t, reg), `patchwright_build_info{commit="abc123-modified",goversion="go1.26.8",version="v1.2.0"} 1`)
}
