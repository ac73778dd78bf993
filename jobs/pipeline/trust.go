package pipeline

import (
	"context"
	"strings"

	"github.com/patchwright/patchwright/internal/logkey"
	"github.com/patchwright/patchwright/sandbox"
)

// Trust (issue 40). A phase is not trusted because its commands are: on
// a tree the model changed, a trusted command (pip install -e ., make,
// npm ci with the tree's .npmrc) runs the model's code. So every phase is
// a row of trustTable, which says which tree it runs on, which cache
// volume it reads and whether it writes it, which network and secrets it
// gets, whether it runs its tree's code, and who may trust what it
// leaves. specFor builds each phase's sandbox.Spec from its row and
// nothing else, and trust_test.go pins the rules on the rows:
//
//   - no phase on a tree a model changed gets the setup-only secrets or
//     writes the repository's shared cache;
//   - what a phase on the model's tree writes reaches the final checks
//     only through dependency setup after the change, whose commands are
//     judged one by one (runsTreeCode): when one ran the tree's code, the
//     run cannot be verified (untrustedSetup);
//   - fetch_dependencies writes a volume of its own that only the
//     agent's sandbox reads, and installs only into the model's work
//     tree, from which nothing but the scanned commit goes on;
//   - the first setup, a retry's too, runs on the default branch's
//     commit (retrysetup.go): no row with a tree a model wrote leaves
//     anything a check trusts.

// stage is a phase of a run as trust sees it: finer than Phase (the setup
// phase of Progress holds the first setup, fetch_dependencies happens in
// the agent phase, and the final phase holds dependency setup).
type stage string

const (
	stageClone         stage = "clone"
	stageSetup         stage = "first setup"
	stageBaseline      stage = "baseline checks"
	stageRetryBaseline stage = "baseline checks on a retry"
	stageAgent         stage = "agent"
	stageFetch         stage = "fetch_dependencies"
	stageDeps          stage = "dependency setup after the change"
	stageFinal         stage = "final checks"
	stageScan          stage = "secret scan"
	stageCommit        stage = "commit"
)

// treeKind is whose code a phase's tree holds.
type treeKind string

const (
	// treeHost: no sandbox; the host reads git objects and the bytes of
	// the change it scanned.
	treeHost treeKind = "none (host)"
	// treeDefault: the default branch's commit, as cloned.
	treeDefault treeKind = "default branch"
	// treePristine: the default branch's commit plus what the first setup
	// made, which no model touched (tree.go).
	treePristine treeKind = "pristine"
	// treeAgentBranch: a retry's pristine tree: the agent branch's files
	// (commits an earlier attempt's model made, every one of them in the
	// pull request's diff) laid over what the first setup made on the
	// default branch's commit (retrysetup.go). No setup runs on it; it is
	// the model's for secrets and the shared cache.
	treeAgentBranch treeKind = "agent branch (retry)"
	// treeChanged: a tree this run's model changed (its work tree, a copy
	// of it, or the pristine tree with the committed change).
	treeChanged treeKind = "model-changed"
)

// modelWrote reports whether a model wrote code of the tree.
func (t treeKind) modelWrote() bool { return t == treeAgentBranch || t == treeChanged }

// volumeKind is which cache volume a phase mounts at HOME/.cache.
type volumeKind string

const (
	volNone volumeKind = "none"
	// volShared: the repository's volume, kept between jobs: later jobs'
	// baselines and setups trust it.
	volShared volumeKind = "repository's shared"
	// volJob: the job's own, a copy of the shared one made by dependency
	// setup after the change; the final checks read it. Removed with the
	// job.
	volJob volumeKind = "job's own"
	// volFetch: fetch_dependencies' own, a copy of the shared one; only
	// the agent's sandbox reads it. Removed with the job.
	volFetch volumeKind = "fetch_dependencies' own"
)

// netKind is the network of a phase's sandbox.
type netKind string

