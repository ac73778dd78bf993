package pipeline

import (
	"maps"
	"slices"

	"github.com/patchwright/patchwright/agent/ledger"
)

// TypeSetupSecrets is the ledger event that names the setup-only secrets
// the setup container was given (DESIGN §4.1): names, never values.
const TypeSetupSecrets = "setup_secrets"

func init() {
	ledger.Register(TypeSetupSecrets, func() ledger.Payload { return new(SetupSecretsGiven) })
}

// SetupSecretsGiven names the setup-only secrets of a run.
type SetupSecretsGiven struct {
	Names []string `json:"names"`
}

// EventType implements ledger.Payload.
func (*SetupSecretsGiven) EventType() string { return TypeSetupSecrets }

// secretEnv is the setup container's environment for the secrets, in name
// order; nil for none.
func secretEnv(vals map[string]string) []string {
	var env []string
	for _, name := range slices.Sorted(maps.Keys(vals)) {
		env = append(env, name+"="+vals[name])
	}
	return env
}

// recordSetupSecrets writes their names to the ledger when setup gets any.
func (r *run) recordSetupSecrets() error {
	if len(r.setupSecrets) == 0 || !r.setupGetsSecrets() {
		return nil
	}
	_, err := r.ledger.Append(&SetupSecretsGiven{Names: slices.Sorted(maps.Keys(r.setupSecrets))})
	return err
}

// setupGetsSecrets reports whether the first setup container gets the
// setup-only secrets: configured setup does, detected setup only on the
// default branch's tree. On a retry's agent-branch tree a detected
// command runs that tree's build code (a Gemfile, a setup.py) that
// nobody configured.
func (r *run) setupGetsSecrets() bool {
	return len(r.cfg.Setup) > 0 || (len(r.detected) > 0 && r.trustedTree())
}
