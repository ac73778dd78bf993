package pipeline

import (
	"maps"
	"slices"

	"github.com/patchwright/patchwright/agent/ledger"
)

// secretEnv is the setup container's environment for the secrets, in name
// order; nil for none.
func secretEnv(vals map[string]string) []string {
	var env []string
	for _, name := range slices.Sorted(maps.Keys(vals)) {
		env = append(env, name+"="+vals[name])
	}
	return env
}

// recordSetupSecrets writes to the ledger the names of the secrets setup
// gets, or of those it runs without and why; nothing when the
// repository has none or there is no setup. The names withheld are kept
// for the report.
func (r *run) recordSetupSecrets() error {
	if len(r.setupSecrets) == 0 || len(r.setupScripts()) == 0 {
		return nil
	}
	names := slices.Sorted(maps.Keys(r.setupSecrets))
	var p ledger.Payload = &ledger.SetupSecretsGiven{Names: names}
	if !r.setupGetsSecrets() {
		r.secretsWithheld = names
		p = &ledger.SetupSecretsWithheld{Names: names, Reason: "the tree is the agent branch " + r.job.Branch +
			", not the default branch " + r.job.ConfigBranch + ": its setup runs code a model wrote, with the setup network"}
	}
	_, err := r.ledger.Append(p)
	return err
}

// setupGetsSecrets reports whether the first setup container gets the
// setup-only secrets, as its row of the trust table says: only on the
// default branch's tree. On a retry's agent-branch tree every setup
// command, configured or detected, runs that tree's code (an npm
// postinstall script, a Makefile, a setup.py) that a model wrote, and the
// allowlisted registry it reaches could take a token out (an npm publish).
func (r *run) setupGetsSecrets() bool {
	return rowOf(r.setupStage()).Secrets
}
