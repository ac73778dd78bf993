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
	if len(r.setupSecrets) == 0 || len(r.cfg.Setup) == 0 {
		return nil
	}
	_, err := r.ledger.Append(&SetupSecretsGiven{Names: slices.Sorted(maps.Keys(r.setupSecrets))})
	return err
}
