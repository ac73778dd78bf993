package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	agentconfig "github.com/patchwright/patchwright/agent/config"
	"github.com/patchwright/patchwright/agent/provider/installmodel"
	"github.com/patchwright/patchwright/jobs/budget"
	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/tracing"
	"github.com/patchwright/patchwright/jobs/worker"
	"github.com/patchwright/patchwright/webhook"
	"github.com/patchwright/patchwright/webhook/setup"
)

// Configuration defaults (docs/design.md §4.2).
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
	// reviewModel is the review before publishing's model; "" = model.
	reviewModel string
	// reviewMaxCostUSD is the review's own budget; 0 = the default.
	reviewMaxCostUSD float64
	runURL           string // base of run links; "" = comments say where the log lies
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
	// auditRetention is how long audit entries stay; 0: the default.
	auditRetention time.Duration
	// monthlyCaps are the monthly cost caps per installation and per
	// repository; zero fields: none.
	monthlyCaps budget.Caps
	// policy is the operator's policy file (PATCHWRIGHT_POLICY_FILE);
	// nil = none, and no body has a Configuration line.
	policy *agentconfig.PolicyFile
	// installationModels are the installations' own models and keys
	// (PATCHWRIGHT_INSTALLATION_MODELS); nil: the operator's for all.
	installationModels installmodel.Set
	// setupMode: serve has no app credentials, given or stored under the
	// data directory by webhook/setup; it offers only /setup.
	setupMode bool
}

// minQueuePassword mirrors queueui.MinPasswordLength, checked at start-up
// so a short password is exit status 1, not a dashboard silently missing.
const minQueuePassword = 16

// rawConfig is serve's and worker's settings as given, before parseConfig
// checks them.
type rawConfig struct {
	secret, appID, key, keyFile, redis, redisCA, listen, api, label, data, model, runURL string
	summaryModel, reviewModel, reviewMaxCost                                             string
	concurrency, queuePassword, retention, maxBodies, maxBodyBytes                       string
	instConcurrency, repoConcurrency, grace                                              string
	monthlyInstallation, monthlyRepository, auditRetention                               string
	policyFile, installationModels                                                       string
	sandbox                                                                              rawSandbox
}

