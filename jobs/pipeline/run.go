package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/config"
	"github.com/patchwright/patchwright/agent/ignore"
	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/agent/provider"
	"github.com/patchwright/patchwright/agent/secrets"
	"github.com/patchwright/patchwright/agent/tools"
	"github.com/patchwright/patchwright/internal/logkey"
	"github.com/patchwright/patchwright/jobs/gitrepo"
	"github.com/patchwright/patchwright/report"
	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/verify"
)

// run is the state of one Execute call: what each phase established, in
// the order the phases ran.
type run struct {
	e     *Executor
	job   Job
	start time.Time

	repo   *gitrepo.Repo
	ws     *sandbox.Workspace
	ledger *ledger.Writer
	// clone is what prepare established.
	clone cloneResult

	// baseline is the baseline phase's result.
	baseline []verify.CheckResult
	// scanner is the secret scanner of every output the run records.
	scanner *secrets.Scanner
	// box is what runs beside the phases: the sandboxes, the services.
	box sandboxes
	// first is the first setup's input (its secrets) and what it left.
	first firstSetup
	// model is the agent phase's result.
	model modelResult
	// fin is what the final phase and the scans established.
	fin finalResult
	// ended says why the phases stopped early; zero when they did not.
	ended ending
	// merge is what a conflict's resolution laid and left (merge.go);
	// zero without Job.Merge.
	merge mergeState

	mu       sync.Mutex
	progress Progress
	clock    phaseClock
	spans    phaseSpans
}

// prepare clones the repository and reads what the run needs from it:
// the configuration, the checks and the image. Nothing is written to the
// job's output directory before it succeeds.
func (r *run) prepare(ctx context.Context) error {
	// A run and a plan alike: nothing is cloned for a refused model.
	if err := r.e.checkModels(r.job); err != nil {
		return err
	}
	r.phase(PhaseClone)
	tmp, err := os.MkdirTemp(r.e.WorkDir, "patchwright-"+r.job.ID+"-")
	if err != nil {
		return fmt.Errorf("create work directory: %w", err)
	}
	r.clone.tmp = tmp
	if err := r.bound(ctx); err != nil {
		return err
	}
	worktree := filepath.Join(r.clone.trees, "work")
	r.repo, err = gitrepo.Clone(ctx, gitrepo.CloneOptions{
		URL: r.job.RepoURL, Auth: r.job.Auth, Branch: r.job.Branch,
		// Depth 1 (docs/design.md §1): the history is most of a large clone's
		// time and memory, and nothing here reads it.
		Depth:    1,
		Worktree: worktree, GitDir: filepath.Join(tmp, "git"),
	})
	if err != nil {
		return err
	}
	if err := r.layMerge(ctx); err != nil {
		return err
	}
	if r.ws, err = sandbox.OpenWorkspace(worktree); err != nil {
		return fmt.Errorf("open workspace: %w", err)
	}
	// Before setup or the model could write one: only a go.work the
	// commit tracks may steer the checks (checksEnv).
	if _, err := os.Lstat(filepath.Join(worktree, "go.work")); err == nil {
		r.clone.goWork = true
	}
	if r.clone.cfg, err = r.loadConfig(ctx); err != nil {
		return err
	}
	if r.job.Admit != nil {
		if err := r.job.Admit(r.clone.cfg); err != nil {
			return err
		}
	}
	r.loadTemplate(ctx)
	r.loadCodeOwners(ctx)
	if err := r.chooseChecks(); err != nil {
		return err
	}
	r.clone.detected = r.detectSetup()
	return r.chooseImage(ctx)
}

