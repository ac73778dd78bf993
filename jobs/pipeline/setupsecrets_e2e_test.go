package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/agent/provider"
	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/agent/secrets"
)

// TestPipelineSetupSecret: a setup-only secret reaches setup, which uses
// it (and even writes it into the tree and prints it), and nothing else:
// the agent's commands and the checks run without it, the file setup
// wrote it into is gone before the model can read it (setupscrub.go),
// what setup printed is withheld, and the ledger, result and body hold
// its name at most, never its value.
func TestPipelineSetupSecret(t *testing.T) {
	value := strings.Repeat("Zq7", 4) + "-registry-token"
	files := calcFiles(true)
	files[".github/agent.yml"] = `setup:
  - test -n "$REG_TOKEN" && echo "token=$REG_TOKEN" > .regrc && echo "setup has $REG_TOKEN"
verify:
  - name: no-secret
    run: echo "check sees [$REG_TOKEN]" && test -z "$REG_TOKEN"
`
	repo := gitRepo(t, files)
	res, out, _ := scenario{
		repo:  repo,
		issue: agent.Issue{Title: "Look", Body: "Look around."},
		wire:  provider.NameAnthropic,
		turns: []pt.Turn{
			call("run", `{"command":"echo \"agent sees [$REG_TOKEN]\""}`),
			call("read_file", `{"path":".regrc"}`),
			call("finish", `{"summary":"Looked."}`),
		},
		tune: func(e *Executor) {
			e.SetupSecrets = secrets.SetupSecrets{repo: {"REG_TOKEN": value}}
		},
	}.run(t)
	ledgerText := readLedger(t, out)
	for _, want := range []string{`agent sees []`, `"names":["REG_TOKEN"]`, secrets.RuleSetupSecret} {
		if !strings.Contains(ledgerText, want) {
			t.Errorf("the ledger has no %q", want)
		}
	}
	if strings.Contains(ledgerText, ledger.TypeSetupSecretsWithheld) || strings.Contains(res.Body, "without the setup-only secrets") {
		t.Error("the default branch's setup is said to have run without the secrets")
	}
	if len(res.Checks) != 2 {
		t.Errorf("checks %+v, want the baseline's and the final one", res.Checks)
	}
	for _, c := range res.Checks {
		if !c.Passed {
			t.Errorf("a check saw the secret: %+v", c)
		}
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(out, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), value) {
			t.Errorf("%s holds the setup secret's value", e.Name())
		}
	}
	if strings.Contains(res.Body, value) {
		t.Error("the body holds the setup secret's value")
	}
}
