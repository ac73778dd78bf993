package pipeline

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/agent/tools"
	"github.com/patchwright/patchwright/internal/logkey"
	"github.com/patchwright/patchwright/jobs/gitrepo"
	"github.com/patchwright/patchwright/report"
	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/verify/findings"
)

// Dependency setup after the change (issue 24). Setup, the only phase
// with a network, runs before the model's change, so a change that adds
// a dependency could never be built offline. When the change touches a
// manifest or lockfile of a detected project, the application runs the
// trusted dependency setup again, on a copy of the changed tree, in a
// fresh setup container: the default branch's `setup:` commands, or each
// changed project's own download command, never one the model wrote. What
// it fetches goes into a cache volume of the job's own, a copy of the
// repository's shared one (sandbox.Spec.CacheFrom): fetch_dependencies'
// into one only the agent's sandbox reads, dependency setup after the
// change (on the committed tree) into the one the final checks read
// (trust.go). A model's change never writes the cache a later job's
// builds read, and since those commands may run the changed tree's code
// (runsTreeCode), the final checks after one that did are not verified.

// ToolDependencies is the ledger's Tool of the commands dependency setup
// ran after the change (fetch_dependencies' are recorded as that tool's).
const ToolDependencies = "dependencies"

// downloadCommand is an ecosystem's own command that fills the cache from
// manifest m, a path of the tree has looks into; "" for none. A Node
// project's command follows its lock file (npmInstall). The Node ones
// skip lifecycle scripts: with the network on, a script from the changed
// package.json would be the model's code. A Python project file's are
// pyInstalls, which read the project's files.
func downloadCommand(m string, has func(p string) bool) string {
	switch base := path.Base(m); {
	case base == "go.mod", base == "go.sum":
		return goDownload
	case base == "package.json":
		return npmInstall(path.Dir(m), has)
	case base == "package-lock.json", base == "npm-shrinkwrap.json":
		return npmCI
	case base == "yarn.lock":
		return yarnInstall
	case base == "pnpm-lock.yaml":
		return pnpmInstall
	case findings.IsRequirements(m):
		return pipInstall + "-r " + shellQuote(relTo(projectDir(m), m))
	case base == "Cargo.toml", base == "Cargo.lock":
		return "cargo fetch"
	case base == "pom.xml":
		return "mvn -B -q dependency:go-offline"
	}
	return ""
}

// The Node projects' install commands, by lock file.
const (
	npmCI       = "npm ci --ignore-scripts --no-audit --no-fund"
	yarnInstall = "yarn install --frozen-lockfile --ignore-scripts"
	pnpmInstall = "pnpm install --frozen-lockfile --ignore-scripts"
	// npmNoLock is for a project without a lock file, where npm ci
	// refuses to run. It writes no lock file either: the first setup's
	// would be in the tree the model's commit is made from.
	npmNoLock = "npm install --ignore-scripts --no-audit --no-fund --no-package-lock"
)

// npmInstall is the install command of the Node project in dir, by the
// lock file the tree has there.
func npmInstall(dir string, has func(p string) bool) string {
	for _, l := range []struct{ file, cmd string }{
		{"package-lock.json", npmCI}, {"npm-shrinkwrap.json", npmCI}, {"yarn.lock", yarnInstall}, {"pnpm-lock.yaml", pnpmInstall},
	} {
		if has(path.Join(dir, l.file)) {
			return l.cmd
		}
	}
	return npmNoLock
}

// inTree is a has for downloadCommand: whether the tree in dir holds p
// (a link counts; none is followed).
func inTree(dir string) (has func(p string) bool, done func()) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return func(string) bool { return false }, func() {}
	}
	return func(p string) bool {
		_, err := root.Lstat(p)
		return err == nil
	}, func() { root.Close() }
}