// bound makes the filesystem that holds the work tree and the checks'
// trees (tree.go), bounded when the executor can: what a command writes,
// and each copy of it, then counts against one limit per job, never the
// host's disk.
func (r *run) bound(ctx context.Context) error {
	r.clone.trees = filepath.Join(r.clone.tmp, "trees")
	if r.e.BoundWorkspace == nil {
		return os.Mkdir(r.clone.trees, 0o755)
	}
	var err error
	if r.clone.unbound, err = r.e.BoundWorkspace(ctx, r.clone.trees); err == nil {
		return nil
	}
	// A machine that cannot mount one (no loop device, no mkfs.ext4)
	// still runs the job, unbounded, and the body says so.
	r.e.logger().Warn("the work tree has no size limit", logkey.Err, err)
	r.clone.unboundWhy = scrubPaths(err, r.clone.tmp).Error()
	if err := os.RemoveAll(r.clone.trees); err != nil {
		return fmt.Errorf("bound the workspace: %w", err)
	}
	return os.Mkdir(r.clone.trees, 0o755)
}

// chooseChecks takes the configured checks, or detects them.
func (r *run) chooseChecks() error {
	d, err := verify.Detect(r.ws, verify.DetectOptions{})
	if err != nil {
		return fmt.Errorf("detect verification checks: %w", err)
	}
	// The report maps go test's packages to files for any Go module, and
	// new tests are found by the detected projects, configured checks or
	// not.
	r.clone.detection, r.clone.goModule = d, d.GoModule
	if len(r.clone.cfg.Verify) == 0 {
		r.clone.checks, r.clone.missing = d.Checks, d.Missing
		return nil
	}
	for _, c := range r.clone.cfg.Verify {
		r.clone.checks = append(r.clone.checks, d.Configured(c.Name, c.Run))
	}
	return nil
}

// chooseImage picks the operator's override, the repository's image or
// the default, and resolves it and the services' images (images.go).
func (r *run) chooseImage(ctx context.Context) error {
	switch {
	case r.e.Image != "":
		r.clone.image = r.e.Image
	case r.clone.cfg.Image != "":
		r.clone.image = r.clone.cfg.Image
	default:
		r.clone.image = cmp.Or(r.e.DefaultImage, DefaultImage)
	}
	return r.resolveImages(ctx)
}

// work runs the phases that need the sandbox, one after another: each
// takes what it reads of the earlier phases' results as its input and
// returns its own, which work keeps in run for the phases after it and
// the report. Beside its input a phase reads what spans the run (the
// executor, the job, the clone's result) and takes over the containers
// beside the phases (run.box). It stops at the first infrastructure
// failure or when the context ends, and records which.
func (r *run) work(ctx context.Context) {
	defer r.recordServiceLogs()
	phases := []struct {
		name Phase
		fn   func(context.Context) error
	}{
		{PhaseSandbox, func(ctx context.Context) (err error) {
			r.first, err = r.createSandbox(ctx, r.first)
			return err
		}},
		{PhaseSetup, func(ctx context.Context) (err error) {
			r.first, err = r.setup(ctx, r.first)
			return err
		}},
		{PhaseBaseline, func(ctx context.Context) (err error) {
			r.baseline, err = r.runBaseline(ctx, baselineIn{pristine: r.first.pristine})
			return err
		}},
		{PhaseAgent, func(ctx context.Context) (err error) {
			r.model, err = r.runAgent(ctx, agentIn{sb: r.box.sb, verifier: r.box.verifier})
			return err
		}},
		{PhaseFinal, func(ctx context.Context) error {
			return r.runFinal(ctx, finalIn{pristine: r.first.pristine, interrupted: r.interrupted()})
		}},
	}
	for _, p := range phases {
		if !r.runPhase(ctx, p.name, p.fn) {
			return
		}
	}
}

// runPhase runs one phase and says whether the next may start: not when
// the context ended, a sandbox was wedged, the job's disk was full or
// the phase failed, each recorded in r.ended.
func (r *run) runPhase(ctx context.Context, name Phase, fn func(context.Context) error) bool {
	r.phase(name)
	err := fn(ctx)
	if ctx.Err() != nil {
		r.ended.cancelled = name
		return false
	}
	if errors.Is(err, sandbox.ErrWedged) {
		// A command fought its cleanup and cost the sandbox: the
		// run's own failure, not the worker's.
		r.ended.wedged = fmt.Sprintf("a command of the %s phase would not stop, so its sandbox was killed", name)
		return false
	}
	if r.overDisk(name, err) {
		return false
	}
	if err != nil {
		r.ended.infra = fmt.Errorf("%s: %w", name, err)
		return false
	}
	return true
}