// table is every setting of serve and worker, in the order help and
// docs/configuration.md list them within their groups.
func (raw *rawConfig) table() []setting {
	out := []setting{
		{env: "PATCHWRIGHT_APP_ID", flag: "app-id", group: groupApp, kind: "int", usage: "GitHub App ID (required)", dst: &raw.appID},
		{env: "PATCHWRIGHT_PRIVATE_KEY", flag: "private-key", group: groupApp, kind: "pem", usage: "GitHub App private key, PEM (this or --private-key-file)", dst: &raw.key},
		{env: "PATCHWRIGHT_PRIVATE_KEY_FILE", flag: "private-key-file", group: groupApp, kind: "path", usage: "file with the GitHub App private key", dst: &raw.keyFile},
		{env: "PATCHWRIGHT_GITHUB_API_URL", flag: "github-api-url", group: groupApp, kind: "url", def: githubapi.DefaultBaseURL, usage: "GitHub REST API root", dst: &raw.api},
		{env: "PATCHWRIGHT_WEBHOOK_SECRET", flag: "webhook-secret", group: groupWebhook, usage: "webhook secret (required)", dst: &raw.secret},
		{env: "PATCHWRIGHT_TRIGGER_LABEL", flag: "trigger-label", group: groupWebhook, def: webhook.DefaultTriggerLabel, usage: "label that starts a job", dst: &raw.label},
		{env: "PATCHWRIGHT_WEBHOOK_MAX_BODIES", flag: "webhook-max-bodies", group: groupWebhook, kind: "int", shown: strconv.Itoa(webhook.DefaultMaxBodies), usage: "webhook bodies read at once before their signatures are checked; past it, 503", dst: &raw.maxBodies},
		{env: "PATCHWRIGHT_WEBHOOK_MAX_BODY_BYTES", flag: "webhook-max-body-bytes", group: groupWebhook, kind: "int", shown: strconv.Itoa(webhook.DefaultMaxBodyBytes), usage: "bytes those bodies may hold together; past it, 503", dst: &raw.maxBodyBytes},
		{env: "PATCHWRIGHT_QUEUE_PASSWORD", flag: "queue-password", group: groupWebhook, shown: "none: no dashboard", usage: "password of the /queue and /runs dashboards, user operator, at least 16 characters", dst: &raw.queuePassword},
		{env: "PATCHWRIGHT_LISTEN", flag: "listen", group: groupStorage, kind: "address", def: defaultListen, usage: "address serve listens on; a worker serves /metrics and /healthz there only when it is set", dst: &raw.listen},
		{env: "PATCHWRIGHT_REDIS_URL", flag: "redis-url", group: groupStorage, kind: "url", shown: "serve: an embedded queue; worker: required", usage: "Redis address: redis://[user:password@]host:6379/0, rediss:// for TLS, or redis-sentinel://[user:password@]host:26379[,host:port...]/MASTER[/db] (rediss-sentinel:// for TLS), or redis-cluster://[user:password@]host:6379[,host:port...] (rediss-cluster:// for TLS)", dst: &raw.redis},
		{env: "PATCHWRIGHT_REDIS_CA_FILE", flag: "redis-ca-file", group: groupStorage, kind: "path", usage: "PEM file of CA certificates a rediss address is checked against, besides the system's", dst: &raw.redisCA},
		{env: "PATCHWRIGHT_DATA_DIR", flag: "data-dir", group: groupStorage, kind: "path", shown: "the system temporary directory", usage: "directory for run logs, and for the app's credentials when registered at /setup", dst: &raw.data},
		{env: "PATCHWRIGHT_RUN_URL", flag: "run-url", group: groupStorage, kind: "url", usage: "base URL of run pages, linked as URL/<run id> (optional)", dst: &raw.runURL},
		{env: "PATCHWRIGHT_AUDIT_RETENTION", flag: "audit-retention", group: groupStorage, kind: "duration", shown: "2160h (90 days)", usage: "how long audit log entries stay in Redis (capped at 300,000 entries), e.g. 2160h", dst: &raw.auditRetention},
		{env: "PATCHWRIGHT_RUN_RETENTION", flag: "run-retention", group: groupStorage, kind: "duration", shown: "720h (30 days)", usage: "how long run records, run summaries and outcome records stay in Redis and run links work, e.g. 720h", dst: &raw.retention},
		{env: "PATCHWRIGHT_MODEL", flag: "model", group: groupModel, kind: "provider:name", shown: "serve: none, agent jobs fail; worker: required", usage: "model as PROVIDER:NAME, e.g. openai:gpt-4.1, or a comma-separated fallback list; each needs a price in the price table (PATCHWRIGHT_PRICES), or serve and worker refuse to start: cost caps need one", dst: &raw.model},
		{env: "PATCHWRIGHT_SUMMARY_MODEL", flag: "summary-model", group: groupModel, kind: "provider:name", shown: "none: placeholders only", usage: "a smaller model as PROVIDER:NAME, with the same keys and base URLs as the model, that summarises old tool output when compaction removes it from the conversation; the summary replaces the bare placeholder and its cost counts in the run's", dst: &raw.summaryModel},
		{env: "PATCHWRIGHT_REVIEW_MODEL", flag: "review-model", group: groupModel, kind: "provider:name", shown: "the model", usage: "the model, as PROVIDER:NAME with the same keys and base URLs, of the review before publishing: it reads only the issue, the diff and the findings and reports risks; a smaller one is fine; it needs a price in the price table, or the review fails (a repository turns it off with review: off)", dst: &raw.reviewModel},
		{env: "PATCHWRIGHT_REVIEW_MAX_COST_USD", flag: "review-max-cost-usd", group: groupModel, kind: "dollars", shown: "0.50", usage: "the review's own budget in US dollars: the answer is capped to what it leaves after the prompt; a review whose estimate exceeds it is not made, and one billed past it is still read; the pull request says either", dst: &raw.reviewMaxCost},
		{env: "PATCHWRIGHT_MONTHLY_COST_USD_INSTALLATION", flag: "monthly-cost-usd-installation", group: groupModel, kind: "dollars", shown: "no cap", usage: "monthly cap in US dollars on the estimated model cost of one installation's runs, counted in Redis; once reached, new jobs are refused with a comment until the month (UTC) resets", dst: &raw.monthlyInstallation},
		{env: "PATCHWRIGHT_MONTHLY_COST_USD_REPOSITORY", flag: "monthly-cost-usd-repository", group: groupModel, kind: "dollars", shown: "no cap", usage: "the same cap for each repository", dst: &raw.monthlyRepository},
	}
	// An installation's own model closes the model group.
	out = append(out, raw.modelsSetting())
	out = append(out, []setting{
		{env: "PATCHWRIGHT_WORKER_CONCURRENCY", flag: "worker-concurrency", group: groupWorker, kind: "int", shown: strconv.Itoa(worker.DefaultConcurrency), usage: "jobs one worker process runs at once", dst: &raw.concurrency},
		{env: "PATCHWRIGHT_INSTALLATION_CONCURRENCY", flag: "installation-concurrency", group: groupWorker, kind: "int", shown: "half the pool, at least 1", usage: "agent jobs of one installation running at once across all workers (the pool: the concurrency of every worker together); 0 is none", dst: &raw.instConcurrency},
		{env: "PATCHWRIGHT_REPO_CONCURRENCY", flag: "repo-concurrency", group: groupWorker, kind: "int", shown: "a quarter of the pool, at least 1", usage: "agent jobs of one repository running at once across all workers; 0 is none", dst: &raw.repoConcurrency},
		{env: "PATCHWRIGHT_SHUTDOWN_GRACE", flag: "shutdown-grace", group: groupWorker, kind: "duration", shown: "30s", usage: "how long a stopping worker lets running jobs finish, e.g. 5m; in its last quarter (at most 2m) a job is stopped (a command still running is cut short) and its change pushed as a draft marked interrupted, or with no change handed back to the queue (Kubernetes' terminationGracePeriodSeconds must exceed it by " + worker.HandBackTimeout.String() + ")", dst: &raw.grace},
		{env: "PATCHWRIGHT_POLICY_FILE", flag: "policy-file", group: groupWorker, kind: "path", shown: "none", usage: "YAML file of the operator's policy over repositories (docs/policy.md): defaults and per-organisation and per-installation limits on egress hosts, network: open, services, images, models, cost and pull requests, and protected and excluded paths, which a repository's .github/agent.yml can only tighten; checked at start; patchwright run applies its defaults entry", dst: &raw.policyFile},
	}...)
	return append(out, raw.sandbox.table()...)
}

