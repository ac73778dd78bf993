// Package metrics holds Patchwright's Prometheus metrics: one Metrics value
// with a method per thing worth counting, and the /metrics handler.
//
// It is a leaf (it imports none of Patchwright's packages) and is imported
// by cmd only: cmd wires its methods into the others' hooks and decorators
// (githubapi.RetryTransport's OnLimit and OnWait, the webhook handler, the
// worker's middleware), so no other package knows it exists. Every method
// is safe on a nil *Metrics and does nothing, so code and tests that do
// not care pass nil.
//
// Label values that come from outside (a delivery's X-GitHub-Event header
// arrives before its signature is checked) are folded into a fixed set, so
// a stranger cannot grow the series without bound.
package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Namespace prefixes every metric name.
const Namespace = "patchwright"

// Other is the label value for anything outside a label's known set.
const Other = "other"

// Outcomes of a sandbox command, for SandboxExec.
const (
	ExecOK      = "ok"      // exit status 0
	ExecFailed  = "failed"  // ran, exit status not 0
	ExecTimeout = "timeout" // killed at its time limit
	ExecError   = "error"   // did not run: the engine failed, or the policy refused it
)

// Metrics records Patchwright's metrics. Create it with New.
type Metrics struct {
	deliveries     *prometheus.CounterVec
	enqueue        *prometheus.HistogramVec
	jobs           *prometheus.HistogramVec
	tokens         *prometheus.CounterVec
	cost           *prometheus.CounterVec
	costUnknown    *prometheus.CounterVec
	execs          *prometheus.HistogramVec
	githubRequests *prometheus.CounterVec
	rateLimited    *prometheus.CounterVec
	githubWaits    prometheus.Histogram
	phases         *prometheus.HistogramVec
	labelToPR      prometheus.Histogram
}

// Buckets. Jobs run minutes (30 at most by default); commands from
// milliseconds (a read) to the sandbox's 10-minute limit; an enqueue is a
// Redis round trip or two.
var (
	jobBuckets     = []float64{10, 30, 60, 120, 300, 600, 900, 1200, 1800, 3600}
	execBuckets    = []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}
	enqueueBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1}
	waitBuckets    = []float64{1, 5, 15, 30, 60, 120, 300, 600}
	// A phase takes from tens of milliseconds (a commit) to the model
	// loop's 30 minutes; the label to the pull request is seconds with an
	// instant model and minutes with a real one.
	phaseBuckets     = []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800}
	labelToPRBuckets = []float64{1, 2.5, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600}
)

// phases are the phase label's values (jobs/pipeline's phases and its
// "queued"); anything else is Other.
var phases = map[string]bool{
	"queued": true, "clone": true, "sandbox": true, "setup": true, "baseline": true, "agent": true,
	"final": true, "secret scan": true, "commit": true, "publish": true,
}