// createSandbox starts the first container: the setup container (with a
// network when the configuration allows it, and a writable cache: setup
// comes from the default branch's configuration and runs on its commit),
// or, when there is no setup, the agent's. It takes the first setup as
// Execute began it (its secrets, which the setup container's row gives
// it) and returns it with the default branch's commit a retry's setup
// runs on, and, with no setup, the pristine tree (createAgentSandbox).
func (r *run) createSandbox(ctx context.Context, first firstSetup) (firstSetup, error) {
	var err error
	if first.retry.defaultTip, err = r.setupOnDefault(ctx); err != nil {
		return first, err
	}
	uid, gid := r.e.sandboxOwner()
	if err := sandbox.HandOver(r.ws.Dir(), uid, gid); err != nil {
		return first, err
	}
	if err := r.startServices(ctx); err != nil {
		return first, err
	}
	if len(r.setupScripts()) == 0 {
		return r.createAgentSandbox(ctx, first)
	}
	// The row says what it gets (trust.go): the setup network, the
	// writable shared cache and the setup-only secrets, on the default
	// branch's tree, a retry's too (retrysetup.go).
	sb, err := r.create(ctx, stageSetup, r.ws.Dir())
	if err != nil {
		return first, err
	}
	r.box.sb = sb
	return first, nil
}

// createAgentSandbox starts the container the model works in: no network,
// and the cache read-only, so nothing it does reaches a later run's builds.
// On a retry the agent branch's files are laid over what setup made on
// the default branch's commit; then the pristine tree is copied, while
// nothing can write the work tree. It returns first with both.
func (r *run) createAgentSandbox(ctx context.Context, first firstSetup) (firstSetup, error) {
	var err error
	if first.retry, err = r.layEarlierAttempts(first.retry); err != nil {
		return first, err
	}
	if first.pristine == "" {
		if first.pristine, err = r.keepPristine(); err != nil {
			return first, err
		}
	}
	sb, err := r.create(ctx, stageAgent, r.ws.Dir())
	if err != nil {
		return first, err
	}
	// Swappable: fetch_dependencies replaces the container under the
	// tools (deps.go).
	r.box.sb = &swappable{sb: sb}
	r.box.verifier = r.runner(r.box.sb)
	// The model's verify tool runs with the virtualenvs setup made, as the
	// checks do; fetch_dependencies adds the ones it installs.
	r.box.verifier.Virtualenvs, err = r.virtualenvs(r.ws.Dir())
	r.box.verifier.ImagePytest = imagePytest(r.ws.Dir(), r.box.verifier.Virtualenvs)
	return first, err
}

// closeSandbox removes the current container: its processes, detached
// ones included, end with it, so nothing writes the work tree afterwards.
func (r *run) closeSandbox() {
	if r.box.sb == nil {
		return
	}
	if err := r.box.sb.Close(); err != nil {
		r.e.logger().Warn("remove sandbox", logkey.Err, err)
	}
	r.box.sb = nil
}

// setup runs the repository's setup commands in the setup container, with
// a network when the configuration allows it, then replaces that container
// with the agent's, which has none. It takes the first setup as the
// sandbox phase left it and returns it with what setup did: the detected
// commands that ran, the files it left a secret in (removed), and the
// pristine tree.
func (r *run) setup(ctx context.Context, first firstSetup) (firstSetup, error) {
	if err := r.recordSetupSecrets(); err != nil {
		return first, err
	}
	var err error
	if len(r.clone.detected) > 0 {
		if first.detectedRan, err = r.runDetectedSetup(ctx); err != nil {
			return first, err
		}
	}
	for _, script := range r.clone.cfg.Setup {
		res, _, err := r.setupCommand(ctx, script)
		if err != nil {
			return first, err
		}
		if res.ExitCode != 0 || res.TimedOut {
			return first, fmt.Errorf("setup command %q failed (exit %d)", script, res.ExitCode)
		}
	}
	if len(r.setupScripts()) == 0 {
		return first, nil
	}
	if first.secretFiles, err = r.removeSetupSecretFiles(ctx); err != nil {
		return first, err
	}
	// The setup container goes with its network and its writable cache.
	r.closeSandbox()
	return r.createAgentSandbox(ctx, first)
}