// Setting groups, in the order help and docs/configuration.md show them.
const (
	groupApp     = "GitHub App"
	groupWebhook = "Webhook receiver (serve only)"
	groupStorage = "HTTP, queue and storage"
	groupModel   = "Model and costs"
	groupWorker  = "Worker"
	groupSandbox = "Sandbox (also read by run and eval, from the variables)"
	groupNetwork = "Setup network and secrets (also read by run and eval)"
)

var settingGroups = []string{groupApp, groupWebhook, groupStorage, groupModel, groupWorker, groupSandbox, groupNetwork}

// setting is one configuration name: an environment variable, and the
// flag of serve and worker that overrides it.
type setting struct {
	env, flag string
	// def is the value when neither is given; "" for most, whose
	// default is decided where the value is used.
	def string
	// group is the heading it is listed under (settingGroups).
	group string
	// kind names the value's type in help and the docs; "" is string.
	// "bool" makes the flag a switch (--allow-open-network alone is true).
	kind string
	// shown is the default as help and the docs state it, when def is
	// empty; "" with def empty: none.
	shown string
	usage string
	dst   *string
}

// commands are the commands that read s's flag: every group but the
// webhook receiver's is the worker's too (serve runs one without Redis).
func (s setting) commands() []string {
	if s.group == groupWebhook {
		return []string{"serve"}
	}
	return []string{"serve", "worker"}
}

// defaultText is s's default as help and the docs state it; "" for none.
func (s setting) defaultText() string {
	if s.def != "" {
		return s.def
	}
	return s.shown
}

// rawValue is a setting's flag. It keeps the text as given, so that a
// flag and its variable go through parseConfig's one check.
type rawValue struct {
	dst    *string
	isBool bool
}

func (v rawValue) String() string {
	if v.dst == nil {
		return ""
	}
	return *v.dst
}

func (v rawValue) Set(s string) error { *v.dst = s; return nil }

// IsBoolFlag lets a bool setting's flag stand alone (flag.boolFlag).
func (v rawValue) IsBoolFlag() bool { return v.isBool }

