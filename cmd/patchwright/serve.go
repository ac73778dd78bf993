package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/patchwright/patchwright/agent/images"
	"github.com/patchwright/patchwright/agent/provider"
	"github.com/patchwright/patchwright/internal/logkey"
	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/budget"
	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/githubjob"
	"github.com/patchwright/patchwright/jobs/metrics"
	"github.com/patchwright/patchwright/jobs/outcomes"
	"github.com/patchwright/patchwright/jobs/pipeline"
	"github.com/patchwright/patchwright/jobs/redisconn"
	"github.com/patchwright/patchwright/jobs/runstore"
	"github.com/patchwright/patchwright/jobs/schedule"
	"github.com/patchwright/patchwright/jobs/tracing"
	"github.com/patchwright/patchwright/jobs/worker"
	"github.com/patchwright/patchwright/sandbox/docker"
	"github.com/patchwright/patchwright/webhook"
	"github.com/patchwright/patchwright/webhook/queueui"
	"github.com/patchwright/patchwright/webhook/runpage"
	"github.com/patchwright/patchwright/webhook/runsui"
	"github.com/patchwright/patchwright/webhook/setup"
)

// Server timeouts. The webhook body may be 25 MiB, read within ReadTimeout.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 60 * time.Second
	writeTimeout      = 30 * time.Second
	shutdownTimeout   = 15 * time.Second
	readyzTimeout     = time.Second
)

// errInfra marks failures of the environment (exit status 2), as opposed to
// bad configuration (exit status 1).
type errInfra struct{ err error }

func (e errInfra) Error() string { return e.err.Error() }
func (e errInfra) Unwrap() error { return e.err }

// workerDeps are the clients a worker is built from, shared by serve's
// embedded worker and `worker`.
type workerDeps struct {
	cfg   config
	log   *slog.Logger
	rdb   redis.UniversalClient
	queue *jobs.Queue
	app   *githubapi.App
	m     *metrics.Metrics
}