const (
	netNone netKind = "none"
	// netServices: the job's service containers only.
	netServices netKind = "services"
	// netAllowlist: the setup network when the configuration has one
	// (the egress allowlist, or the internet when the operator allows
	// `network: open`), and the services.
	netAllowlist netKind = "allowlist"
)

// codeKind says whether a phase runs code of its tree.
type codeKind string

const (
	codeNo  codeKind = "no"
	codeYes codeKind = "yes"
	// codeByCommand: it depends on the command (runsTreeCode).
	codeByCommand codeKind = "by command"
)

// leavesKind is who may trust what a phase leaves behind (files in a
// tree, a cache volume).
type leavesKind string

const (
	// leavesNothing: what it writes goes with its sandbox and tree.
	leavesNothing leavesKind = "nothing"
	// leavesTrusted: later phases (and, through the shared cache, later
	// jobs) use what it leaves as trusted.
	leavesTrusted leavesKind = "trusted"
	// leavesAgent: only the agent's sandbox reads what it leaves (the
	// fetch volume, dependency directories in the model's work tree).
	leavesAgent leavesKind = "the agent only"
	// leavesChange: only its committed change goes on, read as the bytes
	// that were scanned.
	leavesChange leavesKind = "its scanned commit"
	// leavesChecked: the final checks read what it leaves, and the run is
	// not verified when one of its commands ran the tree's code.
	leavesChecked leavesKind = "the final checks, tainting them"
)

// phaseRow is one phase's trust.
type phaseRow struct {
	Stage stage
	Tree  treeKind
	// Cache is the volume mounted; CacheWrites whether the phase writes
	// it (otherwise it gets a private copy: sandbox.Spec.CacheReadOnly).
	Cache       volumeKind
	CacheWrites bool
	Network     netKind
	// Secrets: the setup-only secrets are in its environment.
	Secrets bool
	// Checks: it runs the verification checks (checkEnv).
	Checks bool
	Code   codeKind
	Leaves leavesKind
}

// trustTable is the one owner of which phase gets what.
var trustTable = []phaseRow{
	{Stage: stageClone, Tree: treeHost, Cache: volNone, Network: netNone, Code: codeNo, Leaves: leavesTrusted},
	{Stage: stageSetup, Tree: treeDefault, Cache: volShared, CacheWrites: true, Network: netAllowlist, Secrets: true, Code: codeYes, Leaves: leavesTrusted},
	{Stage: stageBaseline, Tree: treePristine, Cache: volShared, CacheWrites: true, Network: netServices, Checks: true, Code: codeYes, Leaves: leavesTrusted},
	{Stage: stageRetryBaseline, Tree: treeAgentBranch, Cache: volShared, Network: netServices, Checks: true, Code: codeYes, Leaves: leavesNothing},
	{Stage: stageAgent, Tree: treeChanged, Cache: volFetch, Network: netServices, Code: codeYes, Leaves: leavesChange},
	{Stage: stageFetch, Tree: treeChanged, Cache: volFetch, CacheWrites: true, Network: netAllowlist, Code: codeYes, Leaves: leavesAgent},
	{Stage: stageDeps, Tree: treeChanged, Cache: volJob, CacheWrites: true, Network: netAllowlist, Code: codeByCommand, Leaves: leavesChecked},
	{Stage: stageFinal, Tree: treeChanged, Cache: volJob, Network: netServices, Checks: true, Code: codeYes, Leaves: leavesNothing},
	{Stage: stageScan, Tree: treeHost, Cache: volNone, Network: netNone, Code: codeNo, Leaves: leavesNothing},
	{Stage: stageCommit, Tree: treeHost, Cache: volNone, Network: netNone, Code: codeNo, Leaves: leavesTrusted},
}

// rowOf is s's row; every stage has one (a test pins it).
func rowOf(s stage) phaseRow {
	for _, row := range trustTable {
		if row.Stage == s {
			return row
		}
	}
	panic("pipeline: no trust row for stage " + string(s))
}