// newFlagSet is command's flags over settings; a setting's variable, when
// set, is the starting value its flag overrides. Help lists only the
// settings command reads, by group, and never a variable's value (it may
// be a secret).
func newFlagSet(command string, settings []setting, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(command, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var own []setting
	for _, s := range settings {
		*s.dst = s.def
		if v, ok := os.LookupEnv(s.env); ok {
			*s.dst = v
		}
		if !slices.Contains(s.commands(), command) {
			continue
		}
		own = append(own, s)
		fs.Var(rawValue{dst: s.dst, isBool: s.kind == "bool"}, s.flag, s.usage)
	}
	fs.Usage = func() { printSettings(fs.Output(), command, own) }
	return fs
}

// serviceHelp is the text above serve's and worker's flags.
var serviceHelp = map[string]string{
	"serve": `usage: patchwright serve [flags]

The webhook receiver at POST /webhook, with /healthz, /readyz, /metrics,
/runs/{id} and, when set up, /queue. Without PATCHWRIGHT_REDIS_URL it
runs the worker too, on an in-process queue, and reads the worker's
settings; without the app's credentials and with PATCHWRIGHT_DATA_DIR it
offers /setup only.
`,
	"worker": `usage: patchwright worker [flags]

The queue worker: runs the jobs serve enqueues in Redis.
`,
}

// printSettings is command's help: its settings by group, each with its
// flag, type, meaning, variable and default.
func printSettings(w io.Writer, command string, settings []setting) {
	fmt.Fprint(w, serviceHelp[command])
	fmt.Fprintln(w, "\nEach flag overrides the environment variable in brackets.")
	for _, g := range settingGroups {
		first := true
		for _, s := range settings {
			if s.group != g {
				continue
			}
			if first {
				fmt.Fprintf(w, "\n%s:\n", g)
				first = false
			}
			// A switch shows no type, as the flag package shows a bool.
			name := "--" + s.flag
			if s.kind != "bool" {
				name += " " + cmp.Or(s.kind, "string")
			}
			fmt.Fprintf(w, "  %s\n    \t%s [%s]", name, s.usage, s.env)
			if d := s.defaultText(); d != "" {
				fmt.Fprintf(w, " (default %s)", d)
			}
			fmt.Fprintln(w)
		}
	}
}

// parseConfig reads env, then flags, and checks what command needs. Every
// error is one line naming exactly what is missing or wrong.
func parseConfig(command string, args []string, stderr io.Writer) (config, error) {
	var raw rawConfig
	fs := newFlagSet(command, raw.table(), stderr)
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
		model: strings.TrimSpace(raw.model), summaryModel: strings.TrimSpace(raw.summaryModel), reviewModel: strings.TrimSpace(raw.reviewModel), runURL: strings.TrimSpace(raw.runURL),
		queuePassword: raw.queuePassword, listenSet: listenSet,
	}
	if err := raw.parseValues(&cfg); err != nil {
		return config{}, err
	}
	if err := storedCredentials(command, &raw.appID, &raw.key, &raw.keyFile, &raw.secret, raw.data, &cfg); err != nil {
		return config{}, err
	}
	if err := raw.checkMissing(command, cfg.setupMode); err != nil {
		return config{}, err
	}
	if cfg.triggerLabel == "" {
		return config{}, errors.New("PATCHWRIGHT_TRIGGER_LABEL: empty")
	}
	if cfg.setupMode {
		return cfg, nil
	}
	if err := raw.parseAppCredentials(&cfg); err != nil {
		return config{}, err
	}
	return cfg, nil
}

