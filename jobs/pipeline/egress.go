package pipeline

import (
	"fmt"
	"slices"
	"sync"

	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/egress"
)

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

// The refusals a run keeps one by one are bounded by count and bytes: a
// command flooding the firewall with packets to ever new ports made
// 204,000 of them in 45 s. Past the bounds a refusal is only counted,
// with its host among at most maxDroppedHosts, and the ledger gets a
// summary (EgressRefusalsDropped) instead.
const (
	maxRefusals      = 200
	maxRefusalBytes  = 64 << 10
	maxDroppedHosts  = 1000
	refusalOverheadB = 64 // a record's fields beside its strings, roughly
)

// droppedSummary says d in a sentence.
func droppedSummary(d ledger.EgressRefusalsDropped) string {
	hosts := fmt.Sprintf("%d hosts", d.Hosts)
	if d.Hosts == 1 {
		hosts = "1 host"
	}
	if d.HostsAtLeast {
		hosts = "at least " + hosts
	}
	return fmt.Sprintf("and %d more refusals to %s, past the run's bound and not recorded one by one", d.Count, hosts)
}

// refusals collects the refusals of one run, from the proxy's and the
// firewall log's goroutines, until the pipeline records them; within the
// bounds above.
type refusals struct {
	mu         sync.Mutex
	all        []egress.Refusal
	bytes      int
	recorded   int
	dropped    int
	hosts      map[string]bool // of the dropped ones, at most maxDroppedHosts
	summarised int             // dropped as of the last summary recorded
}

func (f *refusals) add(r egress.Refusal) {
	size := refusalOverheadB + len(r.Host) + len(r.Phase) + len(r.Command) + len(r.Reason)
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.all) < maxRefusals && f.bytes+size <= maxRefusalBytes {
		f.all = append(f.all, r)
		f.bytes += size
		return
	}
	f.dropped++
	if f.hosts == nil {
		f.hosts = map[string]bool{}
	}
	if len(f.hosts) < maxDroppedHosts {
		f.hosts[r.Host] = true
	}
}

// unrecorded returns the refusals not returned before, and a summary of
// those dropped if more were since the last call.
func (f *refusals) unrecorded() ([]egress.Refusal, *ledger.EgressRefusalsDropped) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := slices.Clone(f.all[f.recorded:])
	f.recorded = len(f.all)
	if f.dropped == f.summarised {
		return out, nil
	}
	f.summarised = f.dropped
	return out, f.summary()
}

// summary is what was dropped so far; nil if nothing. f.mu is held.
func (f *refusals) summary() *ledger.EgressRefusalsDropped {
	if f.dropped == 0 {
		return nil
	}
	return &ledger.EgressRefusalsDropped{Count: f.dropped, Hosts: len(f.hosts), HostsAtLeast: len(f.hosts) >= maxDroppedHosts}
}

func (f *refusals) list() ([]egress.Refusal, *ledger.EgressRefusalsDropped) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.all), f.summary()
}

// allowlist is what the setup network of this run reaches: the detected
// ecosystems' registries, the operator's list and the repository's
// network.allow.
func (r *run) allowlist() []string {
	out := slices.Clone(Registries[""])
	for _, lang := range r.clone.detection.Languages {
		out = append(out, Registries[lang]...)
	}
	out = append(out, r.e.EgressAllow...)
	out = append(out, r.clone.cfg.Egress.Allow...)
	slices.Sort(out)
	return slices.Compact(out)
}

// egressSpec confines the setup network to the allowlist, unless the
// repository asks for `network: open` and the operator allows that.
func (r *run) egressSpec() *sandbox.Egress {
	if r.clone.cfg.Egress.Open && r.e.AllowOpenNetwork {
		return nil
	}
	return &sandbox.Egress{Allow: r.allowlist(), Phase: string(PhaseSetup), Refused: r.box.refused.add}
}

// recordRefusals writes the refusals since the last call to the ledger,
// their commands, hosts and reasons with any secret withheld.
func (r *run) recordRefusals() error {
	refs, dropped := r.box.refused.unrecorded()
	for _, ref := range refs {
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
		if _, err := r.ledger.Append((*ledger.EgressRefused)(&ref)); err != nil {
			return err
		}
	}
	if dropped != nil {
		if _, err := r.ledger.Append(dropped); err != nil {
			return err
		}
	}
	return nil
}
