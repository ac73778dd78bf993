package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/patchwright/patchwright/agent/provider"
	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/githubjob"
	"github.com/patchwright/patchwright/jobs/pipeline"
	"github.com/patchwright/patchwright/jobs/worker"
	"github.com/patchwright/patchwright/sandbox/docker"
	"github.com/patchwright/patchwright/webhook"
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

// newPipeline is the pipeline the worker runs: the GitHub pipeline over
// the Docker sandbox and the configured model. serve's embedded worker
// without PATCHWRIGHT_MODEL gets worker.NoModelPipeline (every agent job
// fails permanently, saying so), with a warning; `worker` requires a model.
func newPipeline(ctx context.Context, cfg config, log *slog.Logger, app *githubapi.App, queue *jobs.Queue) (worker.Pipeline, func(), error) {
	if cfg.model == "" {
		log.Warn("PATCHWRIGHT_MODEL is not set: solve and retry jobs fail permanently; reply comments are posted")
		return worker.NoModelPipeline{}, func() {}, nil
	}
	prov, err := provider.New(cfg.model, provider.Options{Logger: log})
	if err != nil {
		return nil, nil, fmt.Errorf("PATCHWRIGHT_MODEL: %w", err)
	}
	engine, err := docker.New(ctx, docker.Options{})
	if err != nil {
		return nil, nil, errInfra{fmt.Errorf("docker: %w", err)}
	}
	// Sandboxes a crashed worker left behind, and old cache volumes.
	go engine.RunReaper(ctx, 0, log)
	p := &githubjob.Pipeline{
		GitHub: app,
		Executor: &pipeline.Executor{Sandboxes: engine, Images: engine, Provider: prov, Logger: log,
			CacheVolume: pipeline.RepoCacheVolume},
		Cancels: queue,
		DataDir: cfg.dataDir,
		RunURL:  cfg.runURL,
		Logger:  log,
	}
	return p, func() { engine.Close() }, nil
}

// openRedis connects to cfg.redisURL or, when it is empty, starts an
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
	opt, err := redis.ParseURL(cfg.redisURL)
	if err != nil {
		return nil, nil, fmt.Errorf("PATCHWRIGHT_REDIS_URL: %v", err)
	}
	rdb := redis.NewClient(opt)
	return rdb, func() { rdb.Close() }, nil
}

// serve runs the webhook receiver on ln until ctx ends, with the worker in
// the same process when the queue is embedded.
func serve(ctx context.Context, cfg config, log *slog.Logger, ln net.Listener) error {
	app, err := githubapi.NewApp(cfg.appID, cfg.privateKey, cfg.githubAPIURL, nil)
	if err != nil {
		return err
	}
	bot, err := app.BotLogin(ctx)
	if err != nil {
		return errInfra{fmt.Errorf("find the app's bot login: %w", err)}
	}
	rdb, closeRedis, err := openRedis(cfg, log)
	if err != nil {
		return err
	}
	defer closeRedis()
	queue := jobs.NewQueue(rdb)
	hook, err := webhook.New(webhook.Config{
		Secret: []byte(cfg.webhookSecret), BotLogin: bot, TriggerLabel: cfg.triggerLabel, Logger: log,
	}, queue, githubapi.NewPermissionCache(app, 0))
	if err != nil {
		return err
	}

	var embedded *asynq.Server
	if cfg.redisURL == "" {
		var closeWorker func()
		if embedded, closeWorker, err = startWorker(ctx, cfg, rdb, queue, app, log); err != nil {
			return err
		}
		defer closeWorker()
	}
	go (&webhook.Redeliverer{Source: app, Logger: log}).Run(ctx, 0)

	srv := &http.Server{
		Handler:           routes(hook, queue),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("serving", "addr", ln.Addr().String(), "bot", bot, "trigger_label", cfg.triggerLabel, "embedded_worker", embedded != nil)
	select {
	case err := <-errc:
		return errInfra{fmt.Errorf("http server: %w", err)}
	case <-ctx.Done():
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return errInfra{fmt.Errorf("shut down http server: %w", err)}
	}
	return nil
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
func startWorker(ctx context.Context, cfg config, rdb redis.UniversalClient, queue *jobs.Queue, app *githubapi.App, log *slog.Logger) (*asynq.Server, func(), error) {
	pipe, closePipeline, err := newPipeline(ctx, cfg, log, app, queue)
	if err != nil {
		return nil, nil, err
	}
	h := &worker.Handlers{Queue: queue, Pipeline: pipe, Commenter: app, Logger: log}
	srv := worker.NewServer(rdb, worker.Config{Logger: log})
	if err := srv.Start(h.Mux()); err != nil {
		closePipeline()
		return nil, nil, errInfra{fmt.Errorf("start worker: %w", err)}
	}
	if gp, ok := pipe.(*githubjob.Pipeline); ok {
		insp := asynq.NewInspectorFromRedisClient(rdb)
		go (&worker.Sweeper{Inspector: insp, Queue: queue, Reporter: gp, Logger: log}).Run(ctx, 0)
	}
	return srv, func() { srv.Shutdown(); closePipeline() }, nil
}

// work runs the worker until ctx ends.
func work(ctx context.Context, cfg config, log *slog.Logger) error {
	app, err := githubapi.NewApp(cfg.appID, cfg.privateKey, cfg.githubAPIURL, nil)
	if err != nil {
		return err
	}
	rdb, closeRedis, err := openRedis(cfg, log)
	if err != nil {
		return err
	}
	defer closeRedis()
	queue := jobs.NewQueue(rdb)
	_, closeWorker, err := startWorker(ctx, cfg, rdb, queue, app, log)
	if err != nil {
		return err
	}
	log.Info("worker running", "model", cfg.model)
	<-ctx.Done()
	log.Info("shutting down: waiting for running jobs")
	closeWorker()
	return nil
}