// newPipeline is the pipeline the worker runs: the GitHub pipeline over
// the Docker sandbox and the configured model. serve's embedded worker
// without PATCHWRIGHT_MODEL gets worker.NoModelPipeline (every agent job
// fails permanently, saying so), with a warning; `worker` requires a model.
func newPipeline(ctx context.Context, d workerDeps) (worker.Pipeline, func(), error) {
	cfg, log, m := d.cfg, d.log, d.m
	if cfg.model == "" {
		log.Warn("PATCHWRIGHT_MODEL is not set: solve and retry jobs fail permanently; reply comments are posted")
		return worker.NoModelPipeline{}, func() {}, nil
	}
	prov, err := provider.New(cfg.model, provider.Options{Logger: log})
	if err != nil {
		return nil, nil, fmt.Errorf("PATCHWRIGHT_MODEL: %w", err)
	}
	summary, err := summaryProvider(cfg.summaryModel, log)
	if err != nil {
		return nil, nil, err
	}
	// One price table for /metrics and for every cost a run shows or
	// enforces (newExecutor gives the executor the same one).
	prices := cfg.sandbox.prices
	window, err := provider.WindowFromEnv(cfg.model, nil)
	if err != nil {
		return nil, nil, err
	}
	web, err := setup.WebURLFor(cfg.githubAPIURL)
	if err != nil {
		return nil, nil, err
	}
	signer, err := runpage.NewSigner(cfg.privateKey, cfg.runRetention)
	if err != nil {
		return nil, nil, err
	}
	engine, err := docker.New(ctx, cfg.sandbox.engineOptions(false))
	if err != nil {
		return nil, nil, errInfra{fmt.Errorf("docker: %w", err)}
	}
	// Sandboxes a crashed worker left behind, and old cache volumes.
	go engine.RunReaper(ctx, 0, log)
	exec := workerExecutor(d, engine, meteredProvider{prov, m, prices})
	exec.Window = window
	if summary != nil {
		exec.SummaryProvider = meteredProvider{summary, m, prices}
	}
	if err := withReview(exec, d, prov); err != nil {
		return nil, nil, err
	}
	installations, err := installationExecutors(d, exec)
	if err != nil {
		return nil, nil, err
	}
	tr, err := tracing.Start(ctx, currentBuild().String(), log)
	if err != nil {
		engine.Close()
		return nil, nil, err
	}
	if tr != nil {
		log.Info("job traces go to the OTLP endpoint of OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	p := &githubjob.Pipeline{
		Tracer:   tr.Tracer(),
		GitHub:   d.app,
		Executor: exec,
		// Those that bring their own model and keys run on them.
		Installations: installations,
		Cancels:       d.queue,
		Budget:        monthlyBudget(cfg, d.rdb),
		DataDir:       cfg.dataDir,
		RunURL:        cfg.runURL,
		RunLink:       signer.Link,
		Logger:        log,
		Notes:         d.queue,
		Plans:         d.queue,
		Policy:        d.cfg.policy,
		Outcomes:      &outcomes.Store{Redis: d.rdb, Keep: runstore.Keep{Retention: d.cfg.runRetention}},
		Runs:          &runstore.Store{Redis: d.rdb, Keep: runstore.Keep{Retention: d.cfg.runRetention}},
		Images:        &images.Fetcher{Hosts: images.Hosts{Web: web}},
		Audit:         func(ctx context.Context, e jobs.AuditEntry) error { return d.queue.Audit(ctx, e, d.cfg.auditRetention) },
	}
	return p, func() { engine.Close(); stopTracing(ctx, tr, log) }, nil
}

// stopTracing sends the spans still queued, bounded (tracing.Shutdown):
// those a collector that is down does not take are lost, and said so.
func stopTracing(ctx context.Context, tr *tracing.Tracing, log *slog.Logger) {
	if err := tr.Shutdown(context.WithoutCancel(ctx)); err != nil {
		log.Warn("job traces: the last spans were not exported", logkey.Err, err)
	}
}

// withReview gives exec the review before publishing: its model (the
// main one, prov, unless PATCHWRIGHT_REVIEW_MODEL names another), its
// budget and the advisory cache.
func withReview(exec *pipeline.Executor, d workerDeps, prov provider.Provider) error {
	review, err := reviewProvider(d.cfg.reviewModel, prov, d.log)
	if err != nil {
		return err
	}
	prices := d.cfg.sandbox.prices
	if review != nil {
		exec.ReviewProvider = meteredProvider{review, d.m, prices}
		if _, known := prices.Cost(review.Model(), provider.Usage{}); !known {
			// The review fails closed without a price (its budget cannot be
			// kept), which turns every pull request into a draft: say so now.
			d.log.Warn("the review model has no price in the price table: every review will fail and every pull request will be a draft", "model", review.Model())
		}
	}
	exec.ReviewMaxCostUSD = d.cfg.reviewMaxCostUSD
	exec.AdvisoryCache = &pipeline.AdvisoryCache{}
	return nil
}

// summaryProvider builds the summary model PATCHWRIGHT_SUMMARY_MODEL
// names, as the model is built (keys and base URLs alike); nil when unset.
// A replay has no summary to give: it replays the model's own turns.
func summaryProvider(spec string, log *slog.Logger) (provider.Provider, error) {
	if spec == "" {
		return nil, nil
	}
	if strings.HasPrefix(strings.ToLower(spec), provider.NameReplay+":") {
		return nil, fmt.Errorf("PATCHWRIGHT_SUMMARY_MODEL: %q: a replay cannot summarise", spec)
	}
	p, err := provider.New(spec, provider.Options{Logger: log})
	if err != nil {
		return nil, fmt.Errorf("PATCHWRIGHT_SUMMARY_MODEL: %w", err)
	}
	return p, nil
}

// reviewProvider builds the review model PATCHWRIGHT_REVIEW_MODEL names,
// as the model is built; unset, the review uses the model itself, and a
// replayed model (which has no answer of its own to give) none.
func reviewProvider(spec string, model provider.Provider, log *slog.Logger) (provider.Provider, error) {
	if spec == "" {
		if _, replayed := provider.ReplayedFrom(model); replayed {
			return nil, nil
		}
		return model, nil
	}
	if strings.HasPrefix(strings.ToLower(spec), provider.NameReplay+":") {
		return nil, fmt.Errorf("PATCHWRIGHT_REVIEW_MODEL: %q: a replay cannot review", spec)
	}
	p, err := provider.New(spec, provider.Options{Logger: log})
	if err != nil {
		return nil, fmt.Errorf("PATCHWRIGHT_REVIEW_MODEL: %w", err)
	}
	return p, nil
}

// workerExecutor is the worker's executor: newExecutor's, with every
// sandbox command metered and the job's log lines kept.
func workerExecutor(d workerDeps, e engine, p provider.Provider) *pipeline.Executor {
	exec := newExecutor(d.cfg.sandbox, e)
	exec.Sandboxes = meteredRunner{exec.Sandboxes, d.m}
	exec.Provider = p
	exec.Logger = d.log
	exec.Timings = phaseMetrics(d.m)
	return &exec
}

// phaseMetrics records a run's phases and, when it published a pull
// request, the time from the trigger's enqueue to it.
func phaseMetrics(m *metrics.Metrics) func(pipeline.Timings) {
	return func(t pipeline.Timings) {
		for _, p := range t.Phases {
			m.Phase(string(p.Phase), p.Duration)
		}
		if t.ToPublished > 0 {
			m.LabelToPR(t.ToPublished)
		}
	}
}

// openRedis connects to cfg.redisURL (one server, TLS or Sentinel:
// jobs/redisconn) or, when it is empty, starts an
// embedded miniredis (with its TTL clock on: asynq relies on expiring keys).
func openRedis(cfg config, log *slog.Logger) (redis.UniversalClient, func(), error) {
	if cfg.redisURL == "" {
		m := miniredis.NewMiniRedis()
		m.ClockTTL(true)
		if err := m.StartAddr("127.0.0.1:0"); err != nil {
			return nil, nil, errInfra{fmt.Errorf("start embedded redis: %w", err)}
		}
		log.Warn("PATCHWRIGHT_REDIS_URL is not set: using an in-process Redis and worker; queued jobs do not survive a restart (set PATCHWRIGHT_REDIS_URL for production)")
		rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
		return rdb, func() { rdb.Close(); m.Close() }, nil
	}
	rdb, err := redisconn.Open(cfg.redisURL, redisconn.TLS{CAPEM: cfg.redisCA})
	if err != nil {
		return nil, nil, fmt.Errorf("PATCHWRIGHT_REDIS_URL: %v", err)
	}
	moved, err := jobs.MigrateKeys(context.Background(), rdb)
	if err != nil {
		rdb.Close()
		return nil, nil, errInfra{fmt.Errorf("move the keys of an older version: %w", err)}
	}
	if moved != (jobs.Moved{}) {
		log.Info("moved the keys of an older version to their hash-tagged names", "renamed", moved.Renamed, "kept", moved.Kept)
	}
	return rdb, func() { rdb.Close() }, nil
}

// serve runs the webhook receiver on ln until ctx ends, with the worker in
// the same process when the queue is embedded. Without app credentials it
// first serves the manifest flow (setup mode) on the same listener.
func serve(ctx context.Context, cfg config, log *slog.Logger, ln net.Listener) error {
	h := &swapHandler{}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
	}
	errc := make(chan error, 1)
	// Serving starts once h has a handler: the receiver's, or setup's.
	start := sync.OnceFunc(func() { go func() { errc <- srv.Serve(ln) }() })
	err := receive(ctx, cfg, log, receiving{h, start, errc, ln.Addr().String()})
	if ctx.Err() != nil {
		log.Info("shutting down")
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	if serr := srv.Shutdown(sctx); serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = errInfra{fmt.Errorf("shut down http server: %w", serr)}
	}
	return err
}

