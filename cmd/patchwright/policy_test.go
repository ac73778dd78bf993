package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// PATCHWRIGHT_POLICY_FILE is read and checked at start by serve and
// worker alike: a bad file stops either with the file, key and line.
func TestPolicyFileSetting(t *testing.T) {
	os.Unsetenv("PATCHWRIGHT_POLICY_FILE")
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yml")
	bad := filepath.Join(dir, "bad.yml")
	if err := os.WriteFile(good, []byte("defaults: {open_network: false}\ninstallations: {7: {max_cost_usd: 1}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("defaults:\n  open_networks: false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := map[string][]string{
		"serve":  {"--webhook-secret", "s", "--app-id", "7", "--private-key", "k"},
		"worker": {"--app-id", "7", "--private-key", "k", "--redis-url", "redis://127.0.0.1:1", "--model", "openai:gpt-4.1"},
	}
	for command, base := range args {
		cfg, err := parseConfig(command, base, io.Discard)
		if err != nil || cfg.policy != nil {
			t.Fatalf("%s without a policy: %v, %v", command, cfg.policy, err)
		}
		cfg, err = parseConfig(command, append(base, "--policy-file", good), io.Discard)
		if err != nil || cfg.policy == nil {
			t.Fatalf("%s with a policy: %v", command, err)
		}
		if p, name := cfg.policy.For(7, "acme"); name != "installation 7" || p.MaxCostUSD != 1 || *p.OpenNetwork {
			t.Errorf("%s: policy for 7 = %+v %q", command, p, name)
		}
		_, err = parseConfig(command, append(base, "--policy-file", bad), io.Discard)
		if err == nil || !strings.HasPrefix(err.Error(), "PATCHWRIGHT_POLICY_FILE: policy file "+bad+": line 2: unknown key \"open_networks\"") {
			t.Errorf("%s with a bad policy: %v", command, err)
		}
		_, err = parseConfig(command, append(base, "--policy-file", filepath.Join(dir, "missing.yml")), io.Discard)
		if err == nil || !strings.Contains(err.Error(), "PATCHWRIGHT_POLICY_FILE") {
			t.Errorf("%s with a missing policy: %v", command, err)
		}
	}
}
