package pipeline

import (
	"slices"
	"sync"

	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/egress"
)

// TypeEgressRefused is the ledger event of a connection refused to a
// setup command (DESIGN §4.1): by the egress proxy (a host not on the
// allowlist), or by the firewall, for one that went around the proxy
// (its Reason starts "bypassed the proxy", its Host is an address).
const TypeEgressRefused = "egress_refused"

func init() {
	ledger.Register(TypeEgressRefused, func() ledger.Payload { return new(EgressRefused) })
}

// EgressRefused is one refused connection: host, port, the phase and the
// command that tried it, and why.
type EgressRefused struct {
	egress.Refusal
}

// EventType implements ledger.Payload.
func (*EgressRefused) EventType() string { return TypeEgressRefused }

// Registries are the host names the setup network reaches by default for
// each detected ecosystem (verify.Detection.Languages), beside Debian's
// archive for every repository: the public registries and what their
// clients fetch from (the Go checksum database, PyPI's file host,
// crates.io's index and downloads, Gradle's distributions and plugins).
// Composer's packages are downloaded from where each package's metadata
// points (often GitHub's codeload), which is not on this list.
var Registries = map[string][]string{
	"go":     {"proxy.golang.org", "sum.golang.org"},
	"node":   {"registry.npmjs.org"},
	"python": {"pypi.org", "files.pythonhosted.org"},
	"rust":   {"crates.io", "static.crates.io", "index.crates.io"},
	"java":   {"repo.maven.apache.org", "repo1.maven.org", "services.gradle.org", "plugins.gradle.org"},
	"ruby":   {"rubygems.org", "index.rubygems.org"},
	"php":    {"repo.packagist.org"},
	"":       {"deb.debian.org"},
}

// refusals collects the refusals of one run, from the proxy's and the
// firewall log's goroutines, until the pipeline records them.
type refusals struct {
	mu       sync.Mutex
	all      []egress.Refusal
	recorded int
}

func (f *refusals) add(r egress.Refusal) {
	f.mu.Lock()
	f.all = append(f.all, r)
	f.mu.Unlock()
}

// unrecorded returns the refusals not returned before.
func (f *refusals) unrecorded() []egress.Refusal {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := slices.Clone(f.all[f.recorded:])
	f.recorded = len(f.all)
	return out
}

func (f *refusals) list() []egress.Refusal {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.all)
}

// allowlist is what the setup network of this run reaches: the detected
// ecosystems' registries, the operator's list and the repository's
// network.allow.
func (r *run) allowlist() []string {
	out := slices.Clone(Registries[""])
	for _, lang := range r.detection.Languages {
		out = append(out, Registries[lang]...)
	}
	out = append(out, r.e.EgressAllow...)
	out = append(out, r.cfg.Egress.Allow...)
	slices.Sort(out)
	return slices.Compact(out)
}

// egressSpec confines the setup network to the allowlist, unless the
// repository asks for `network: open` and the operator allows that.
func (r *run) egressSpec() *sandbox.Egress {
	if r.cfg.Egress.Open && r.e.AllowOpenNetwork {
		return nil
	}
	return &sandbox.Egress{Allow: r.allowlist(), Phase: string(PhaseSetup), Refused: r.refused.add}
}

// recordRefusals writes the refusals since the last call to the ledger,
// their commands, hosts and reasons with any secret withheld.
func (r *run) recordRefusals() error {
	for _, ref := range r.refused.unrecorded() {
		var err error
		if ref.Command, err = withholdText(r.scanner, ref.Command); err != nil {
			return err
		}
		if ref.Host, err = withholdText(r.scanner, ref.Host); err != nil {
			return err
		}
		// A DNS query that went around the proxy names its host in the
		// reason: a name a command can fill with a secret.
		if ref.Reason, err = withholdText(r.scanner, ref.Reason); err != nil {
			return err
		}
		if _, err := r.ledger.Append(&EgressRefused{ref}); err != nil {
			return err
		}
	}
	return nil
}