// receive sets up the receiver behind h and waits until ctx ends or the
// HTTP server fails.
func receive(ctx context.Context, cfg config, log *slog.Logger, srv receiving) error {
	if cfg.setupMode {
		var err error
		if cfg, err = awaitSetup(ctx, cfg, log, srv); err != nil || ctx.Err() != nil {
			return err
		}
	}
	m, reg := newMetrics()
	app, bot, err := connectApp(ctx, cfg, m)
	if err != nil {
		return err
	}
	rdb, closeRedis, err := openRedis(cfg, log)
	if err != nil {
		return err
	}
	defer closeRedis()
	queue := jobs.NewQueue(rdb)
	hook, err := webhook.New(webhook.Config{
		Secret: []byte(cfg.webhookSecret), BotLogin: bot, AppID: app.ID(), TriggerLabel: cfg.triggerLabel, Logger: log,
		Meanings:  queue, // a signed body replayed under a new delivery ID is a duplicate
		MaxBodies: cfg.webhookMaxBodies, MaxBodyBytes: cfg.webhookMaxBodyBytes,
		Audit: func(ctx context.Context, e jobs.AuditEntry) error { return queue.Audit(ctx, e, cfg.auditRetention) },
	}, meteredQueue{queue, m}, githubapi.NewPermissionCache(app, 0))
	if err != nil {
		return err
	}
	dashboard, err := queueDashboard(cfg, rdb)
	if err != nil {
		return err
	}

	var embedded *worker.Server
	if cfg.redisURL == "" {
		var closeWorker func()
		if embedded, closeWorker, err = startWorker(ctx, workerDeps{cfg, log, rdb, queue, app, m}); err != nil {
			return err
		}
		defer closeWorker()
	}
	go (&webhook.Redeliverer{Source: app, Logger: log}).Run(ctx, 0)

	mux := routes(m.WebhookHandler(hook), queue)
	metrics.WatchQueues(reg, asynq.NewInspectorFromRedisClient(rdb))
	// Outcome figures come from Redis at each scrape: serve's /metrics
	// only, so workers do not report the same pull requests again.
	outcomeStore := &outcomes.Store{Redis: rdb, Keep: runstore.Keep{Retention: cfg.runRetention}}
	reg.MustRegister(&outcomes.Collector{Store: outcomeStore})
	mux.Handle("GET /metrics", metrics.Handler(reg))
	signer, err := runpage.NewSigner(cfg.privateKey, cfg.runRetention)
	if err != nil {
		return err
	}
	runs := &runstore.Store{Redis: rdb, Keep: runstore.Keep{Retention: cfg.runRetention}}
	mux.Handle("GET /runs/{id}", &runpage.Handler{Store: runs, Signer: signer, Logger: log})
	if dashboard != nil {
		defer dashboard.Close()
		mux.Handle(queueui.DefaultPath+"/", dashboard)
		// The runs dashboard shares the queue dashboard's password.
		list, err := runsui.New(runsui.Config{Runs: runs, Outcomes: outcomeStore, Password: cfg.queuePassword, Logger: log,
			Link: func(id string) string { return signer.Link(runsui.Path, id) }})
		if err != nil {
			return err
		}
		mux.Handle(runsui.Path, list)
	}
	srv.h.set(mux)
	srv.start()
	log.Info("serving", "addr", srv.addr, "bot", bot, "trigger_label", cfg.triggerLabel, "embedded_worker", embedded != nil, "queue_dashboard", dashboard != nil)
	return srv.await(ctx)
}

