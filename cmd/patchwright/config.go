package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/patchwright/patchwright/jobs/budget"
	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/worker"
	"github.com/patchwright/patchwright/webhook"
	"github.com/patchwright/patchwright/webhook/setup"
)

// Configuration defaults (DESIGN §4.2).
const (
	defaultListen = ":8080"
)

// config is the configuration of serve and worker. Each field comes from
// its PATCHWRIGHT_ variable, overridden by the flag of the same name in
// kebab case.
type config struct {
	webhookSecret  string
	appID          int64
	privateKey     []byte
	redisURL       string // "" = embedded queue (serve only)
	redisCA        []byte // extra roots for a rediss address; nil = the system's
	listen         string
	githubAPIURL   string
	triggerLabel   string
	dataDir        string
	privateKeyFile string
	model          string // PROVIDER:NAME; required by a worker
	// summaryModel summarises what compaction removes; "" = none.
	summaryModel string
	runURL       string // base of run links; "" = comments say where the log lies
	// sandbox shapes every sandbox, as of run and eval.
	sandbox sandboxSettings
	// webhookMaxBodies and webhookMaxBodyBytes bound the bodies read
	// before their signatures are checked; 0 = webhook's defaults.
	webhookMaxBodies    int
	webhookMaxBodyBytes int64
	// workerConcurrency is jobs per worker process; 0 = worker.DefaultConcurrency.
	workerConcurrency int
	// installationConcurrency and repoConcurrency limit one installation's
	// and one repository's running agent jobs across all workers; 0 = a
	// share of the pool (worker.Fairness), -1 = none.
	installationConcurrency, repoConcurrency int
	// shutdownGrace is how long a stopping worker lets running jobs
	// finish; 0 = worker.DefaultShutdownTimeout.
	shutdownGrace time.Duration
	// queuePassword opens /queue; "" = no queue dashboard.
	queuePassword string
	// listenSet: PATCHWRIGHT_LISTEN was given. A worker serves /metrics
	// and /healthz only then, so that several on one host do not collide.
	listenSet bool
	// runRetention is how long run records stay in Redis, and run links
	// work; 0 = runstore.DefaultRetention.
	runRetention time.Duration
	// monthlyCaps are the monthly cost caps per installation and per
	// repository; zero fields: none.
	monthlyCaps budget.Caps
	// setupMode: serve has no app credentials, given or stored under the
	// data directory by webhook/setup; it offers only /setup.
	setupMode bool
}

// parseBodyBounds checks the webhook's body bounds; empty keeps a default.
func parseBodyBounds(bodies, bytes string, cfg *config) error {
	if bodies != "" {
		n, err := strconv.Atoi(bodies)
		if err != nil || n <= 0 {
			return fmt.Errorf("PATCHWRIGHT_WEBHOOK_MAX_BODIES: %q is not a positive number", bodies)
		}
		cfg.webhookMaxBodies = n
	}
	if bytes != "" {
		n, err := strconv.ParseInt(bytes, 10, 64)
		if err != nil || n < webhook.MinBodyBytes {
			return fmt.Errorf("PATCHWRIGHT_WEBHOOK_MAX_BODY_BYTES: %q is not a number of bytes of at least %d", bytes, webhook.MinBodyBytes)
		}
		cfg.webhookMaxBodyBytes = n
	}
	return nil
}

// parseWorkerBounds reads the fairness limits and the drain's grace
// period; empty keeps a default. A limit of 0 is none (-1 inside).
func parseWorkerBounds(inst, repo, grace string, cfg *config) error {
	limit := func(name, v string, dst *int) error {
		if v == "" {
			return nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("%s: %q is not a number of jobs (0 for no limit)", name, v)
		}
		*dst = n
		if n == 0 {
			*dst = -1
		}
		return nil
	}
	if err := limit("PATCHWRIGHT_INSTALLATION_CONCURRENCY", inst, &cfg.installationConcurrency); err != nil {
		return err
	}
	if err := limit("PATCHWRIGHT_REPO_CONCURRENCY", repo, &cfg.repoConcurrency); err != nil {
		return err
	}
	if grace != "" {
		d, err := time.ParseDuration(grace)
		if err != nil || d <= 0 {
			return fmt.Errorf("PATCHWRIGHT_SHUTDOWN_GRACE: %q is not a positive duration such as 5m", grace)
		}
		cfg.shutdownGrace = d
	}
	return nil
}

