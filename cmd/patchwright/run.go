package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5"

	"github.com/patchwright/patchwright/agent"
	agentconfig "github.com/patchwright/patchwright/agent/config"
	"github.com/patchwright/patchwright/agent/provider"
	"github.com/patchwright/patchwright/internal/text"
	"github.com/patchwright/patchwright/jobs/pipeline"
	"github.com/patchwright/patchwright/jobs/runstore"
	"github.com/patchwright/patchwright/sandbox/docker"
	"github.com/patchwright/patchwright/webhook/runpage"
)

// defaultOut is where `patchwright run` writes its files without --out.
const defaultOut = "./patchwright-out"

// runOptions are the flags of `patchwright run` (docs/design.md §4.1).
type runOptions struct {
	repo, issueFile, title, body string
	model, image, out            string
	policyFile                   string
	maxSteps                     int
	json, commitStopped          bool
}

// runLocal is `patchwright run`: one issue against a local repository,
// with no GitHub and no Redis. Exit status: 0 when the run completed
// (whatever its outcome, a Ctrl-C included: the files say "stopped"), 1 on
// bad usage or configuration with one line saying what, 2 on an
// infrastructure failure.
func runLocal(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	opts, err := parseRunFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "patchwright run: %v\n", err)
		return 1
	}
	plan, err := prepareRun(opts)
	if err != nil {
		fmt.Fprintf(stderr, "patchwright run: %v\n", err)
		return 1
	}
	engine, err := docker.New(ctx, plan.sandbox.engineOptions(true))
	if err != nil {
		fmt.Fprintf(stderr, "patchwright run: %v\n", err)
		return 2
	}
	defer engine.Close()
	exec, job := plan.executor(engine), plan.job
	if !opts.json {
		if file, ok := provider.ReplayedFrom(plan.provider); ok {
			fmt.Fprintln(stderr, "replay:  no model will be called; the model turns come from "+file)
		}
		job.Progress = newProgressPrinter(stderr).print
	}
	res, err := exec.Execute(ctx, job)
	switch {
	case errors.Is(err, pipeline.ErrConfig):
		fmt.Fprintf(stderr, "patchwright run: %v\n", oneLine(err))
		return 1
	case res == nil:
		fmt.Fprintf(stderr, "patchwright run: %v\n", oneLine(err))
		return 2
	}
	if perr := writeRunPage(job.OutDir, job.ID); perr != nil && err == nil {
		err = perr
	}
	printResult(stdout, opts, res)
	if err != nil {
		fmt.Fprintf(stderr, "patchwright run: %v\n", oneLine(err))
		return 2
	}
	return 0
}

func parseRunFlags(args []string, stderr io.Writer) (runOptions, error) {
	var o runOptions
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.repo, "repo", "", "local git repository (required); its working tree is never modified")
	fs.StringVar(&o.issueFile, "issue-file", "", "Markdown issue: first line \"# Title\", the rest is the body")
	fs.StringVar(&o.title, "title", "", "issue title (instead of --issue-file)")
	fs.StringVar(&o.body, "body", "", "issue body (with --title)")
	fs.StringVar(&o.model, "model", os.Getenv("PATCHWRIGHT_MODEL"), "model as PROVIDER:NAME, e.g. openai:gpt-4.1 or anthropic:claude-sonnet-4-5; replay:FILE calls no model and replays the model turns of a recorded ledger.jsonl [PATCHWRIGHT_MODEL]")
	fs.StringVar(&o.image, "image", "", "sandbox image, overriding .github/agent.yml (default there, else PATCHWRIGHT_SANDBOX_IMAGE, else "+pipeline.DefaultImage+")")
	fs.StringVar(&o.policyFile, "policy-file", os.Getenv("PATCHWRIGHT_POLICY_FILE"), "the operator's policy file (docs/policy.md); its defaults entry applies, as to a job of an installation it does not name: excluded paths, allowed models and images, caps [PATCHWRIGHT_POLICY_FILE]")
	fs.StringVar(&o.out, "out", defaultOut, "directory for pr.md, result.json, ledger.jsonl and run.html")
	fs.IntVar(&o.maxSteps, "max-steps", 0, "cap on model turns, overriding limits.max_steps (default from .github/agent.yml, else 40)")
	fs.BoolVar(&o.json, "json", false, "no progress; print result.json on stdout")
	fs.BoolVar(&o.commitStopped, "commit-stopped", false, "also commit the change of a run a budget stopped (never a cancelled one)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return o, nil
}