// connectApp is the app's GitHub client and its bot's login, which the
// webhook is configured with.
func connectApp(ctx context.Context, cfg config, m *metrics.Metrics) (*githubapi.App, string, error) {
	app, err := githubapi.NewApp(cfg.appID, cfg.privateKey, cfg.githubAPIURL, githubTransport(m))
	if err != nil {
		return nil, "", err
	}
	bot, err := app.BotLogin(ctx)
	if err != nil {
		return nil, "", errInfra{fmt.Errorf("find the app's bot login: %w", err)}
	}
	return app, bot, nil
}

// receiving is the HTTP side of serve: the handler it swaps in, start
// (once) and its failure, and the address it listens on.
type receiving struct {
	h     *swapHandler
	start func()
	errc  <-chan error
	addr  string
}

// await is the HTTP server's failure, or nil once ctx is done.
func (r receiving) await(ctx context.Context) error {
	select {
	case err := <-r.errc:
		return errInfra{fmt.Errorf("http server: %w", err)}
	case <-ctx.Done():
		return nil
	}
}

func routes(hook http.Handler, queue *jobs.Queue) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("/webhook", hook)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), readyzTimeout)
		defer cancel()
		if err := queue.Ping(ctx); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	})
	return mux
}

// startWorker starts the asynq server with the catalogue's handlers; the
// returned function shuts it down and releases the pipeline's clients.
func startWorker(ctx context.Context, d workerDeps) (*worker.Server, func(), error) {
	cfg, rdb, queue, app, log := d.cfg, d.rdb, d.queue, d.app, d.log
	pipe, closePipeline, err := newPipeline(ctx, d)
	if err != nil {
		return nil, nil, err
	}
	fair := &worker.Fairness{Installation: cfg.installationConcurrency, Repo: cfg.repoConcurrency,
		Inspector: asynq.NewInspectorFromRedisClient(rdb)}
	bot, err := app.BotLogin(ctx)
	if err != nil {
		closePipeline()
		return nil, nil, errInfra{fmt.Errorf("find the app's bot login: %w", err)}
	}
	classifier := &outcomes.Classifier{GitHub: app, Store: &outcomes.Store{Redis: rdb, Keep: runstore.Keep{Retention: cfg.runRetention}}, AppLogin: bot}
	h := &worker.Handlers{Queue: queue, Pipeline: pipe, Commenter: app,
		Branches: &githubjob.Branches{GitHub: app}, Approvals: &githubjob.Approvals{GitHub: app}, Fairness: fair, Logger: log,
		Outcomes: classifier}
	srv := worker.NewServer(rdb, worker.Config{Logger: log, Concurrency: cfg.workerConcurrency, ShutdownTimeout: cfg.shutdownGrace})
	mux := h.Mux()
	mux.Use(jobMetrics(d.m))
	if err := srv.Start(mux); err != nil {
		closePipeline()
		return nil, nil, errInfra{fmt.Errorf("start worker: %w", err)}
	}
	// Untouched agent pull requests are warned, then closed; every
	// worker makes the pass, and Redis claims keep each step to one.
	// The periodic outcome check rides on the same schedule.
	go (&githubjob.Stale{GitHub: app, Branches: &githubjob.Branches{GitHub: app}, Claims: queue, Logger: log,
		Outcomes: &outcomes.Check{Classifier: classifier}}).Run(ctx, 0)
	lastSync := func() {}
	if gp, ok := pipe.(*githubjob.Pipeline); ok {
		// Runs go to Redis too, where serve on any machine can show them.
		mirror := &runstore.Mirror{Dir: runsDir(cfg.dataDir), Store: &runstore.Store{Redis: rdb, Keep: runstore.Keep{Retention: cfg.runRetention}}, Logger: log}
		go mirror.Run(ctx)
		// Runs that end while the shutdown waits for them are stored too.
		lastSync = func() { mirror.Sync(context.WithoutCancel(ctx)) }
		insp := asynq.NewInspectorFromRedisClient(rdb)
		go (&worker.Sweeper{Inspector: insp, Queue: queue, Reporter: gp, Logger: log}).Run(ctx, 0)
		// Every worker scans; a Redis claim per schedule and period
		// makes one of them open the issue.
		go (&schedule.Scanner{GitHub: app, Queue: queue, Redis: rdb, Logger: log}).Run(ctx, 0)
	}
	return srv, func() { srv.Shutdown(); lastSync(); closePipeline() }, nil
}

