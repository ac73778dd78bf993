package report

import (
	"fmt"
	"strings"

	"github.com/patchwright/patchwright/agent/ledger"
)

// DependencySetup, DependencyCommand, Dependency, DetectedCommand and
// UnfetchedModule are
// the ledger's: the dependencies and setup_detected events carry them.
type (
	DependencySetup   = ledger.DependencySetup
	DependencyCommand = ledger.DependencyCommand
	Dependency        = ledger.Dependency
	DetectedCommand   = ledger.DetectedCommand
	UnfetchedModule   = ledger.UnfetchedModule
)

// detectedFacts say that the first setup was detected, not configured,
// and why each command ran.
func detectedFacts(cmds []DetectedCommand) []fact {
	if len(cmds) == 0 {
		return nil
	}
	parts := []any{"The default branch's .github/agent.yml has no `setup:`, so Patchwright ran detected setup before the baseline, with the setup network: "}
	for i, c := range cmds {
		if i > 0 {
			parts = append(parts, "; ")
		}
		status := fmt.Sprintf(" (exit %d)", c.ExitCode)
		if c.TimedOut {
			status = " (timed out)"
		}
		parts = append(parts, value(c.Command), status, " because ", value(c.Manifest), " declares dependencies")
		if c.Group != "" {
			parts = append(parts, " in ", value(c.Group))
		}
	}
	return []fact{say(append(parts, ".")...)}
}

// detectedNotVerified says in "Not verified" which detected setup
// commands failed: the checks ran without what they were to fetch.
func detectedNotVerified(in Input) []fact {
	var parts []any
	for _, c := range in.DetectedSetup {
		if c.Failed() {
			if len(parts) > 0 {
				parts = append(parts, ", ")
			}
			parts = append(parts, value(c.Command))
			if c.Group != "" {
				parts = append(parts, " (", value(c.Manifest), " ", value(c.Group), ")")
			}
			if c.Error != "" {
				parts = append(parts, ": ", value(c.Error))
			}
		}
	}
	if len(parts) == 0 {
		return nil
	}
	parts = append([]any{"Detected setup failed ("}, parts...)
	return []fact{say(append(parts, "), so the checks ran without what it was to fetch; if the repository needs other commands, name them in `setup:` of .github/agent.yml.")...)}
}

// lockFiles are the manifests' names that pin versions.
var lockFiles = map[string]bool{
	"go.sum": true, "package-lock.json": true, "npm-shrinkwrap.json": true, "yarn.lock": true,
	"pnpm-lock.yaml": true, "poetry.lock": true, "uv.lock": true, "pdm.lock": true,
	"Pipfile.lock": true, "Cargo.lock": true,
}

func isLockFile(p string) bool { return lockFiles[p[strings.LastIndex(p, "/")+1:]] }

// dependencyFacts are the sentences of the body's dependency paragraph:
// what the application's last dependency setup fetched, from where, with
// which commands, and how often the model asked for one.
func dependencyFacts(in Input) []fact {
	var last *DependencySetup
	byModel := 0
	for i, d := range in.Dependencies {
		if d.ByModel {
			byModel++
		} else {
			last = &in.Dependencies[i]
		}
	}
	out := detectedFacts(in.DetectedSetup)
	if last != nil {
		out = append(out, setupFacts(*last)...)
	}
	if byModel > 0 {
		out = append(out, say(fmt.Sprintf("The model asked for dependency setup %d time(s) during its work (`fetch_dependencies`), run the same way on a copy of its tree.", byModel)))
	}
	return out
}

func setupFacts(d DependencySetup) []fact {
	lock := "no lock file changed"
	var names []any
	for i, m := range d.Manifests {
		if i > 0 {
			names = append(names, ", ")
		}
		names = append(names, value(m))
		if isLockFile(m) {
			lock = "the lock file changed"
		}
	}
	if len(d.Commands) == 0 {
		return []fact{say(append(append([]any{"The change edits "}, names...),
			" ("+lock+"), but no dependency setup ran: there is no download command for these files, or the run has no cache volume to keep what it would fetch.")...)}
	}
	whose := "each changed project's own download command"
	if d.Configured {
		whose = "the `setup:` commands of the default branch's .github/agent.yml"
	}
	out := []fact{say(append(append([]any{"The change edits "}, names...),
		" ("+lock+"), so Patchwright ran dependency setup on a copy of the changed tree, with the setup network, before the final checks: "+whose+", never a command the model wrote.")...)}
	out = append(out, setupCommandsFact(d)...)
	out = append(out, setupFetchedFact(d)...)
	if len(d.Sources) > 0 {
		parts := []any{"From: "}
		for i, s := range d.Sources {
			if i > 0 {
				parts = append(parts, ", ")
			}
			parts = append(parts, value(s))
		}
		out = append(out, say(append(parts, ".")...))
	} else {
		out = append(out, say("From: the registries the sandbox image configures (not recorded)."))
	}
	return out
}

// setupCommandsFact lists the setup commands run, each with how it ended.
func setupCommandsFact(d DependencySetup) []fact {
	var out []fact
	var cmds []any
	for i, c := range d.Commands {
		if i > 0 {
			cmds = append(cmds, "; ")
		}
		status := fmt.Sprintf(" (exit %d)", c.ExitCode)
		if c.TimedOut {
			status = " (timed out)"
		}
		cmds = append(cmds, value(c.Command), status)
	}
	if len(cmds) > 0 {
		out = append(out, say(append([]any{"Commands: "}, append(cmds, ".")...)...))
	}
	return out
}

// setupFetchedFact lists what setup fetched, each with the version it
// replaced or "(new)".
func setupFetchedFact(d DependencySetup) []fact {
	var out []fact
	if len(d.Fetched) > 0 {
		parts := []any{"Fetched: "}
		for i, f := range d.Fetched {
			if i > 0 {
				parts = append(parts, "; ")
			}
			parts = append(parts, f.What+" ", value(f.Name))
			if f.Version != "" {
				parts = append(parts, " ", value(f.Version))
			}
			if f.Was != "" {
				parts = append(parts, " (was ", value(f.Was), ")")
			} else {
				parts = append(parts, " (new)")
			}
		}
		out = append(out, say(append(parts, ".")...))
	}
	return out
}

// dependencyNotVerified says in "Not verified" that dependency setup
// after the change failed, so the final checks ran without what it was
// to fetch.
func dependencyNotVerified(in Input) []fact {
	for i := len(in.Dependencies) - 1; i >= 0; i-- {
		d := in.Dependencies[i]
		if d.ByModel {
			continue
		}
		out := notFetchedFacts(d.NotFetched)
		if d.Failed() {
			out = append(out, say("Dependency setup after the change failed, so the final checks ran without the dependencies the change needs; see its commands under Changes."))
		}
		return out
	}
	return nil
}

// notFetchedFacts name the Go modules dependency setup held back, and
// how a repository or operator lets them through.
func notFetchedFacts(mods []UnfetchedModule) []fact {
	if len(mods) == 0 {
		return nil
	}
	parts := []any{"Go modules the change needs were not fetched, so the final checks ran without them: "}
	for i, m := range mods {
		if i > 0 {
			parts = append(parts, ", ")
		}
		parts = append(parts, value(m.Module))
	}
	parts = append(parts, ". The Go module proxy fetches a module from its own host, so it would carry the module path to any host; no allowlist entry names theirs (add the host to ",
		value("network.allow"), ", or the operator may set ", value("PATCHWRIGHT_GOPROXY_ANY_ORIGIN"), ").")
	return []fact{say(parts...)}
}