// minQueuePassword mirrors queueui.MinPasswordLength, checked at start-up
// so a short password is exit status 1, not a dashboard silently missing.
const minQueuePassword = 16

// setting is one configuration name.
type setting struct {
	env, flag, def, usage string
	dst                   *string
}

// parseConfig reads env, then flags, and checks what command needs. Every
// error is one line naming exactly what is missing or wrong.
func parseConfig(command string, args []string, stderr io.Writer) (config, error) {
	var raw struct {
		secret, appID, key, keyFile, redis, redisCA, listen, api, label, data, model, runURL string
		summaryModel                                                                         string
		concurrency, queuePassword, retention, maxBodies, maxBodyBytes                       string
		instConcurrency, repoConcurrency, grace                                              string
		monthlyInstallation, monthlyRepository                                               string
		sandbox                                                                              rawSandbox
	}
	settings := []setting{
		{"PATCHWRIGHT_WEBHOOK_SECRET", "webhook-secret", "", "webhook secret (serve: required)", &raw.secret},
		{"PATCHWRIGHT_APP_ID", "app-id", "", "GitHub App ID (required)", &raw.appID},
		{"PATCHWRIGHT_PRIVATE_KEY", "private-key", "", "GitHub App private key, PEM (this or --private-key-file)", &raw.key},
		{"PATCHWRIGHT_PRIVATE_KEY_FILE", "private-key-file", "", "file with the GitHub App private key", &raw.keyFile},
		{"PATCHWRIGHT_REDIS_URL", "redis-url", "", "Redis address: redis://[user:password@]host:6379/0, rediss:// for TLS, or redis-sentinel://[user:password@]host:26379[,host:port...]/MASTER[/db] (rediss-sentinel:// for TLS), or redis-cluster://[user:password@]host:6379[,host:port...] (rediss-cluster:// for TLS) (serve: unset runs an embedded queue; worker: required)", &raw.redis},
		{"PATCHWRIGHT_REDIS_CA_FILE", "redis-ca-file", "", "PEM file of CA certificates a rediss address is checked against, besides the system's", &raw.redisCA},
		{"PATCHWRIGHT_LISTEN", "listen", defaultListen, "address serve listens on", &raw.listen},
		{"PATCHWRIGHT_GITHUB_API_URL", "github-api-url", githubapi.DefaultBaseURL, "GitHub REST API root", &raw.api},
		{"PATCHWRIGHT_TRIGGER_LABEL", "trigger-label", webhook.DefaultTriggerLabel, "label that starts a job", &raw.label},
		{"PATCHWRIGHT_DATA_DIR", "data-dir", "", "directory for run logs (default: the system temporary directory)", &raw.data},
		{"PATCHWRIGHT_MODEL", "model", "", "model as PROVIDER:NAME, e.g. openai:gpt-4.1 (worker: required)", &raw.model},
		{"PATCHWRIGHT_SUMMARY_MODEL", "summary-model", "", "a smaller model as PROVIDER:NAME, with the same keys and base URLs as the model, that summarises old tool output when compaction removes it from the conversation; the summary replaces the bare placeholder and its cost counts in the run's (default: none, placeholders only)", &raw.summaryModel},
		{"PATCHWRIGHT_RUN_URL", "run-url", "", "base URL of run pages, linked as URL/<run id> (optional)", &raw.runURL},
		{"PATCHWRIGHT_WORKER_CONCURRENCY", "worker-concurrency", "", "jobs one worker process runs at once (default " + strconv.Itoa(worker.DefaultConcurrency) + ")", &raw.concurrency},
		{"PATCHWRIGHT_INSTALLATION_CONCURRENCY", "installation-concurrency", "", "agent jobs of one installation running at once across all workers; 0 is none (default: half the pool, the concurrency of every worker together, at least 1)", &raw.instConcurrency},
		{"PATCHWRIGHT_REPO_CONCURRENCY", "repo-concurrency", "", "agent jobs of one repository running at once across all workers; 0 is none (default: a quarter of the pool, at least 1)", &raw.repoConcurrency},
		{"PATCHWRIGHT_SHUTDOWN_GRACE", "shutdown-grace", "", "how long a stopping worker lets running jobs finish, e.g. 5m (default 30s); in its last quarter (at most 2m) a job is stopped (a command still running is cut short) and its change pushed as a draft marked interrupted, or with no change handed back to the queue (Kubernetes' terminationGracePeriodSeconds must exceed it by " + worker.HandBackTimeout.String() + ")", &raw.grace},
		{"PATCHWRIGHT_RUN_RETENTION", "run-retention", "", "how long run records stay in Redis and run links work, e.g. 720h (default 720h, 30 days)", &raw.retention},
		{"PATCHWRIGHT_WEBHOOK_MAX_BODIES", "webhook-max-bodies", "", "webhook bodies read at once before their signatures are checked; past it, 503 (default " + strconv.Itoa(webhook.DefaultMaxBodies) + ")", &raw.maxBodies},
		{"PATCHWRIGHT_WEBHOOK_MAX_BODY_BYTES", "webhook-max-body-bytes", "", "bytes those bodies may hold together; past it, 503 (default " + strconv.Itoa(webhook.DefaultMaxBodyBytes) + ")", &raw.maxBodyBytes},
		{"PATCHWRIGHT_QUEUE_PASSWORD", "queue-password", "", "password of the /queue dashboard, user operator, at least 16 characters (unset: no dashboard)", &raw.queuePassword},
		{"PATCHWRIGHT_MONTHLY_COST_USD_INSTALLATION", "monthly-cost-usd-installation", "", "monthly cap in US dollars on the estimated model cost of one installation's runs, counted in Redis; once reached, new jobs are refused with a comment until the month (UTC) resets (default: no cap)", &raw.monthlyInstallation},
		{"PATCHWRIGHT_MONTHLY_COST_USD_REPOSITORY", "monthly-cost-usd-repository", "", "the same cap for each repository (default: no cap)", &raw.monthlyRepository},
	}
	settings = append(settings, raw.sandbox.table()...)
	fs := flag.NewFlagSet(command, flag.ContinueOnError)
	fs.SetOutput(stderr)
	for _, s := range settings {
		def := s.def
		if v, ok := os.LookupEnv(s.env); ok {
			def = v
		}
		fs.StringVar(s.dst, s.flag, def, s.usage+" ["+s.env+"]")
	}
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("%s takes no arguments, got %q", command, fs.Args())
	}
	_, listenSet := os.LookupEnv("PATCHWRIGHT_LISTEN")
	fs.Visit(func(f *flag.Flag) { listenSet = listenSet || f.Name == "listen" })
	cfg := config{
		webhookSecret: raw.secret, redisURL: raw.redis, listen: raw.listen,
		githubAPIURL: raw.api, triggerLabel: strings.TrimSpace(raw.label), dataDir: raw.data, privateKeyFile: raw.keyFile,
		model: strings.TrimSpace(raw.model), summaryModel: strings.TrimSpace(raw.summaryModel), runURL: strings.TrimSpace(raw.runURL),
		queuePassword: raw.queuePassword, listenSet: listenSet,
	}
	if raw.redisCA != "" {
		b, err := os.ReadFile(raw.redisCA)
		if err != nil {
			return config{}, fmt.Errorf("PATCHWRIGHT_REDIS_CA_FILE: %v", err)
		}
		cfg.redisCA = b
	}
	if raw.concurrency != "" {
		n, err := strconv.Atoi(raw.concurrency)
		if err != nil || n <= 0 {
			return config{}, fmt.Errorf("PATCHWRIGHT_WORKER_CONCURRENCY: %q is not a positive number", raw.concurrency)
		}
		cfg.workerConcurrency = n
	}
	if err := parseWorkerBounds(raw.instConcurrency, raw.repoConcurrency, raw.grace, &cfg); err != nil {
		return config{}, err
	}
	if err := parseBodyBounds(raw.maxBodies, raw.maxBodyBytes, &cfg); err != nil {
		return config{}, err
	}
	for _, c := range []struct {
		env, raw string
		dst      *float64
	}{
		{"PATCHWRIGHT_MONTHLY_COST_USD_INSTALLATION", raw.monthlyInstallation, &cfg.monthlyCaps.Installation},
		{"PATCHWRIGHT_MONTHLY_COST_USD_REPOSITORY", raw.monthlyRepository, &cfg.monthlyCaps.Repository},
	} {
		if c.raw == "" {
			continue
		}
		f, err := strconv.ParseFloat(c.raw, 64)
		if err != nil || !(f > 0) || math.IsInf(f, 0) {
			return config{}, fmt.Errorf("%s: %q is not a positive amount of dollars, such as 200", c.env, c.raw)
		}
		*c.dst = f
	}
	sb, err := raw.sandbox.parse()
	if err != nil {
		return config{}, err
	}
	cfg.sandbox = sb
	if raw.retention != "" {
		d, err := time.ParseDuration(raw.retention)
		if err != nil || d <= 0 {
			return config{}, fmt.Errorf("PATCHWRIGHT_RUN_RETENTION: %q is not a positive duration such as 720h", raw.retention)
		}
		cfg.runRetention = d
	}
	if raw.queuePassword != "" && len(raw.queuePassword) < minQueuePassword {
		return config{}, fmt.Errorf("PATCHWRIGHT_QUEUE_PASSWORD: shorter than %d characters", minQueuePassword)
	}
	if err := storedCredentials(command, &raw.appID, &raw.key, &raw.keyFile, &raw.secret, raw.data, &cfg); err != nil {
		return config{}, err
	}
	var missing []string
	if command == "serve" && raw.secret == "" && !cfg.setupMode {
		missing = append(missing, "PATCHWRIGHT_WEBHOOK_SECRET (--webhook-secret)")
	}
	if raw.appID == "" && !cfg.setupMode {
		missing = append(missing, "PATCHWRIGHT_APP_ID (--app-id)")
	}
	if raw.key == "" && raw.keyFile == "" && !cfg.setupMode {
		missing = append(missing, "PATCHWRIGHT_PRIVATE_KEY or PATCHWRIGHT_PRIVATE_KEY_FILE (--private-key, --private-key-file)")
	}
	if command == "worker" && raw.redis == "" {
		missing = append(missing, "PATCHWRIGHT_REDIS_URL (--redis-url; only serve has an embedded queue)")
	}
	if command == "worker" && strings.TrimSpace(raw.model) == "" {
		missing = append(missing, "PATCHWRIGHT_MODEL (--model, e.g. openai:gpt-4.1)")
	}
	if len(missing) > 0 {
		msg := "missing " + strings.Join(missing, ", ")
		if command == "serve" && raw.data == "" && raw.appID == "" {
			msg += " (or set PATCHWRIGHT_DATA_DIR to register the app at /setup)"
		}
		return config{}, errors.New(msg)
	}
	if cfg.triggerLabel == "" {
		return config{}, errors.New("PATCHWRIGHT_TRIGGER_LABEL: empty")
	}
	if cfg.setupMode {
		return cfg, nil
	}
	id, err := strconv.ParseInt(raw.appID, 10, 64)
	if err != nil || id <= 0 {
		return config{}, fmt.Errorf("PATCHWRIGHT_APP_ID: %q is not a positive number", raw.appID)
	}
	cfg.appID = id
	switch {
	case raw.key != "" && raw.keyFile != "":
		return config{}, errors.New("set PATCHWRIGHT_PRIVATE_KEY or PATCHWRIGHT_PRIVATE_KEY_FILE, not both")
	case raw.key != "":
		cfg.privateKey = []byte(raw.key)
	default:
		b, err := os.ReadFile(raw.keyFile)
		if err != nil {
			return config{}, fmt.Errorf("PATCHWRIGHT_PRIVATE_KEY_FILE: %v", err)
		}
		cfg.privateKey = b
	}
	return cfg, nil
}

// storedCredentials fills unset app credentials from what the manifest
// flow stored under dataDir (webhook/setup), and puts serve in setup mode
// when there are none at all. Credentials given in part are left for the
// missing-setting check: half an identity is a mistake, not setup mode.
func storedCredentials(command string, appID, key, keyFile, secret *string, dataDir string, cfg *config) error {
	given := *appID != "" || *key != "" || *keyFile != "" || (command == "serve" && *secret != "")
	if given || dataDir == "" || (command != "serve" && command != "worker") {
		return nil
	}
	creds, ok, err := setup.Load(dataDir)
	switch {
	case err != nil:
		return fmt.Errorf("PATCHWRIGHT_DATA_DIR: %w", err)
	case ok:
		*appID = strconv.FormatInt(creds.AppID, 10)
		*keyFile = setup.KeyPath(dataDir)
		cfg.privateKeyFile = *keyFile
		if command == "serve" {
			*secret = creds.WebhookSecret
			cfg.webhookSecret = creds.WebhookSecret
		}
	case command == "serve":
		cfg.setupMode = true
	}
	return nil
}