// baselineStage is the baseline's row: on a retry the pristine tree holds
// the agent branch's files.
func (r *run) baselineStage() stage {
	if r.trustedTree() {
		return stageBaseline
	}
	return stageRetryBaseline
}

// specFor is the sandbox of stage s on the tree dir, as its row says.
func (r *run) specFor(s stage, dir string) sandbox.Spec {
	row := rowOf(s)
	spec := sandbox.Spec{
		Image:     r.clone.image,
		Workspace: dir,
		JobID:     r.job.ID,
		Limits:    r.e.SandboxLimits,
		Runtime:   r.e.SandboxRuntime,
	}
	spec.CacheVolume, spec.CacheFrom = r.volume(row)
	spec.CacheDir = r.cacheDir(spec.CacheVolume)
	spec.CacheReadOnly = !row.CacheWrites
	if row.Network == netAllowlist && r.clone.cfg.Network() {
		spec.Network = true
		spec.Egress = r.egressSpec()
	}
	if row.Network != netNone {
		r.withServices(&spec)
	}
	switch {
	case row.Secrets:
		spec.Env = secretEnv(r.first.setupSecrets)
	case row.Checks:
		spec.Env = r.checksEnv()
	}
	return spec
}

// jobVolumes are the cache volumes a job makes for itself, each "" until
// the first phase that writes it: job, dependency setup after the
// change's, which the final checks read instead of the repository's
// shared one; fetch, fetch_dependencies', which only the agent's sandbox
// reads. Both are removed with the job.
type jobVolumes struct{ job, fetch string }

// volume is the cache volume of row's sandbox, and, for a job's own
// volume it is the first to write, the volume it starts as a copy of.
// Reading one not made yet, a phase reads the shared one (nothing was
// fetched); "" when the executor keeps no caches.
func (r *run) volume(row phaseRow) (name, from string) {
	shared := r.sharedCache()
	if shared == "" {
		return "", ""
	}
	var own *string
	suffix := ""
	switch row.Cache {
	case volNone:
		return "", ""
	case volShared:
		return shared, ""
	case volJob:
		own, suffix = &r.box.vols.job, "-job-"
	case volFetch:
		own, suffix = &r.box.vols.fetch, "-fetch-"
	}
	if row.CacheWrites && *own == "" {
		*own = shared + suffix + r.job.ID
	}
	switch {
	case *own == "":
		return shared, ""
	case row.CacheWrites:
		return *own, shared
	}
	return *own, ""
}

// ownVolume is the volume a sandbox of row writes when its cache is too
// large to copy into its memory (create): the job's own copy on disk
// (fetch_dependencies' for the agent), never the shared volume a later
// job trusts. No row that reads a private copy is on a tree no model
// wrote (a test pins it), so none of them may write the shared cache.
func (r *run) ownVolume(row phaseRow) (name, from string) {
	own := phaseRow{Cache: volJob, CacheWrites: true}
	if row.Cache == volFetch {
		own.Cache = volFetch
	}
	return r.volume(own)
}

// create starts the sandbox of stage s on the tree dir (specFor). A
// sandbox that gets a private copy of its cache, but whose cache is too
// large to copy into its memory, writes a copy on disk instead
// (ownVolume): a cold build of a large repository in every phase would
// cost more than the copy, and a run that cannot start at all helps
// nobody.
func (r *run) create(ctx context.Context, s stage, dir string) (sandbox.Sandbox, error) {
	spec := r.specFor(s, dir)
	sb, err := r.e.Sandboxes.Create(ctx, spec)
	if err == nil || !spec.CacheReadOnly || !strings.Contains(err.Error(), "does not fit") {
		return sb, err
	}
	spec.CacheVolume, spec.CacheFrom = r.ownVolume(rowOf(s))
	spec.CacheReadOnly = false
	r.e.logger().Warn("the cache is too large to copy into memory; this sandbox writes the job's own copy on disk", logkey.Err, err)
	return r.e.Sandboxes.Create(ctx, spec)
}
