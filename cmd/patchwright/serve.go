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

	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/githubapi"
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

// newPipeline is the pipeline the worker runs. The real one is a later
// issue; until then every agent job fails with "not implemented".
func newPipeline(log *slog.Logger) jobs.Pipeline {
	log.Warn("the agent pipeline is not implemented yet: solve and retry jobs fail permanently with that message; reply comments are posted")
	return jobs.NotImplementedPipeline{}
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
	defer queue.Close()
	hook, err := webhook.New(webhook.Config{
		Secret: []byte(cfg.webhookSecret), BotLogin: bot, TriggerLabel: cfg.triggerLabel, Logger: log,
	}, queue, webhook.NewGitHub(app, 0))
	if err != nil {
		return err
	}

	var worker *asynq.Server
	if cfg.redisURL == "" {
		if worker, err = startWorker(rdb, queue, app, log); err != nil {
			return err
		}
		defer worker.Shutdown()
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
	log.Info("serving", "addr", ln.Addr().String(), "bot", bot, "trigger_label", cfg.triggerLabel, "embedded_worker", worker != nil)
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

// startWorker starts the asynq server with the catalogue's handlers.
func startWorker(rdb redis.UniversalClient, queue *jobs.Queue, app *githubapi.App, log *slog.Logger) (*asynq.Server, error) {
	h := &jobs.Handlers{Queue: queue, Pipeline: newPipeline(log), Commenter: app, Logger: log}
	srv := jobs.NewServer(rdb, jobs.WorkerConfig{Logger: log})
	if err := srv.Start(h.Mux()); err != nil {
		return nil, errInfra{fmt.Errorf("start worker: %w", err)}
	}
	return srv, nil
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
	defer queue.Close()
	srv, err := startWorker(rdb, queue, app, log)
	if err != nil {
		return err
	}
	log.Info("worker running")
	<-ctx.Done()
	log.Info("shutting down: waiting for running jobs")
	srv.Shutdown()
	return nil
}