// New creates the metrics and registers them with reg (use NewRegistry, or
// prometheus.DefaultRegisterer). It panics when a metric of the same name
// is already registered there, like prometheus.MustRegister: that is a
// wiring mistake, found on the first start.
func New(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		deliveries: counterVec("webhook_deliveries_total",
			"Webhook deliveries by GitHub event and HTTP status answered.", "event", "status"),
		enqueue: histogramVec("enqueue_duration_seconds",
			"Time to enqueue a task (lock, record and asynq enqueue), by task type and result.", enqueueBuckets, "type", "result"),
		jobs: histogramVec("job_duration_seconds",
			"Duration of a job's attempt, by task type and outcome.", jobBuckets, "type", "outcome"),
		tokens: counterVec("model_tokens_total",
			"Model tokens by model and kind (input, output, cached_input).", "model", "kind"),
		cost: counterVec("model_cost_usd_total",
			"Estimated model cost in US dollars from the price table, by model; models without a price are counted in model_cost_unknown_total instead.", "model"),
		costUnknown: counterVec("model_cost_unknown_total",
			"Model usage records whose model has no price in the table.", "model"),
		execs: histogramVec("sandbox_exec_duration_seconds",
			"Sandbox commands by outcome (ok, failed, timeout, error); the _count is the number of commands.", execBuckets, "outcome"),
		githubRequests: counterVec("github_requests_total",
			"GitHub API requests by HTTP status (\"error\": no answer), each retry counted.", "status"),
		rateLimited: counterVec("github_rate_limited_total",
			"GitHub answers that were a rate limit, by kind (primary: no requests left; secondary).", "kind"),
		githubWaits: histogram("github_retry_wait_seconds",
			"Waits before retrying a GitHub request (rate limits and 5xx answers).", waitBuckets),
		phases: histogramVec("phase_duration_seconds",
			"Duration of each phase of a run (queued: from the enqueue of the trigger to the pipeline's start).", phaseBuckets, "phase"),
		labelToPR: histogram("label_to_pr_seconds",
			"Time from the enqueue of a trigger (the issues.labeled delivery or the retry command) to the end of publishing its pull request, for runs that published one.", labelToPRBuckets),
	}
	reg.MustRegister(m.deliveries, m.enqueue, m.jobs, m.tokens, m.cost, m.costUnknown,
		m.execs, m.githubRequests, m.rateLimited, m.githubWaits, m.phases, m.labelToPR)
	return m
}

// counterVec is New's counter name in Namespace, by labels.
func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help}, labels)
}

// histogramVec is New's histogram name in Namespace, by labels.
func histogramVec(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: name, Help: help, Buckets: buckets}, labels)
}

// histogram is New's histogram name in Namespace, without labels.
func histogram(name, help string, buckets []float64) prometheus.Histogram {
	return prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: Namespace, Name: name, Help: help, Buckets: buckets})
}

// NewRegistry returns a registry with the Go runtime and process
// collectors, for New and Handler.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// Handler serves g's metrics in the Prometheus text format, for /metrics.
func Handler(g prometheus.Gatherer) http.Handler {
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{})
}

// events are the event label's values; anything else is Other.
var events = map[string]bool{
	"issues": true, "issue_comment": true, "ping": true,
	"installation": true, "installation_repositories": true, "github_app_authorization": true,
	"pull_request": true, "pull_request_review": true, "pull_request_review_comment": true,
	"push": true, "check_run": true, "check_suite": true,
}

func eventLabel(event string) string {
	if events[event] {
		return event
	}
	return Other
}

// statusLabel is an HTTP status as its three digits, or Other.
func statusLabel(code int) string {
	if code < 100 || code > 599 {
		return Other
	}
	return strconv.Itoa(code)
}

// Delivery counts one webhook delivery answered with status.
func (m *Metrics) Delivery(event string, status int) {
	if m == nil {
		return
	}
	m.deliveries.WithLabelValues(eventLabel(event), statusLabel(status)).Inc()
}

// Enqueue records how long enqueuing a task of taskType took; result is
// how it ended (for example "enqueued", "duplicate", "busy", "error").
func (m *Metrics) Enqueue(taskType, result string, d time.Duration) {
	if m == nil {
		return
	}
	m.enqueue.WithLabelValues(taskType, result).Observe(d.Seconds())
}

// Job records one attempt of a job: its task type, its outcome (a
// result.json outcome, or "retry" when it failed for another attempt) and
// how long it ran.
func (m *Metrics) Job(taskType, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	m.jobs.WithLabelValues(taskType, outcome).Observe(d.Seconds())
}

// Usage is one model call's (or one run's) token use.
type Usage struct {
	InputTokens, OutputTokens, CachedInputTokens int64
	// CostUSD is the estimate from the price table; meaningful only when
	// CostKnown.
	CostUSD   float64
	CostKnown bool
}

