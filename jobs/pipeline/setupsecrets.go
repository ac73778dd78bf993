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
// gets; nothing when the repository has none or there is no setup. The
// first setup runs on the default branch's commit, a retry's too
// (retrysetup.go), so its row of the trust table gives it them always:
// no setup runs on code a model wrote.
func (r *run) recordSetupSecrets() error {
	if len(r.first.setupSecrets) == 0 || len(r.setupScripts()) == 0 {
		return nil
	}
	_, err := r.ledger.Append(&ledger.SetupSecretsGiven{Names: slices.Sorted(maps.Keys(r.first.setupSecrets))})
	return err
}
