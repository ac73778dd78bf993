package pipeline

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/agent/provider"
	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/verify"
)

// TestPipelineWiresTemplateAndWindow: the repository's pull-request
// template shapes pr.md, and the Executor's per-model context window is
// the one the model loop runs with (its run_start says so). Each fails if
// its wiring from the Executor to report or to the loop is cut.
func TestPipelineWiresTemplateAndWindow(t *testing.T) {
	files := calcFiles(true)
	files[".github/agent.yml"] = cheapConfig
	files[".github/pull_request_template.md"] = "## Why reviewers should care\n\nSay why.\n\n## Summary\n\nWhat changed.\n"
	const window = 54_321
	res, out, _ := scenario{
		repo:  gitRepo(t, files),
		issue: agent.Issue{Title: "Add is wrong"},
		wire:  provider.NameOpenAI,
		turns: []pt.Turn{
			call("edit", `{"edits":[{"path":"calc.go","old_text":"return a - b","new_text":"return a + b"}]}`),
			call("finish", `{"summary":"Add adds."}`),
		},
		tune: func(e *Executor) { e.Window = provider.Window{Context: window} },
	}.run(t)
	if res.Outcome == verify.Error {
		t.Fatalf("outcome %s: %s", res.Outcome, res.Reason)
	}
	body := readBody(t, out)
	if !strings.Contains(body, "## Why reviewers should care") || !strings.Contains(body, "pull_request_template.md") {
		t.Errorf("pr.md does not follow the repository's template:\n%s", body)
	}
	log, err := ledger.ReadFile(filepath.Join(out, FileLedger))
	if err != nil {
		t.Fatal(err)
	}
	var start ledger.RunStart
	for _, r := range log.Records {
		if r.Type == ledger.TypeRunStart {
			if err := r.Decode(&start); err != nil {
				t.Fatal(err)
			}
		}
	}
	if start.Limits.ContextWindow != window {
		t.Errorf("the loop ran with a context window of %d, want the Executor's %d", start.Limits.ContextWindow, window)
	}
}