// setupCommand runs one command of the first setup in the setup
// container and records it, its output scanned, and what the egress proxy
// refused it.
// The output it returns is the recorded one, secrets withheld.
func (r *run) setupCommand(ctx context.Context, script string) (sandbox.Result, string, error) {
	res, err := r.box.sb.Exec(ctx, sandbox.Command{Script: script, Timeout: DefaultSetupTimeout})
	if err != nil {
		return res, "", fmt.Errorf("run setup command %q: %w", script, err)
	}
	rec, _, err := tools.WithholdSecretsIn(ctx, r.scanner, r.ws, tools.CommandRecordOf(script, res))
	if err != nil {
		return res, "", err
	}
	if _, err := r.ledger.Append(&ledger.Command{Tool: "setup", CommandRecord: rec}); err != nil {
		return res, "", err
	}
	return res, rec.Output, r.recordRefusals()
}

// trustedTree reports whether the clone is the configuration branch's
// commit (the default branch). On a retry it is the agent branch, code a
// model wrote, and no phase may then write the repository's shared cache:
// a later job's checks would run what that code left there.
func (r *run) trustedTree() bool {
	return r.job.ConfigBranch == "" || r.job.ConfigBranch == r.repo.BaseBranch()
}

// baselineIn is what the baseline phase reads of the earlier phases':
// the pristine tree setup left (firstSetup.pristine), which it copies.
type baselineIn struct {
	pristine string
}

// runBaseline runs the checks on the untouched code in a fresh container
// and returns their results, as far as they got when it fails.
func (r *run) runBaseline(ctx context.Context, in baselineIn) ([]verify.CheckResult, error) {
	dir, err := r.baselineTree(in.pristine)
	if err != nil {
		return nil, err
	}
	c, err := r.newCheckSandbox(ctx, r.baselineStage(), dir)
	if err != nil {
		return nil, err
	}
	defer c.close()
	checks, err := r.checkRunner(c).Run(ctx, verify.Baseline)
	r.mu.Lock()
	r.progress.Baseline = checks
	r.mu.Unlock()
	return checks, err
}

// agentIn is what the agent phase reads of the earlier phases': the
// agent's container and the verify tool's runner on it, which the
// sandbox or the setup phase started (sandboxes).
type agentIn struct {
	sb       sandbox.Sandbox
	verifier *verify.Runner
}

// runAgent runs the model loop under the repository's budgets. A budget
// or loop detector ending the loop is not an error; the outcome says
// "stopped".
func (r *run) runAgent(ctx context.Context, in agentIn) (modelResult, error) {
	set, err := tools.New(tools.Options{
		Workspace: r.ws,
		Sandbox:   in.sb,
		Verifier:  ToolVerifier{Runner: in.verifier, Findings: r.findingsSoFar},
		Protected: r.protected(),
		Secrets:   r.scanner,
		// fetch_dependencies needs somewhere to put what it fetches.
		Dependencies: r.dependencyFetcher(),
	})
	if err != nil {
		return modelResult{}, configError{err}
	}
	m := modelResult{ran: true}
	m.res, err = r.runModel(ctx, set, nil)
	m.interruptWhy = agent.InterruptReason(ctx)
	return m, err
}

