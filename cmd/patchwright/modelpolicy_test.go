package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	pt "github.com/patchwright/patchwright/agent/provider/providertest"
)

// TestUnpricedModelRefusedAtStart: serve and worker refuse an operator's
// model (or a model of its fallback list) that has no price, as they
// refuse an installation's: cost caps need one. A price given in
// PATCHWRIGHT_PRICES, or a replay, starts.
func TestUnpricedModelRefusedAtStart(t *testing.T) {
	workerEnv(t, pt.New(t))
	t.Setenv("PATCHWRIGHT_WEBHOOK_SECRET", "s")
	os.Unsetenv("PATCHWRIGHT_PRICES")
	prices := filepath.Join(t.TempDir(), "prices.json")
	if err := os.WriteFile(prices, []byte(`{"openai:gpt-9-private": {"input": 1, "output": 2}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct{ model, prices, want string }{
		"priced":            {model: "openai:gpt-4.1"},
		"unpriced":          {model: "openai:gpt-9-private", want: `PATCHWRIGHT_MODEL: "openai:gpt-9-private" has no price in the price table`},
		"unpriced fallback": {model: "openai:gpt-4.1, anthropic:claude-9", want: `PATCHWRIGHT_MODEL: "anthropic:claude-9" has no price`},
		"priced by file":    {model: "openai:gpt-9-private", prices: prices},
		"replay":            {model: "replay:ledger.jsonl"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Setenv("PATCHWRIGHT_PRICES", c.prices)
			for _, command := range []string{"serve", "worker"} {
				_, err := parseConfig(command, []string{"--model", c.model}, io.Discard)
				if c.want == "" && err != nil {
					t.Errorf("%s --model %s: %v", command, c.model, err)
				}
				if c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want) || !strings.Contains(err.Error(), "PATCHWRIGHT_PRICES")) {
					t.Errorf("%s --model %s: %v; want %s…, naming PATCHWRIGHT_PRICES", command, c.model, err, c.want)
				}
			}
		})
	}
}

// TestPolicyModelsCheckedAtStart: an installation whose policy entry
// sets models: and whose models (its own, or the operator's) fall outside
// them stops serve and worker at start; what only an organisation's
// entry decides waits for the job (its login is not known before).
func TestPolicyModelsCheckedAtStart(t *testing.T) {
	workerEnv(t, pt.New(t))
	t.Setenv("PATCHWRIGHT_WEBHOOK_SECRET", "s")
	dir := t.TempDir()
	models := filepath.Join(dir, "models.yaml")
	if err := os.WriteFile(models, []byte("installations: {7: {model: anthropic:claude-sonnet-4-5, anthropic: {api_key: "+key8+"}}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct{ policy, want string }{
		"allowed":              {policy: "installations: {7: {models: [\"anthropic:*\"]}, 8: {models: [\"openai:gpt-4.1\"]}}"},
		"own model outside":    {policy: "installations: {7: {models: [\"openai:*\"]}}", want: `PATCHWRIGHT_INSTALLATION_MODELS: installation 7: model "anthropic:claude-sonnet-4-5" is not allowed by PATCHWRIGHT_POLICY_FILE's installation 7 (models: openai:*)`},
		"operator's outside":   {policy: "installations: {8: {models: [\"anthropic:*\"]}}", want: `PATCHWRIGHT_MODEL: model "openai:gpt-4.1" is not allowed by PATCHWRIGHT_POLICY_FILE's installation 8 (models: anthropic:*)`},
		"organisation decides": {policy: "organizations: {acme: {models: [\"google:*\"]}}"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			policy := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".yaml")
			if err := os.WriteFile(policy, []byte(c.policy+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, command := range []string{"serve", "worker"} {
				_, err := parseConfig(command, []string{"--installation-models", models, "--policy-file", policy}, io.Discard)
				if c.want == "" && err != nil {
					t.Errorf("%s: %v", command, err)
				}
				if c.want != "" && (err == nil || err.Error() != c.want) {
					t.Errorf("%s: %v; want %s", command, err, c.want)
				}
			}
		})
	}
}