// localRun is a `patchwright run` whose flags and settings were checked:
// everything but the engine.
type localRun struct {
	opts     runOptions
	sandbox  sandboxSettings
	provider provider.Provider
	// window is the model's (provider.WindowFromEnv).
	window provider.Window
	job    pipeline.Job
}

// prepareRun checks every flag and setting that can be checked without
// Docker and builds the job.
func prepareRun(o runOptions) (localRun, error) {
	r := localRun{opts: o}
	repo, err := checkRepo(o.repo)
	if err != nil {
		return r, err
	}
	issue, err := readIssue(o)
	if err != nil {
		return r, err
	}
	if o.maxSteps < 0 {
		return r, fmt.Errorf("--max-steps %d: must be positive", o.maxSteps)
	}
	if strings.TrimSpace(o.model) == "" {
		return r, errors.New("no model: pass --model PROVIDER:NAME or set PATCHWRIGHT_MODEL (e.g. openai:gpt-4.1, or replay:FILE to replay a recorded ledger.jsonl)")
	}
	// The operator's sandbox settings, as serve's and eval's.
	if r.sandbox, err = sandboxFromEnv(); err != nil {
		return r, err
	}
	if r.provider, err = provider.New(o.model, provider.Options{Logger: slog.New(slog.DiscardHandler)}); err != nil {
		return r, err
	}
	if r.window, err = provider.WindowFromEnv(o.model, nil); err != nil {
		return r, err
	}
	out, err := filepath.Abs(o.out)
	if err != nil {
		return r, fmt.Errorf("--out %s: %w", o.out, err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return r, fmt.Errorf("--out: %w", err)
	}
	r.job = pipeline.Job{ID: newRunID(), RepoURL: repo, Issue: issue, OutDir: out, Publisher: pipeline.LocalPublisher{}}
	if err := r.addPolicy(); err != nil {
		return r, err
	}
	return r, nil
}

// addPolicy gives the job the operator's policy, read and checked as
// serve and worker read it: a local run has no installation or
// organisation, so the defaults entry applies. Its excluded paths are
// then kept from the model by the same rule as a worker's job
// (config.Apply, sandbox.Workspace.Visible).
func (r *localRun) addPolicy() error {
	name := strings.TrimSpace(r.opts.policyFile)
	if name == "" {
		return nil
	}
	pf, err := agentconfig.LoadPolicyFile(name)
	if err != nil {
		return fmt.Errorf("--policy-file: %w", err)
	}
	r.job.Policy, r.job.PolicyName = pf.For(0, "")
	return nil
}

// executor is newExecutor's with run's own flags.
func (r localRun) executor(e engine) *pipeline.Executor {
	exec := newExecutor(r.sandbox, e)
	exec.Provider = r.provider
	exec.Window = r.window
	exec.Image = r.opts.image
	exec.MaxSteps = r.opts.maxSteps
	exec.CommitStopped = r.opts.commitStopped
	return &exec
}

// checkRepo requires the root of a git repository with at least one
// commit and returns its absolute path.
func checkRepo(path string) (string, error) {
	if path == "" {
		return "", errors.New("--repo is required: the path of a local git repository")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("--repo %s: %w", path, err)
	}
	if _, err := os.Stat(abs); err != nil {
		return "", fmt.Errorf("--repo %s: %w", path, err)
	}
	r, err := git.PlainOpen(abs)
	if err != nil {
		return "", fmt.Errorf("--repo %s: not a git repository (give the directory that holds .git)", path)
	}
	if _, err := r.Head(); err != nil {
		return "", fmt.Errorf("--repo %s: the repository has no commit to start from", path)
	}
	return abs, nil
}

func readIssue(o runOptions) (agent.Issue, error) {
	switch {
	case o.issueFile != "" && (o.title != "" || o.body != ""):
		return agent.Issue{}, errors.New("give either --issue-file or --title/--body, not both")
	case o.issueFile != "":
		data, err := os.ReadFile(o.issueFile)
		if err != nil {
			return agent.Issue{}, fmt.Errorf("--issue-file: %w", err)
		}
		issue, err := pipeline.ParseIssue(string(data))
		if err != nil {
			return agent.Issue{}, fmt.Errorf("--issue-file %s: %w", o.issueFile, err)
		}
		return issue, nil
	case strings.TrimSpace(o.title) == "":
		return agent.Issue{}, errors.New("no issue: pass --issue-file PATH or --title T (and --body B)")
	}
	return agent.Issue{Title: strings.TrimSpace(o.title), Body: o.body}, nil
}

func newRunID() string {
	b := make([]byte, 3)
	rand.Read(b)
	return "local-" + time.Now().UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b)
}