// runModel runs the model loop with set's tools under the repository's
// limits and time budget: the one place a run's agent.Config is made,
// for an attempt and for a planning run alike (plan set: agent.Config.Plan).
func (r *run) runModel(ctx context.Context, set *tools.Set, plan *agent.PlanRun) (agent.Result, error) {
	maxSteps := r.stepBudget()
	if r.e.MaxSteps > 0 {
		maxSteps = r.e.MaxSteps
	}
	win := r.window()
	loopCtx, cancel := context.WithTimeout(ctx, time.Duration(r.clone.cfg.Limits.MaxMinutes)*time.Minute)
	defer cancel()
	return agent.Run(loopCtx, agent.Config{
		Provider:        r.e.Provider,
		SummaryProvider: r.e.SummaryProvider,
		Tools:           set.Tools(),
		Ledger:          r.ledger,
		Workspace:       r.ws,
		Issue:           r.job.Issue,
		ReadsImages:     r.e.readsImages(),
		Redactor:        set,
		Limits: agent.Limits{MaxSteps: maxSteps, MaxInputTokens: r.clone.cfg.Limits.MaxInputTokens,
			ContextWindow: win.Context, OutputLimit: win.Output,
			MaxCostUSD: r.clone.cfg.Limits.RunCostCap(r.e.MaxRunCostUSD)},
		Cost:   r.e.cost,
		Now:    r.e.Now,
		Logger: r.e.Logger,
		Notes:  r.job.Notes,
		Plan:   plan,
	})
}

// finalIn is what the final phase reads of the earlier phases': the
// pristine tree setup left (firstSetup.pristine), which it turns into
// the final tree or removes, and whether a worker's shutdown interrupted
// the model (modelResult). Its helpers read the baseline's results too
// (analyze) and a retry's earlier change (modelChanges).
type finalIn struct {
	pristine    string
	interrupted bool
}

// runFinal stops the agent's container, reads the change from the tree
// that nothing can write any more, and verifies it in a fresh container
// on the committed tree (tree.go) whatever the model said; then it runs
// the tests the change added against the original code there. What it
// establishes it keeps in r.fin, which the scans after it add to.
func (r *run) runFinal(ctx context.Context, in finalIn) error {
	r.closeSandbox()
	if err := r.readChanges(); err != nil {
		return err
	}
	if r.fin.tooLarge != "" {
		// No final checks: the pristine tree (of the repository's size)
		// is not needed any more, and the job's cleanup may be far off.
		os.RemoveAll(in.pristine)
		return nil
	}
	if in.interrupted {
		// The worker is shutting down and what is left of its grace period
		// is for committing and pushing: the final checks (a full test run
		// can take longer than that) are skipped, and the change is
		// reported stopped, unverified, with every check in "Not
		// verified". The findings on the diff still apply.
		return r.analyze()
	}
	dir, err := r.finalTree(in.pristine)
	if err != nil {
		return err
	}
	return r.finalChecks(ctx, dir)
}

// finalChecks runs dependency setup after the change, then the checks
// and the change's new tests on the final tree dir.
func (r *run) finalChecks(ctx context.Context, dir string) error {
	if err := r.depsAfterChange(ctx, dir); err != nil {
		return err
	}
	c, err := r.newCheckSandbox(ctx, stageFinal, dir)
	if err != nil {
		return err
	}
	defer c.close()
	v := r.checkRunner(c)
	if r.fin.checks, err = v.Run(ctx, verify.Final); err != nil {
		return err
	}
	if err := r.analyze(); err != nil {
		return err
	}
	return r.runNewTests(ctx, v, c.ws)
}

func (r *run) readChanges() error {
	if r.fin.changesRead || r.repo == nil {
		return nil
	}
	changes, err := r.listChanges()
	var limit *gitrepo.LimitError
	if errors.As(err, &limit) {
		// The model made this tree: its run ends, nothing is committed,
		// and the job is not retried as if the worker had failed.
		r.fin.tooLarge, r.fin.changesRead = limit.Reason, true
		return nil
	}
	if err != nil {
		return fmt.Errorf("list changes: %w", err)
	}
	r.fin.changes, r.fin.changesRead = changes, true
	r.dropUncommittable()
	if err := r.dropCommandOutputs(); err != nil {
		return fmt.Errorf("leave out command outputs: %w", err)
	}
	return nil
}

// listChanges reads the change against the pristine tree when there is
// one, so that what setup wrote is never the model's change (tree.go),
// and against the base commit alone before one was kept.
func (r *run) listChanges() ([]gitrepo.Change, error) {
	lim := gitrepo.Limits{MaxBytes: r.e.MaxChangeBytes}
	if r.first.pristine == "" {
		return r.repo.ChangesWithin(lim)
	}
	return r.repo.ChangesSince(r.first.pristine, lim)
}