// parseValues checks the optional settings into cfg, in the order
// parseConfig has always checked them, so the first wrong one is reported.
func (raw *rawConfig) parseValues(cfg *config) error {
	if raw.redisCA != "" {
		b, err := os.ReadFile(raw.redisCA)
		if err != nil {
			return fmt.Errorf("PATCHWRIGHT_REDIS_CA_FILE: %v", err)
		}
		cfg.redisCA = b
	}
	if raw.reviewMaxCost != "" {
		f, err := strconv.ParseFloat(raw.reviewMaxCost, 64)
		if err != nil || !(f > 0) || math.IsInf(f, 0) {
			return fmt.Errorf("PATCHWRIGHT_REVIEW_MAX_COST_USD: %q is not a positive amount of dollars, such as 0.50", raw.reviewMaxCost)
		}
		cfg.reviewMaxCostUSD = f
	}
	if raw.concurrency != "" {
		n, err := strconv.Atoi(raw.concurrency)
		if err != nil || n <= 0 {
			return fmt.Errorf("PATCHWRIGHT_WORKER_CONCURRENCY: %q is not a positive number", raw.concurrency)
		}
		cfg.workerConcurrency = n
	}
	if err := parseWorkerBounds(raw.instConcurrency, raw.repoConcurrency, raw.grace, cfg); err != nil {
		return err
	}
	if err := parseBodyBounds(raw.maxBodies, raw.maxBodyBytes, cfg); err != nil {
		return err
	}
	if err := raw.parseMonthlyCaps(cfg); err != nil {
		return err
	}
	if f := strings.TrimSpace(raw.policyFile); f != "" {
		pf, err := agentconfig.LoadPolicyFile(f)
		if err != nil {
			return fmt.Errorf("PATCHWRIGHT_POLICY_FILE: %w", err)
		}
		cfg.policy = &pf
	}
	sb, err := raw.sandbox.parse()
	if err != nil {
		return err
	}
	cfg.sandbox = sb
	if err := checkModelPriced(cfg.model, sb.prices); err != nil {
		return err
	}
	if cfg.installationModels, err = loadInstallationModels(raw.installationModels, cfg.model, sb.prices); err != nil {
		return err
	}
	if err := checkPolicyModels(cfg.policy, cfg.installationModels, cfg.model); err != nil {
		return err
	}
	if raw.retention != "" {
		d, err := time.ParseDuration(raw.retention)
		if err != nil || d <= 0 {
			return fmt.Errorf("PATCHWRIGHT_RUN_RETENTION: %q is not a positive duration such as 720h", raw.retention)
		}
		cfg.runRetention = d
	}
	if cfg.auditRetention, err = optDuration("PATCHWRIGHT_AUDIT_RETENTION", raw.auditRetention); err != nil {
		return err
	}
	if raw.queuePassword != "" && len(raw.queuePassword) < minQueuePassword {
		return fmt.Errorf("PATCHWRIGHT_QUEUE_PASSWORD: shorter than %d characters", minQueuePassword)
	}
	// The trace exporter's variables are the SDK's, read by no flag;
	// checked here so a bad one is a start-up error like the others.
	return tracing.CheckEnv()
}

// parseMonthlyCaps reads the monthly cost caps; empty keeps no cap.
func (raw *rawConfig) parseMonthlyCaps(cfg *config) error {
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
			return fmt.Errorf("%s: %q is not a positive amount of dollars, such as 200", c.env, c.raw)
		}
		*c.dst = f
	}
	return nil
}

// checkMissing names every required setting command lacks, in one error;
// setup mode needs no app credentials.
func (raw *rawConfig) checkMissing(command string, setupMode bool) error {
	var missing []string
	if command == "serve" && raw.secret == "" && !setupMode {
		missing = append(missing, "PATCHWRIGHT_WEBHOOK_SECRET (--webhook-secret)")
	}
	if raw.appID == "" && !setupMode {
		missing = append(missing, "PATCHWRIGHT_APP_ID (--app-id)")
	}
	if raw.key == "" && raw.keyFile == "" && !setupMode {
		missing = append(missing, "PATCHWRIGHT_PRIVATE_KEY or PATCHWRIGHT_PRIVATE_KEY_FILE (--private-key, --private-key-file)")
	}
	if command == "worker" && raw.redis == "" {
		missing = append(missing, "PATCHWRIGHT_REDIS_URL (--redis-url; only serve has an embedded queue)")
	}
	if command == "worker" && strings.TrimSpace(raw.model) == "" {
		missing = append(missing, "PATCHWRIGHT_MODEL (--model, e.g. openai:gpt-4.1)")
	}
	if len(missing) == 0 {
		return nil
	}
	msg := "missing " + strings.Join(missing, ", ")
	if command == "serve" && raw.data == "" && raw.appID == "" {
		msg += " (or set PATCHWRIGHT_DATA_DIR to register the app at /setup)"
	}
	return errors.New(msg)
}

// parseAppCredentials checks the app ID and reads its private key, given
// inline or as a file but not both.
func (raw *rawConfig) parseAppCredentials(cfg *config) error {
	id, err := strconv.ParseInt(raw.appID, 10, 64)
	if err != nil || id <= 0 {
		return fmt.Errorf("PATCHWRIGHT_APP_ID: %q is not a positive number", raw.appID)
	}
	cfg.appID = id
	switch {
	case raw.key != "" && raw.keyFile != "":
		return errors.New("set PATCHWRIGHT_PRIVATE_KEY or PATCHWRIGHT_PRIVATE_KEY_FILE, not both")
	case raw.key != "":
		cfg.privateKey = []byte(raw.key)
	default:
		b, err := os.ReadFile(raw.keyFile)
		if err != nil {
			return fmt.Errorf("PATCHWRIGHT_PRIVATE_KEY_FILE: %v", err)
		}
		cfg.privateKey = b
	}
	return nil
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
