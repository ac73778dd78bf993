package report

import "github.com/patchwright/patchwright/agent/ledger"

// SecretFile is a file the first setup left holding the value of a
// setup-only secret, which the run removed: the ledger's type, which its
// setup_secret_files_removed event carries.
type SecretFile = ledger.SecretFile

// secretFileFacts say which files setup wrote a setup-only secret into,
// that they were removed (so the checks ran without them), and where
// credentials belong instead.
func secretFileFacts(files []SecretFile) []fact {
	var out []fact
	for _, f := range files {
		s := say("Setup wrote ")
		switch {
		case len(f.Names) == 0:
			s = append(s, "a setup-only secret")
		default:
			s = append(s, "the value of ")
			for i, n := range f.Names {
				if i > 0 {
					s = append(s, ", ")
				}
				s = append(s, value(n))
			}
		}
		where := " into "
		if f.Cache {
			where = " into the build cache's "
		}
		s = append(s, where, value(f.Path), ", so it was removed before the agent started: no later phase, check or commit has it, and the checks ran without it.")
		out = append(out, s)
	}
	if len(out) > 0 {
		out = append(out, say("Setup-only secrets must be written outside the work tree and the build cache, for example to ", value("$HOME/.npmrc"), " (HOME goes with the setup container); see docs/agent-yml.md."))
	}
	return out
}
