package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/patchwright/patchwright/agent/provider"
	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/githubtest"
	"github.com/patchwright/patchwright/jobs/metrics"
	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/patchwright/patchwright/sandbox"
)

func scrapeText(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	w := httptest.NewRecorder()
	metrics.Handler(reg).ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	return w.Body.String()
}

func wantMetrics(t *testing.T, text string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w+"\n") {
			t.Errorf("metrics lack %q", w)
		}
	}
}

// TestJobMetricsAfterAJob runs tasks through a real asynq server (on
// miniredis) with the job middleware and reads their durations back.
func TestJobMetricsAfterAJob(t *testing.T) {
	mr := miniredis.RunT(t)
	opt := asynq.RedisClientOpt{Addr: mr.Addr()}
	m, reg := newMetrics()
	done := make(chan struct{}, 3)
	mux := asynq.NewServeMux()
	mux.Use(jobMetrics(m))
	mux.HandleFunc("issue:solve", func(ctx context.Context, t *asynq.Task) error {
		defer func() { done <- struct{}{} }()
		switch string(t.Payload()) {
		case "bad":
			return errors.Join(errors.New("bad payload"), asynq.SkipRetry)
		case "flaky":
			return errors.New("GitHub 502")
		}
		return nil
	})
	srv := asynq.NewServer(opt, asynq.Config{Concurrency: 1, Queues: map[string]int{"agent": 1}, LogLevel: asynq.FatalLevel,
		RetryDelayFunc: func(int, error, *asynq.Task) time.Duration { return time.Hour }})
	if err := srv.Start(mux); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	c := asynq.NewClient(opt)
	defer c.Close()
	for _, p := range []string{"ok", "bad", "flaky"} {
		if _, err := c.Enqueue(asynq.NewTask("issue:solve", []byte(p)), asynq.Queue("agent"), asynq.MaxRetry(1)); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		<-done
	}
	srv.Shutdown() // the middleware records after the handler returns
	wantMetrics(t, scrapeText(t, reg),
		`patchwright_job_duration_seconds_count{outcome="ok",type="issue:solve"} 1`,
		`patchwright_job_duration_seconds_count{outcome="failed",type="issue:solve"} 1`,
		`patchwright_job_duration_seconds_count{outcome="retry",type="issue:solve"} 1`,
	)
}

type fakeProvider struct{ usage provider.Usage }

func (p fakeProvider) Complete(context.Context, provider.Request) (*provider.Response, error) {
	return &provider.Response{Usage: p.usage}, nil
}
func (fakeProvider) Model() string { return "openai:gpt-4.1" }

func TestMeteredProvider(t *testing.T) {
	m, reg := newMetrics()
	prices, err := provider.PricesFromEnv(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	p := meteredProvider{fakeProvider{provider.Usage{InputTokens: 1_000_000, OutputTokens: 1000}}, m, prices}
	if _, err := p.Complete(context.Background(), provider.Request{}); err != nil {
		t.Fatal(err)
	}
	text := scrapeText(t, reg)
	wantMetrics(t, text,
		`patchwright_model_tokens_total{kind="input",model="openai:gpt-4.1"} 1e+06`,
		`patchwright_model_tokens_total{kind="output",model="openai:gpt-4.1"} 1000`,
	)
	usd, known := prices.Cost("openai:gpt-4.1", provider.Usage{InputTokens: 1_000_000, OutputTokens: 1000})
	if !known || usd <= 0 {
		t.Fatal("openai:gpt-4.1 has no price in the built-in table: pick a priced model for this test")
	}
	if !strings.Contains(text, `patchwright_model_cost_usd_total{model="openai:gpt-4.1"} `) {
		t.Errorf("no cost recorded for a priced model (%.4f USD)", usd)
	}
}

type fakeRunner struct{ sb sandbox.Sandbox }

func (r fakeRunner) Create(context.Context, sandbox.Spec) (sandbox.Sandbox, error) { return r.sb, nil }

type fakeSandbox struct {
	sandbox.Sandbox // unused methods
	results         map[string]sandbox.Result
}

func (s fakeSandbox) Exec(_ context.Context, cmd sandbox.Command) (sandbox.Result, error) {
	if cmd.Script == "refused" {
		return sandbox.Result{}, &sandbox.DeniedError{Command: cmd.Script, Reason: "no"}
	}
	return s.results[cmd.Script], nil
}

func TestMeteredSandbox(t *testing.T) {
	m, reg := newMetrics()
	r := meteredRunner{fakeRunner{fakeSandbox{results: map[string]sandbox.Result{
		"true":  {ExitCode: 0, Duration: time.Second},
		"false": {ExitCode: 1, Duration: 2 * time.Second},
		"sleep": {ExitCode: 137, TimedOut: true, Duration: 600 * time.Second},
	}}}, m}
	sb, err := r.Create(context.Background(), sandbox.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"true", "false", "sleep", "refused"} {
		sb.Exec(context.Background(), sandbox.Command{Script: s})
	}
	wantMetrics(t, scrapeText(t, reg),
		`patchwright_sandbox_exec_duration_seconds_sum{outcome="ok"} 1`,
		`patchwright_sandbox_exec_duration_seconds_sum{outcome="failed"} 2`,
		`patchwright_sandbox_exec_duration_seconds_sum{outcome="timeout"} 600`,
		`patchwright_sandbox_exec_duration_seconds_count{outcome="error"} 1`,
	)
}

// TestSecondaryLimitIsCounted drives GitHub's commonest secondary limit
// (403, quota left, no Retry-After) through the transport serve and the
// worker build: the retry and the counter must agree that it is one.
func TestSecondaryLimitIsCounted(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	fake := githubtest.New(t, &key.PublicKey)
	fake.AddRepo(githubtest.Repo{Owner: "acme", Name: "widgets", DefaultBranch: "main", CloneURL: "https://git.example/acme/widgets.git"})
	fake.AddIssue(githubtest.Issue{Owner: "acme", Repo: "widgets", Number: 7, Title: "Fix it", Body: "It is broken.", Author: "maria"})
	fake.Fail(githubtest.SecondaryRateLimit(http.MethodGet, "/repos/acme/widgets/issues/7", 1))

	m, reg := newMetrics()
	rt := githubTransport(m)
	sleeps := &githubtest.Sleeps{}
	rt.Sleep = sleeps.Sleep // the wait itself; OnWait is still told
	app, err := githubapi.NewApp(githubtest.AppID, pemKey, fake.URL, rt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.GetIssue(context.Background(), tasks.Issue{InstallationID: 11, Owner: "acme", Repo: "widgets", Number: 7}); err != nil {
		t.Fatal(err)
	}
	if w := sleeps.All(); len(w) != 1 || w[0] != githubapi.SecondaryLimitWait {
		t.Fatalf("waits = %v, want one of %s", w, githubapi.SecondaryLimitWait)
	}
	wantMetrics(t, scrapeText(t, reg),
		`patchwright_github_rate_limited_total{kind="secondary"} 1`,
		`patchwright_github_retry_wait_seconds_sum 60`,
		`patchwright_github_retry_wait_seconds_count 1`,
		`patchwright_github_requests_total{status="403"} 1`,
	)
}
