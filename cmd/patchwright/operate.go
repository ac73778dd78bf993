package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/patchwright/patchwright/agent/provider"
	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/metrics"
	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/webhook/queueui"
	"github.com/patchwright/patchwright/webhook/setup"
)

// swapHandler lets serve keep one listener while it moves from setup mode
// to receiving webhooks.
type swapHandler struct{ h atomic.Pointer[http.Handler] }

func (s *swapHandler) set(h http.Handler) { s.h.Store(&h) }

func (s *swapHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h := s.h.Load(); h != nil {
		(*h).ServeHTTP(w, r)
		return
	}
	http.Error(w, "starting", http.StatusServiceUnavailable)
}

// awaitSetup serves the manifest flow (webhook/setup) until the app is
// registered, and returns cfg with the new credentials. /webhook answers
// 503 meanwhile (docs/design.md §4.2). It returns cfg unchanged when ctx ends.
func awaitSetup(ctx context.Context, cfg config, log *slog.Logger, srv receiving) (config, error) {
	web, err := setup.WebURLFor(cfg.githubAPIURL)
	if err != nil {
		return cfg, fmt.Errorf("PATCHWRIGHT_GITHUB_API_URL: %w", err)
	}
	done := make(chan setup.Credentials, 1)
	sh, err := setup.New(setup.Config{
		DataDir: cfg.dataDir, WebURL: web, APIURL: cfg.githubAPIURL, Logger: log,
		OnConfigured: func(c setup.Credentials) { done <- c },
	})
	if err != nil {
		return cfg, err
	}
	mux := http.NewServeMux()
	mux.Handle("/setup", sh)
	mux.Handle("/setup/", sh)
	mux.Handle("/webhook", setup.NotConfigured())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "not ready: setup mode, register the app at /setup", http.StatusServiceUnavailable)
	})
	srv.h.set(mux)
	srv.start()
	log.Warn("no GitHub App credentials: setup mode; open /setup on this server to register the app", "data_dir", cfg.dataDir)
	select {
	case c := <-done:
		cfg.appID, cfg.privateKey, cfg.webhookSecret = c.AppID, c.PrivateKey, c.WebhookSecret
		cfg.privateKeyFile = setup.KeyPath(cfg.dataDir)
		cfg.setupMode = false
		log.Info("app registered: leaving setup mode", "app_id", c.AppID, "slug", c.Slug)
		return cfg, nil
	case err := <-srv.errc:
		return cfg, errInfra{fmt.Errorf("http server: %w", err)}
	case <-ctx.Done():
		return cfg, nil
	}
}

// newMetrics is one process's metrics and the registry /metrics serves,
// with the binary's build information.
func newMetrics() (*metrics.Metrics, *prometheus.Registry) {
	reg := metrics.NewRegistry()
	b := currentBuild()
	metrics.RegisterBuildInfo(reg, metrics.Build{Version: b.Version, Commit: b.Commit, GoVersion: b.GoVersion})
	return metrics.New(reg), reg
}

// githubTransport retries GitHub requests and counts them: every attempt
// by status below the retries, and the rate limits and waits as the
// retrying transport decided them.
func githubTransport(m *metrics.Metrics) *githubapi.RetryTransport {
	return &githubapi.RetryTransport{Base: m.GitHubTransport(nil), OnLimit: m.RateLimited, OnWait: m.GitHubWait}
}

// jobMetrics records each task's duration and how it ended, by type.
func jobMetrics(m *metrics.Metrics) asynq.MiddlewareFunc {
	return func(next asynq.Handler) asynq.Handler {
		return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
			start := time.Now()
			err := next.ProcessTask(ctx, t)
			outcome := "ok"
			switch {
			case errors.Is(err, asynq.SkipRetry):
				outcome = "failed"
			case err != nil:
				outcome = "retry"
			}
			m.Job(t.Type(), outcome, time.Since(start))
			return err
		})
	}
}

// meteredProvider records each model call's tokens and estimated cost.
type meteredProvider struct {
	provider.Provider
	m      *metrics.Metrics
	prices provider.Prices
}

// Models are the wrapped provider's, so the operator's policy sees each
// model of a fallback list (provider.Models).
func (p meteredProvider) Models() []string { return provider.Models(p.Provider) }

