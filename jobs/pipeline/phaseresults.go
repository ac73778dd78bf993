package pipeline

import (
	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/config"
	"github.com/patchwright/patchwright/agent/secrets"
	"github.com/patchwright/patchwright/jobs/codeowners"
	"github.com/patchwright/patchwright/jobs/gitrepo"
	"github.com/patchwright/patchwright/report"
	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/verify"
	"github.com/patchwright/patchwright/verify/findings"
)

// The results of a run's phases, one type per phase, each held whole by
// run (run.go): a reader sees which phase established a field by its
// group, and run cannot grow a loose field unseen (phaseresults_test.go).

// cloneResult is what the clone phase (prepare) established: where the
// job's trees live, the configuration branch's configuration, and what
// the run will check and run on.
type cloneResult struct {
	tmp string
	// trees holds the work tree and the checks' trees (tree.go), on the
	// job's bounded filesystem when there is one.
	trees string
	// unboundWhy says why BoundWorkspace failed; "" when it was not tried
	// or worked.
	unboundWhy string
	// unbound undoes BoundWorkspace; nil when it was not used.
	unbound func() error
	cfg     config.Config
	// applied says what the operator's policy did to cfg.
	applied  config.Applied
	checks   []verify.Check
	missing  []string
	goModule string
	// goWork: the cloned commit tracks a go.work at its root.
	goWork    bool
	detection verify.Detection
	image     string
	// template is the repository's pull-request template, from the
	// configuration branch; zero when it has none.
	template report.Template
	// codeOwners are the configuration branch's CODEOWNERS rules.
	codeOwners codeowners.Rules
	// detected is the detected first setup, when the configuration has
	// no `setup:` (firstsetup.go).
	detected []report.DetectedCommand
	// images are the run's images as resolveImages resolved them (their
	// order: the sandbox's, then the services'); serviceImages what each
	// service's container is created from, by name.
	images        []runImage
	serviceImages map[string]string
}

// sandboxes are what a run keeps running across its phases, each phase
// taking over or replacing them; cleanup removes them.
type sandboxes struct {
	// sb is the current container (setup's, then the agent's); nil
	// between them and after the agent phase.
	sb       sandbox.Sandbox
	verifier *verify.Runner
	// vols are the job's own cache volumes (trust.go).
	vols jobVolumes
	// refused are the connections the egress proxy refused to setup.
	refused refusals
	// services are the job's service containers, serviceHosts their
	// names; nil without services:.
	services     sandbox.Services
	serviceHosts []string
}

// firstSetup is the first setup's input, the setup-only secrets, and
// what it left for later phases.
type firstSetup struct {
	// setupSecrets are this repository's setup-only secrets, name to
	// value: in the setup container's environment and nowhere else.
	setupSecrets map[string]string
	// secretFiles are the files setup left a setup-only secret in, which
	// were removed before the agent's phase (setupscrub.go).
	secretFiles []report.SecretFile
	// detectedRan are the commands of the detected first setup
	// (cloneResult.detected) that ran, with their exit codes, for the
	// report.
	detectedRan []report.DetectedCommand
	// pristine is the work tree as setup left it, before the model's
	// container could write it (tree.go); "" until then. The final phase
	// moves it into the final tree, or removes it: no phase reads it
	// after.
	pristine string
	// retry is what a retry's first setup on the default branch's commit
	// leaves for later phases (retrysetup.go); zero on a first run.
	retry retryTree
}

// modelResult is what the agent phase (runAgent) returns.
type modelResult struct {
	res agent.Result
	// ran: the model loop started.
	ran bool
	// interruptWhy is what interrupted the model loop when it was not a
	// drain (an operator's pause: agent.InterruptReason), "" otherwise.
	interruptWhy string
}

// finalResult is what the final phase (runFinal) and the scans after it
// established: the change, its checks and what was found in it.
type finalResult struct {
	// checks are the final checks' results.
	checks      []verify.CheckResult
	changes     []gitrepo.Change
	changesRead bool
	newTests    []verify.NewTestResult
	// findings are the secrets found in the change.
	findings []secrets.Finding
	// evidence are the findings on the change (tests weakened, protected
	// paths, dependencies, scope) for result.json and the report.
	evidence []findings.Finding
	// dropped are the changes left out of the commit (protected, too
	// large, command outputs); the final checks run without them.
	dropped []gitrepo.Change
	// tooLarge says which bound of gitrepo.Limits the work tree passed;
	// there is then no change to check or commit.
	tooLarge string
	// deps are the dependency setups on changed trees, in order.
	deps []report.DependencySetup
	// depsRuns counts the dependency setups, naming their trees.
	depsRuns int
}

// ending is why a run's phases stopped before the last one; zero when
// they did not.
type ending struct {
	// infra is the first infrastructure failure, with its phase.
	infra error
	// cancelled names the phase during which the context ended.
	cancelled Phase
	// wedged says which phase's sandbox was killed because a command's
	// processes would not stop (sandbox.ErrWedged).
	wedged string
	// diskBound says how the job passed its disk bound (ReasonDiskBound).
	diskBound string
}
