package pipeline

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent/config"
	"github.com/patchwright/patchwright/sandbox/egress"
	"github.com/patchwright/patchwright/verify"
)

// TestEgressSpec: the allowlist is the detected ecosystems' registries,
// Debian, the operator's list and the repository's; network: open drops
// it only where the operator allows open networks.
func TestEgressSpec(t *testing.T) {
	r := &run{
		e: &Executor{EgressAllow: []string{"proxy.corp.example"}},
		clone: cloneResult{
			cfg:       config.Config{Egress: config.Egress{Allow: []string{"git.corp.example:8443"}}},
			detection: verify.Detection{Languages: []string{"go", "python"}},
		},
	}
	spec := r.egressSpec()
	if spec == nil {
		t.Fatal("no allowlist")
	}
	want := []string{"deb.debian.org", "files.pythonhosted.org", "git.corp.example:8443", "proxy.corp.example", "proxy.golang.org", "pypi.org", "sum.golang.org"}
	if !slices.Equal(spec.Allow, want) || spec.Phase != "setup" {
		t.Errorf("allowlist %v (phase %s), want %v", spec.Allow, spec.Phase, want)
	}
	if slices.Contains(spec.Allow, "registry.npmjs.org") {
		t.Error("npm allowed for a repository without Node")
	}
	r.clone.cfg.Egress.Open = true
	if r.egressSpec() == nil {
		t.Error("network: open honoured without the operator's leave")
	}
	r.e.AllowOpenNetwork = true
	if r.egressSpec() != nil {
		t.Error("network: open with the operator's leave still has an allowlist")
	}
	r.clone.cfg.Egress.Open = false
	if r.egressSpec() == nil {
		t.Error("the operator's leave opened a repository that did not ask")
	}
}

// TestRefusalsBounded: past maxRefusals, or maxRefusalBytes, refusals are
// counted, not kept; the summary counts them and their hosts (at most
// maxDroppedHosts of them), and is given once per growth.
func TestRefusalsBounded(t *testing.T) {
	var f refusals
	for i := range maxRefusals + 150 {
		f.add(egress.Refusal{Host: fmt.Sprintf("h%d.example", i%3), Port: 1000 + i, Phase: "setup", Reason: "bypassed the proxy: UDP"})
	}
	kept, dropped := f.unrecorded()
	if len(kept) != maxRefusals || dropped == nil || dropped.Count != 150 || dropped.Hosts != 3 || dropped.HostsAtLeast {
		t.Fatalf("kept %d, dropped %+v; want %d kept, 150 dropped to 3 hosts", len(kept), dropped, maxRefusals)
	}
	if s := droppedSummary(*dropped); s != "and 150 more refusals to 3 hosts, past the run's bound and not recorded one by one" {
		t.Errorf("summary %q", s)
	}
	if kept, again := f.unrecorded(); len(kept) != 0 || again != nil {
		t.Errorf("second call: %d refusals, summary %+v; want nothing new", len(kept), again)
	}
	for i := range maxDroppedHosts + 10 {
		f.add(egress.Refusal{Host: fmt.Sprintf("x%d.example", i), Port: 53})
	}
	if _, d := f.unrecorded(); d == nil || d.Count != 150+maxDroppedHosts+10 || d.Hosts != maxDroppedHosts || !d.HostsAtLeast ||
		!strings.Contains(droppedSummary(*d), "at least 1000 hosts") {
		t.Errorf("after more hosts than the bound: %+v", d)
	}
	if all, d := f.list(); len(all) != maxRefusals || d == nil {
		t.Errorf("list: %d refusals, summary %+v", len(all), d)
	}

	// Bytes: a refusal's command counts.
	var g refusals
	big := strings.Repeat("x", 10<<10)
	for range 20 {
		g.add(egress.Refusal{Host: "h", Port: 1, Command: big})
	}
	kept, dropped = g.unrecorded()
	if want := maxRefusalBytes / (10<<10 + refusalOverheadB + 1); len(kept) != want || dropped == nil || dropped.Count != 20-want {
		t.Errorf("10 KiB refusals: kept %d, dropped %+v; want %d kept", len(kept), dropped, want)
	}
}