// work runs the worker until ctx ends.
func work(ctx context.Context, cfg config, log *slog.Logger) error {
	m, reg := newMetrics()
	app, err := githubapi.NewApp(cfg.appID, cfg.privateKey, cfg.githubAPIURL, githubTransport(m))
	if err != nil {
		return err
	}
	rdb, closeRedis, err := openRedis(cfg, log)
	if err != nil {
		return err
	}
	defer closeRedis()
	queue := jobs.NewQueue(rdb)
	_, closeWorker, err := startWorker(ctx, workerDeps{cfg, log, rdb, queue, app, m})
	if err != nil {
		return err
	}
	if cfg.listenSet {
		stop, err := serveWorkerHTTP(cfg.listen, reg, log)
		if err != nil {
			closeWorker()
			return err
		}
		defer stop()
	}
	log.Info("worker running", "model", cfg.model, "concurrency", cfg.workerConcurrency)
	<-ctx.Done()
	log.Info("shutting down: waiting for running jobs")
	closeWorker()
	return nil
}

// monthlyBudget keeps the monthly caps in the queue's Redis; nil when the
// operator set none.
func monthlyBudget(cfg config, rdb redis.UniversalClient) githubjob.Budget {
	if cfg.monthlyCaps == (budget.Caps{}) {
		return nil
	}
	return &budget.Store{Redis: rdb, Caps: cfg.monthlyCaps}
}