func (p meteredProvider) Complete(ctx context.Context, req provider.Request) (*provider.Response, error) {
	resp, err := p.Provider.Complete(ctx, req)
	if err == nil && resp != nil {
		usd, known := p.prices.Cost(p.Model(), resp.Usage)
		p.m.ModelUsage(p.Model(), metrics.Usage{
			InputTokens: resp.Usage.InputTokens, OutputTokens: resp.Usage.OutputTokens,
			CachedInputTokens: resp.Usage.CachedInputTokens, CostUSD: usd, CostKnown: known,
		})
	}
	return resp, err
}

// meteredRunner records every sandbox command's outcome and duration.
type meteredRunner struct {
	sandbox.Runner
	m *metrics.Metrics
}

func (r meteredRunner) Create(ctx context.Context, spec sandbox.Spec) (sandbox.Sandbox, error) {
	sb, err := r.Runner.Create(ctx, spec)
	if err != nil {
		return nil, err
	}
	return meteredSandbox{Sandbox: sb, m: r.m}, nil
}

type meteredSandbox struct {
	sandbox.Sandbox
	m *metrics.Metrics
}

func (s meteredSandbox) Exec(ctx context.Context, cmd sandbox.Command) (sandbox.Result, error) {
	start := time.Now()
	res, err := s.Sandbox.Exec(ctx, cmd)
	outcome := metrics.ExecOK
	switch {
	case err != nil:
		outcome = metrics.ExecError
	case res.TimedOut:
		outcome = metrics.ExecTimeout
	case res.ExitCode != 0:
		outcome = metrics.ExecFailed
	}
	d := res.Duration
	if err != nil || d <= 0 {
		d = time.Since(start)
	}
	s.m.SandboxExec(outcome, d)
	return res, err
}

// queueDashboard is /queue on the same Redis as rdb, or nil without a
// password (never open by default).
func queueDashboard(cfg config, rdb redis.UniversalClient) (*queueui.Handler, error) {
	if cfg.queuePassword == "" {
		return nil, nil
	}
	c, ok := rdb.(*redis.Client)
	if !ok {
		return nil, fmt.Errorf("queue dashboard: unsupported Redis client %T", rdb)
	}
	return queueui.New(queueui.Config{Redis: redisOpt{c.Options()}, Password: cfg.queuePassword})
}

// redisOpt gives the dashboard its own connections to rdb's server.
type redisOpt struct{ opt *redis.Options }

func (o redisOpt) MakeRedisClient() any {
	opt := *o.opt
	return redis.NewClient(&opt)
}

// serveWorkerHTTP serves a worker's /healthz and /metrics on addr; the
// returned function stops it.
func serveWorkerHTTP(addr string, reg *prometheus.Registry, log *slog.Logger) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, errInfra{fmt.Errorf("PATCHWRIGHT_LISTEN: %w", err)}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	mux.Handle("GET /metrics", metrics.Handler(reg))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: readHeaderTimeout, WriteTimeout: writeTimeout}
	go srv.Serve(ln)
	log.Info("worker metrics", "addr", ln.Addr().String())
	return func() { srv.Close() }, nil
}

// runsDir is where the GitHub pipeline writes runs (githubjob's default
// data directory when PATCHWRIGHT_DATA_DIR is unset).
func runsDir(dataDir string) string {
	if dataDir == "" {
		dataDir = filepath.Join(os.TempDir(), "patchwright")
	}
	return filepath.Join(dataDir, "runs")
}

// meteredQueue times the webhook's enqueues (lock, record and asynq
// enqueue), by task type and how they ended.
type meteredQueue struct {
	*jobs.Queue
	m *metrics.Metrics
}

func (q meteredQueue) record(taskType string, start time.Time, res jobs.EnqueueResult, err error) {
	result := res.Outcome.String()
	if err != nil {
		result = "error"
	}
	q.m.Enqueue(taskType, result, time.Since(start))
}

func (q meteredQueue) EnqueueSolve(ctx context.Context, p tasks.SolveIssue) (jobs.EnqueueResult, error) {
	start := time.Now()
	res, err := q.Queue.EnqueueSolve(ctx, p)
	q.record(tasks.TypeSolveIssue, start, res, err)
	return res, err
}

func (q meteredQueue) EnqueueRetry(ctx context.Context, p tasks.RetryPR) (jobs.EnqueueResult, error) {
	start := time.Now()
	res, err := q.Queue.EnqueueRetry(ctx, p)
	q.record(tasks.TypeRetryPR, start, res, err)
	return res, err
}

func (q meteredQueue) EnqueueReply(ctx context.Context, p tasks.Reply) (jobs.EnqueueResult, error) {
	start := time.Now()
	res, err := q.Queue.EnqueueReply(ctx, p)
	q.record(tasks.TypeReply, start, res, err)
	return res, err
}