// pipInstall installs into the project's virtualenv .venv, made first
// when setup has not made one, which the checks then run with
// (virtualenvs, verify.Runner.Virtualenvs): a download into the cache
// would reach no check, which runs offline, and Debian's python3 has no
// pip of its own and refuses installs outside a virtualenv (PEP 668). The
// environment sees the image's own packages (pytest), as the checks did
// without one. pyproject.toml's project is installed editable, so the
// environment imports the tree it is in (the model's, after
// fetch_dependencies), never a copy. As `pip download` did, pip may run
// a build backend of the changed tree (a local or source requirement)
// here, with the allowlisted network and no setup-only secrets.
// Its --report (in the container's /tmp) names each download's URL, for
// the source probe.
const pipInstall = `{ [ -x .venv/bin/python ] || python3 -m venv --system-site-packages .venv; } && ` +
	`.venv/bin/python -m pip install --quiet --disable-pip-version-check --report "/tmp/.patchwright-pip-$$.json" `

// pipSources prints the origins (scheme, host and port: never a URL's
// credentials or path) pip downloaded from, by pipInstall's reports.
const pipSources = `python3 -c 'import glob, json, urllib.parse as u
s = set()
for f in glob.glob("/tmp/.patchwright-pip-*.json"):
    for i in json.load(open(f)).get("install", []):
        p = u.urlsplit(i.get("download_info", {}).get("url", ""))
        if p.scheme in ("http", "https") and p.hostname:
            s.add(p.scheme + "://" + p.hostname + (":%d" % p.port if p.port else "") + "/")
if not s:
    raise SystemExit(1)
print("pip downloads from " + ", ".join(sorted(s)))'`

// sourceProbes print where an ecosystem fetches from, keyed by the
// download command's first word; run after the download, in the same
// container, so a `go env -w` of setup counts.
var sourceProbes = map[string]string{
	"go":  `printf 'GOPROXY=%s\n' "$(go env GOPROXY)"`,
	"npm": `printf 'npm registry %s\n' "$(npm config get registry)"`,
	"pip": pipSources,
}

// projectDir is the directory of the project whose manifest m is, where
// its download command runs: m's own, but for requirements/dev.txt the
// one above, whose .venv the checks run with.
func projectDir(m string) string {
	dir := path.Dir(m)
	if findings.IsRequirements(m) && path.Base(dir) == "requirements" {
		return path.Dir(dir)
	}
	return dir
}