// ModelUsage adds u to model's counters ("openai:gpt-4.1").
func (m *Metrics) ModelUsage(model string, u Usage) {
	if m == nil {
		return
	}
	for kind, n := range map[string]int64{"input": u.InputTokens, "output": u.OutputTokens, "cached_input": u.CachedInputTokens} {
		if n > 0 {
			m.tokens.WithLabelValues(model, kind).Add(float64(n))
		}
	}
	switch {
	case u.CostKnown && u.CostUSD > 0:
		m.cost.WithLabelValues(model).Add(u.CostUSD)
	case !u.CostKnown:
		m.costUnknown.WithLabelValues(model).Inc()
	}
}

// SandboxExec records one sandbox command: outcome is one of ExecOK,
// ExecFailed, ExecTimeout, ExecError.
func (m *Metrics) SandboxExec(outcome string, d time.Duration) {
	if m == nil {
		return
	}
	switch outcome {
	case ExecOK, ExecFailed, ExecTimeout, ExecError:
	default:
		outcome = Other
	}
	m.execs.WithLabelValues(outcome).Observe(d.Seconds())
}

// Phase records how long one phase of a run took; phase is one of
// jobs/pipeline's phases or "queued", anything else counts as Other.
func (m *Metrics) Phase(phase string, d time.Duration) {
	if m == nil {
		return
	}
	if !phases[phase] {
		phase = Other
	}
	m.phases.WithLabelValues(phase).Observe(d.Seconds())
}

// LabelToPR records the time from a trigger's enqueue to its published
// pull request.
func (m *Metrics) LabelToPR(d time.Duration) {
	if m == nil {
		return
	}
	m.labelToPR.Observe(d.Seconds())
}

// GitHubWait records a wait before retrying a GitHub request; it fits
// githubapi.RetryTransport's OnWait hook.
func (m *Metrics) GitHubWait(d time.Duration) {
	if m == nil {
		return
	}
	m.githubWaits.Observe(d.Seconds())
}

// RateLimited counts one GitHub answer that was a rate limit of kind
// ("primary" or "secondary"): githubapi.RetryTransport decides it and
// calls this through its OnLimit hook, so the counter and the retries
// agree on what a rate limit is.
func (m *Metrics) RateLimited(kind string) {
	if m == nil {
		return
	}
	if kind != "primary" && kind != "secondary" {
		kind = Other
	}
	m.rateLimited.WithLabelValues(kind).Inc()
}

// GitHubTransport counts every request it sends to next (default
// http.DefaultTransport) by status. Put it below the retrying transport,
// so each attempt counts. Rate limits are counted by RateLimited, which
// the retrying transport calls.
func (m *Metrics) GitHubTransport(next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	if m == nil {
		return next
	}
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		if err != nil {
			m.githubRequests.WithLabelValues("error").Inc()
			return resp, err
		}
		m.githubRequests.WithLabelValues(statusLabel(resp.StatusCode)).Inc()
		return resp, nil
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// WebhookHandler wraps the webhook's handler and counts each delivery by
// its X-GitHub-Event and the status it was answered with, so the webhook
// package needs no metrics code of its own.
func (m *Metrics) WebhookHandler(next http.Handler) http.Handler {
	if m == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		m.Delivery(r.Header.Get("X-GitHub-Event"), sw.status)
	})
}

// statusWriter remembers the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wroteHeader = true
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Build names the binary a process runs, for RegisterBuildInfo.
type Build struct {
	Version, Commit, GoVersion string
}

// RegisterBuildInfo registers patchwright_build_info{version, commit,
// goversion}, always 1, with reg, so a dashboard can tell which release
// each serve and worker runs, and join it to the other series. It panics
// on a second registration with the same registry, as New does.
func RegisterBuildInfo(reg prometheus.Registerer, b Build) {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace:   Namespace,
		Name:        "build_info",
		Help:        "Always 1; the labels name the running binary's version, commit and Go toolchain.",
		ConstLabels: prometheus.Labels{"version": b.Version, "commit": b.Commit, "goversion": b.GoVersion},
	})
	g.Set(1)
	reg.MustRegister(g)
}
