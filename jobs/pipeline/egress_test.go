package pipeline

import (
	"slices"
	"testing"

	"github.com/patchwright/patchwright/agent/config"
	"github.com/patchwright/patchwright/agent/verify"
)

// TestEgressSpec: the allowlist is the detected ecosystems' registries,
// Debian, the operator's list and the repository's; network: open drops
// it only where the operator allows open networks.
func TestEgressSpec(t *testing.T) {
	r := &run{
		e:         &Executor{EgressAllow: []string{"proxy.corp.example"}},
		cfg:       config.Config{Egress: config.Egress{Allow: []string{"git.corp.example:8443"}}},
		detection: verify.Detection{Languages: []string{"go", "python"}},
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
	r.cfg.Egress.Open = true
	if r.egressSpec() == nil {
		t.Error("network: open honoured without the operator's leave")
	}
	r.e.AllowOpenNetwork = true
	if r.egressSpec() != nil {
		t.Error("network: open with the operator's leave still has an allowlist")
	}
	r.cfg.Egress.Open = false
	if r.egressSpec() == nil {
		t.Error("the operator's leave opened a repository that did not ask")
	}
}