// loadConfig reads .github/agent.yml as a git object of the configuration
// branch (Job.ConfigBranch, the default branch), never from a work tree:
// on a retry the clone is the agent branch, which the last attempt wrote.
func (r *run) loadConfig(ctx context.Context) (config.Config, error) {
	var data []byte
	var err error
	if r.job.ConfigBranch != "" && r.job.ConfigBranch != r.repo.BaseBranch() {
		data, err = gitrepo.ReadBranchFile(ctx, gitrepo.CloneOptions{URL: r.job.RepoURL, Auth: r.job.Auth}, r.job.ConfigBranch, config.Path)
	} else {
		data, err = r.repo.BaseContent(config.Path)
	}
	if err != nil {
		return config.Config{}, err
	}
	cfg, err := config.ParseLayered(r.job.OrgConfig, data)
	if err != nil {
		return cfg, configError{err}
	}
	cfg, r.clone.applied = config.Apply(r.job.Policy, r.job.PolicyName, cfg)
	if len(cfg.Exclude) > 0 {
		// Before anything shows the model the tree: the one visibility
		// rule hides these paths from every tool, the map and the
		// instruction files.
		r.ws.Exclude(ignore.NewList(cfg.Exclude))
	}
	return cfg, nil
}

// loadTemplate reads the pull-request template as loadConfig reads the
// configuration: a git object of the configuration branch. A template
// that cannot be read only costs its layout, so the failure is logged.
func (r *run) loadTemplate(ctx context.Context) {
	var p string
	var data []byte
	var err error
	if r.job.ConfigBranch != "" && r.job.ConfigBranch != r.repo.BaseBranch() {
		p, data, err = gitrepo.ReadBranchFirst(ctx, gitrepo.CloneOptions{URL: r.job.RepoURL, Auth: r.job.Auth}, r.job.ConfigBranch, report.TemplatePaths)
	} else {
		p, data, err = r.repo.BaseFirst(report.TemplatePaths)
	}
	if err != nil {
		r.e.logger().Warn("read the pull-request template; the body keeps its own layout", logkey.Err, err)
		return
	}
	r.clone.template = report.Template{Path: p, Text: string(data)}
}

func (r *run) runNewTests(ctx context.Context, v *verify.Runner, ws *sandbox.Workspace) error {
	changed := r.changedPaths()
	// The clone is the base tree: verify reads no git of its own.
	tests, err := verify.FindNewTests(ws, r.repo, changed, r.clone.detection)
	if err != nil || len(tests) == 0 {
		return err
	}
	if r.fin.newTests, err = v.RunNewTestsOnBase(ctx, ws, r.repo, tests, changed); err != nil {
		return err
	}
	return r.recorder().RecordNewTests(ctx, r.fin.newTests)
}

func (r *run) changedPaths() []string { return changedPaths(r.fin.changes) }

// cleanup removes the container and the clone. The container goes first:
// it may still be writing to the work tree.
func (r *run) cleanup() {
	r.closeSandbox()
	r.removeJobCache()
	r.stopServices()
	if r.ws != nil {
		r.ws.Close()
	}
	if r.clone.unbound != nil {
		if err := r.clone.unbound(); err != nil {
			r.e.logger().Warn("unmount the workspace", logkey.Err, err)
		}
	}
	if r.clone.tmp != "" {
		if err := os.RemoveAll(r.clone.tmp); err != nil {
			r.e.logger().Warn("remove work directory", "dir", r.clone.tmp, logkey.Err, err)
		}
	}
}

// window is the model's window: the executor's, else the built-in
// table's entry for the model, field by field.
func (r *run) window() provider.Window {
	win := r.e.Window
	known, _ := provider.DefaultWindows().For(r.e.Provider.Model())
	if win.Context == 0 {
		win.Context = known.Context
	}
	if win.Output == 0 && known.Output < cmp.Or(win.Context, known.Context) {
		win.Output = known.Output
	}
	return win
}