// relTo is the slash path p relative to its ancestor dir.
func relTo(dir, p string) string {
	if dir == "." {
		return p
	}
	return strings.TrimPrefix(p, dir+"/")
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// depsCommands are the trusted commands for the changed manifests of the
// tree in dir: the default branch's setup, or the download commands of
// each manifest (manifestCommands), in the order of the manifests, each
// once.
func (r *run) depsCommands(dir string, manifests []string) (cmds []string, configured bool) {
	if len(r.clone.cfg.Setup) > 0 {
		return slices.Clone(r.clone.cfg.Setup), true
	}
	has, done := inTree(dir)
	defer done()
	read, closeTree := treeReader(dir)
	defer closeTree()
	for _, m := range manifests {
		for _, c := range r.manifestCommands(read, has, m) {
			if !slices.Contains(cmds, c.Command) {
				cmds = append(cmds, c.Command)
			}
		}
	}
	return cmds, false
}

// manifestCommands are the download commands for manifest m of the tree
// that read and has look into, each with the manifest (from the
// repository root) that called for it, already run in m's project
// directory: one for most manifests (downloadCommand, else detection's
// setup), and for a Python project file one per group of test
// requirements, then the project (pyInstalls).
func (r *run) manifestCommands(read func(string) []byte, has func(string) bool, m string) []report.DetectedCommand {
	var out []report.DetectedCommand
	switch {
	case slices.Contains(pyProjectFiles, path.Base(m)):
		out = pyInstalls(read, m)
		for i := range out {
			out[i].Manifest = path.Join(path.Dir(m), out[i].Manifest)
		}
	case downloadCommand(m, has) != "":
		out = []report.DetectedCommand{{Command: downloadCommand(m, has), Manifest: m}}
	default:
		if cmd := r.projectSetup(m); cmd != "" {
			return []report.DetectedCommand{{Command: cmd, Manifest: m}}
		}
		return nil
	}
	if dir := projectDir(m); dir != "." {
		for i := range out {
			out[i].Command = "cd " + shellQuote(dir) + " && " + out[i].Command
		}
	}
	return out
}

// projectSetup is the setup command detection chose for the project
// whose manifest m is (bundle install, composer install, gradle
// dependencies: verify.Detection.SetupFor), already run in its directory;
// "" when no project names m.
func (r *run) projectSetup(m string) string {
	for _, s := range r.clone.detection.SetupFor() {
		if slices.Contains(s.Manifests, m) {
			return s.Command
		}
	}
	return ""
}

// manifestChanges are the changes to dependency manifests and lockfiles.
func manifestChanges(changes []gitrepo.Change) []gitrepo.Change {
	var out []gitrepo.Change
	for _, c := range changes {
		if c.Kind != gitrepo.Deleted && c.GitPath == "" && findings.IsManifest(c.Path) {
			out = append(out, c)
		}
	}
	return out
}

// depsAfterChange runs dependency setup on a copy of the final tree dir
// when the committed change touches a manifest; when it passed, dir is
// then that copy with the commit put back (adoptSetupOutput), so what
// setup installed into the tree (node_modules) reaches the final checks.
func (r *run) depsAfterChange(ctx context.Context, dir string) error {
	// On a retry the manifests an earlier attempt touched count: setup
	// installed for the default branch's (retrysetup.go).
	changed := manifestChanges(r.modelChanges())
	if len(changed) == 0 {
		return nil
	}
	setup, recs, out, err := r.fetchDependencies(ctx, stageDeps, dir, changed)
	if out != "" {
		defer os.RemoveAll(out)
	}
	if err != nil {
		return err
	}
	for _, rec := range recs {
		if _, err := r.ledger.Append(&ledger.Command{Tool: ToolDependencies, CommandRecord: rec}); err != nil {
			return err
		}
	}
	// What the egress proxy refused these commands follows them, as the
	// first setup's refusals follow its commands.
	if err := r.recordRefusals(); err != nil {
		return err
	}
	if err := r.recordDependencies(setup); err != nil {
		return err
	}
	// Whether it passed or not, what it fetched is in the job's cache,
	// which the final checks read.
	if err := r.judgeTreeCode(dir, setup); err != nil {
		return err
	}
	if out == "" {
		return nil
	}
	return r.adoptSetupOutput(dir, out)
}

// recordDependencies writes a dependency setup to the ledger and keeps it
// for the report.
func (r *run) recordDependencies(setup report.DependencySetup) error {
	if _, err := r.ledger.Append(&ledger.DependencyEvent{DependencySetup: setup}); err != nil {
		return err
	}
	r.mu.Lock()
	r.fin.deps = append(r.fin.deps, setup)
	r.mu.Unlock()
	return nil
}

// fetchDependencies runs the trusted dependency setup for changed on a
// copy of tree in a fresh setup container of stage s (stageFetch or
// stageDeps), writing that stage's own cache volume (trust.go), and
// returns what it did and the commands' records (secrets withheld).
// When every command passed, out is the copy as setup left it, its
// container gone: the caller's to use and remove (depstree.go); ""
// otherwise.
func (r *run) fetchDependencies(ctx context.Context, s stage, tree string, changed []gitrepo.Change) (setup report.DependencySetup, recs []tools.CommandRecord, out string, err error) {
	for _, c := range changed {
		setup.Manifests = append(setup.Manifests, r.shownPath(c.Path))
	}
	cmds, configured := r.depsCommands(tree, changedPaths(changed))
	setup.Configured = configured
	files, err := r.depsFiles(changed)
	if err != nil {
		return setup, nil, "", err
	}
	if err := r.fetchedDependencies(&setup, files); err != nil {
		return setup, nil, "", err
	}
	if len(cmds) == 0 || r.sharedCache() == "" {
		// Without a cache volume every sandbox's cache is its own: there
		// is nowhere to put what setup fetched.
		return setup, nil, "", nil
	}
	r.fin.depsRuns++
	copyDir := filepath.Join(r.clone.trees, fmt.Sprintf("deps-%d", r.fin.depsRuns))
	if err := copyTree(tree, copyDir); err != nil {
		return setup, nil, "", fmt.Errorf("copy the tree for dependency setup: %w", err)
	}
	recs, passed, err := r.runDependencySetup(ctx, depsRun{stage: s, setup: &setup, dir: copyDir, cmds: cmds, goModules: newGoModules(files)})
	if err != nil || !passed {
		os.RemoveAll(copyDir)
		return setup, recs, "", err
	}
	return setup, recs, copyDir, nil
}

// depsRun is one dependency setup: its stage's row (trust.go), the
// record it fills, the copy of the tree it runs on, its commands and the
// Go modules the change names for the first time (goproxy.go).
type depsRun struct {
	stage     stage
	setup     *report.DependencySetup
	dir       string
	cmds      []string
	goModules []string
}

// runDependencySetup runs d's commands in a fresh setup container on its
// tree and removes the container before it returns, so nothing writes the
// tree after. The row gives it the first setup's network (the allowlist,
// the job's services), but never the setup-only secrets: the tree holds
// the model's change, and its build files may run here.
func (r *run) runDependencySetup(ctx context.Context, d depsRun) (recs []tools.CommandRecord, passed bool, err error) {
	setup, cmds := d.setup, d.cmds
	uid, gid := r.e.sandboxOwner()
	if err := sandbox.HandOver(d.dir, uid, gid); err != nil {
		return nil, false, err
	}
	ws, err := sandbox.OpenWorkspace(d.dir)
	if err != nil {
		return nil, false, err
	}
	defer ws.Close()
	sb, err := r.e.Sandboxes.Create(ctx, r.specFor(d.stage, d.dir))
	if err != nil {
		return nil, false, fmt.Errorf("create the dependency setup sandbox: %w", err)
	}
	defer sb.Close()
	hold, held := r.holdGoModules(ctx, sb, d.goModules)
	setup.NotFetched = held
	for _, script := range cmds {
		// The record shows the command as configured or detected; the
		// line that holds modules back is the application's.
		res, err := sb.Exec(ctx, sandbox.Command{Script: hold + script, Timeout: DefaultSetupTimeout})
		if err != nil {
			return recs, false, fmt.Errorf("run dependency setup command %q: %w", script, err)
		}
		rec, _, err := tools.WithholdSecretsIn(ctx, r.scanner, ws, tools.CommandRecordOf(script, res))
		if err != nil {
			return recs, false, err
		}
		recs = append(recs, rec)
		setup.Commands = append(setup.Commands, report.DependencyCommand{Command: script, ExitCode: res.ExitCode, TimedOut: res.TimedOut})
		if res.ExitCode != 0 || res.TimedOut {
			return recs, false, nil
		}
	}
	setup.Sources = r.probeSources(ctx, sb, cmds)
	// Its processes, detached ones included, end with the container.
	if err := sb.Close(); err != nil {
		return recs, false, fmt.Errorf("remove the dependency setup sandbox: %w", err)
	}
	return recs, true, nil
}

// fetchedDependencies fills setup.Fetched from what the changed
// manifests (files) add or re-version, secrets withheld.
func (r *run) fetchedDependencies(setup *report.DependencySetup, files []findings.File) error {
	for _, d := range findings.ChangedDependencies(files) {
		dep := report.Dependency{What: d.What, Name: d.Name, Version: d.Version, Was: d.Was}
		for _, s := range []*string{&dep.Name, &dep.Version, &dep.Was} {
			var err error
			if *s, err = withholdText(r.scanner, *s); err != nil {
				return err
			}
		}
		setup.Fetched = append(setup.Fetched, dep)
	}
	return nil
}

// probeSources asks the setup container where each ecosystem of cmds
// fetches from; a probe that fails or prints a secret says nothing.
func (r *run) probeSources(ctx context.Context, sb sandbox.Sandbox, cmds []string) []string {
	var out []string
	for _, cmd := range cmds {
		for word, probe := range sourceProbes {
			if !strings.Contains(" "+cmd+" ", " "+word+" ") || slices.ContainsFunc(out, func(s string) bool { return strings.HasPrefix(s, probeLabel(word)) }) {
				continue
			}
			res, err := sb.Exec(ctx, sandbox.Command{Script: probe, Timeout: callTimeout, OutputLimit: 4 << 10})
			line := strings.TrimSpace(string(res.Stdout.Head))
			if err != nil || res.ExitCode != 0 || line == "" || strings.Contains(line, "\n") || withheld(r.scanner, "", line) != "" {
				continue
			}
			out = append(out, line)
		}
	}
	slices.Sort(out)
	return out
}

func probeLabel(word string) string {
	if word == "go" {
		return "GOPROXY="
	}
	return word + " "
}

// callTimeout bounds a probe of the setup container's configuration.
const callTimeout = 30 * time.Second

func changedPaths(changes []gitrepo.Change) []string {
	out := make([]string, len(changes))
	for i, c := range changes {
		out[i] = c.Path
	}
	return out
}

// sharedCache is the repository's cache volume, which the job's own one
// starts as a copy of.
func (r *run) sharedCache() string {
	if r.e.CacheVolume == nil {
		return ""
	}
	return r.e.CacheVolume(r.job.RepoURL)
}

// cacheDir is where the job's own cache volume name keeps its files: on
// the job's bounded file system when it has one, so that what the
// model's build code writes into the cache counts against the job's disk
// bound with the work tree; "" (the engine's volumes) otherwise, and for
// the repository's shared volume.
func (r *run) cacheDir(name string) string {
	switch name {
	case "":
		return ""
	case r.box.vols.job:
		return r.boundDir("cache")
	case r.box.vols.fetch:
		return r.boundDir("cache-fetch")
	}
	return ""
}

// removeJobCache removes the job's own cache volumes once no sandbox
// uses them: nothing of them is ever copied into the shared one.
func (r *run) removeJobCache() {
	if r.e.RemoveCache == nil {
		return
	}
	for _, v := range []string{r.box.vols.job, r.box.vols.fetch} {
		if v == "" {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		if err := r.e.RemoveCache(ctx, v); err != nil {
			r.e.logger().Warn("remove the job's cache volume", "volume", v, logkey.Err, err)
		}
		cancel()
	}
}

// depsFetcher is fetch_dependencies for the model: dependency setup on a
// copy of the work tree as it is now, then a new agent container whose
// read-only cache is the job's refreshed one.
type depsFetcher struct{ r *run }

// FetchDependencies implements tools.DependencyFetcher.
func (f depsFetcher) FetchDependencies(ctx context.Context) (tools.Fetch, error) {
	r := f.r
	changes, err := r.listChanges()
	if err != nil {
		return tools.Fetch{}, fmt.Errorf("list changes: %w", err)
	}
	changed := manifestChanges(changes)
	if len(changed) == 0 {
		return tools.Fetch{}, nil
	}
	setup, recs, copyDir, err := r.fetchDependencies(ctx, stageFetch, r.ws.Dir(), changed)
	if copyDir != "" {
		defer os.RemoveAll(copyDir)
	}
	if err != nil {
		return tools.Fetch{}, err
	}
	if err := r.recordRefusals(); err != nil {
		return tools.Fetch{}, err
	}
	setup.ByModel = true
	if err := r.recordDependencies(setup); err != nil {
		return tools.Fetch{}, err
	}
	var installed []string
	if r.box.vols.fetch != "" {
		if installed, err = r.refreshAgentSandbox(ctx, copyDir); err != nil {
			return tools.Fetch{}, err
		}
		r.useVirtualenvs(installed)
	}
	out := tools.Fetch{Manifests: setup.Manifests, Commands: recs, Sources: setup.Sources, Installed: installed}
	for _, m := range setup.NotFetched {
		out.NotFetched = append(out.NotFetched, "Go module "+m.Module+": the setup network may not reach "+m.Host+
			", and the module proxy would fetch it from there (ask for the host in network.allow, or use a module whose host is allowed)")
	}
	for _, d := range setup.Fetched {
		line := d.What + " " + d.Name + " " + d.Version
		if d.Was != "" {
			line += " (was " + d.Was + ")"
		} else {
			line += " (new)"
		}
		out.Fetched = append(out.Fetched, line)
	}
	return out, nil
}

// useVirtualenvs has the model's verify tool run with each .venv of
// installed, as the final checks will.
func (r *run) useVirtualenvs(installed []string) {
	if r.box.verifier == nil {
		return
	}
	for _, d := range installed {
		if path.Base(d) != ".venv" {
			continue
		}
		if r.box.verifier.Virtualenvs == nil {
			r.box.verifier.Virtualenvs = map[string]string{}
		}
		r.box.verifier.Virtualenvs[path.Dir(d)] = d
	}
}

// swappable is the agent's sandbox as the tools and the verifier hold
// it, so fetch_dependencies can put a new container under them. Tool
// calls run one at a time, so no command runs while it swaps.
type swappable struct {
	mu sync.Mutex
	sb sandbox.Sandbox
}

func (s *swappable) current() sandbox.Sandbox {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sb
}

func (s *swappable) Exec(ctx context.Context, cmd sandbox.Command) (sandbox.Result, error) {
	return s.current().Exec(ctx, cmd)
}
func (s *swappable) DisableNetwork(ctx context.Context) error { return s.current().DisableNetwork(ctx) }
func (s *swappable) ID() string                               { return s.current().ID() }
func (s *swappable) Close() error                             { return s.current().Close() }

// stop removes the container under s, which stays there until set: the
// tools' calls fail meanwhile, and none runs (they run one at a time).
func (s *swappable) stop() error { return s.current().Close() }

// set puts next under s.
func (s *swappable) set(next sandbox.Sandbox) {
	s.mu.Lock()
	s.sb = next
	s.mu.Unlock()
}

// refreshAgentSandbox replaces the agent's container with one whose
// cache is a copy of the job's cache as dependency setup left it. When
// out is the setup's copy of the tree (its commands passed), what setup
// installed into it (installIntoWorkTree) is moved into the work tree
// between the two containers, while nothing runs on it; it returns those
// directories.
func (r *run) refreshAgentSandbox(ctx context.Context, out string) ([]string, error) {
	sw, ok := r.box.sb.(*swappable)
	if !ok {
		return nil, nil
	}
	if err := sw.stop(); err != nil {
		return nil, fmt.Errorf("stop the agent's sandbox for the fetched dependencies: %w", err)
	}
	var installed []string
	if out != "" {
		var err error
		if installed, err = r.installIntoWorkTree(out); err != nil {
			return nil, err
		}
	}
	next, err := r.create(ctx, stageAgent, r.ws.Dir())
	if err != nil {
		return nil, fmt.Errorf("restart the agent's sandbox with the fetched dependencies: %w", err)
	}
	sw.set(next)
	return installed, nil
}

// dependencyFetcher is fetch_dependencies' fetcher; nil, leaving the
// tool out, when the job has no cache volume to put what it fetches in.
func (r *run) dependencyFetcher() tools.DependencyFetcher {
	if r.sharedCache() == "" {
		return nil
	}
	return depsFetcher{r}
}