func oneLine(err error) string {
	return text.Line(err.Error())
}

// printResult prints result.json (with --json) or a short summary.
func printResult(w io.Writer, o runOptions, res *pipeline.Result) {
	if o.json {
		data, _ := json.MarshalIndent(res, "", "  ")
		fmt.Fprintf(w, "%s\n", data)
		return
	}
	if res.ReplayedFrom != "" {
		fmt.Fprintln(w, "replay:  no model was called; the model turns were replayed from "+res.ReplayedFrom)
	}
	fmt.Fprintf(w, "outcome: %s: %s\n", res.Outcome, res.Reason)
	if res.Branch != "" {
		fmt.Fprintf(w, "branch:  %s (commit %.12s) in %s\n", res.Branch, res.HeadCommit, o.repo)
	} else {
		fmt.Fprintln(w, "branch:  none (nothing was committed)")
	}
	fmt.Fprintf(w, "files:   %s\n", filepath.Join(o.out, pipeline.FileBody)+", "+pipeline.FileResult+", "+pipeline.FileLedger+", "+runpage.FileName)
}

// writeRunPage renders the run's files in out into run.html beside them,
// with the renderer of serve's run pages, so a local run can be read as
// one served would be.
func writeRunPage(out, id string) error {
	rec, err := runstore.FromDir(out, id)
	if err != nil {
		return fmt.Errorf("run page: %w", err)
	}
	rec.UpdatedAt = time.Now()
	page, err := runpage.Page(rec)
	if err != nil {
		return fmt.Errorf("run page: %w", err)
	}
	if err := os.WriteFile(filepath.Join(out, runpage.FileName), page, 0o644); err != nil {
		return fmt.Errorf("run page: %w", err)
	}
	return nil
}

// progressPrinter writes one line per change of phase, step or tool.
type progressPrinter struct {
	mu   sync.Mutex
	w    io.Writer
	last pipeline.Progress
}

func newProgressPrinter(w io.Writer) *progressPrinter { return &progressPrinter{w: w} }

func (p *progressPrinter) print(pr pipeline.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pr.Phase == p.last.Phase && pr.Step == p.last.Step && pr.Tool == p.last.Tool {
		return
	}
	p.last = pr
	line := fmt.Sprintf("[%s] %s", pr.Elapsed.Round(time.Second), pr.Phase)
	if pr.Step > 0 {
		line += fmt.Sprintf(" · step %d", pr.Step)
	}
	if pr.Tool != "" && pr.Phase == pipeline.PhaseAgent {
		line += " · " + pr.Tool
	}
	if pr.InputTokens > 0 {
		line += fmt.Sprintf(" · %d input / %d output tokens", pr.InputTokens, pr.OutputTokens)
	}
	fmt.Fprintln(p.w, line)
}
