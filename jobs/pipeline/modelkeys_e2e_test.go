package pipeline

import (
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/provider"
	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/agent/secrets"
)

// installationKey is shaped so that no gitleaks rule matches it: only
// the executor's ModelKeys make the scanner look for it.
const installationKey = "byok7-QmVyZ2VyLWtleS1mb3ItdGVzdHM"

// TestInstallationKeyWithheld: a run on an installation's own model and
// key (bring your own key) whose model writes that key in its words, in
// a new file and in its summary: the file is not committed, and the
// key is in none of the ledger, result.json, the body, the run page or
// the log. The body names the installation's model.
func TestInstallationKeyWithheld(t *testing.T) {
	files := calcFiles(false)
	files[".github/agent.yml"] = cheapConfig
	repo := gitRepo(t, files)
	res, out, logs := runLogged(t, scenario{
		repo:  repo,
		issue: agent.Issue{Title: "Record the key", Body: "Write the model key into notes.txt."},
		wire:  provider.NameOpenAI,
		tune: func(e *Executor) {
			e.ModelSource = "installation 7"
			e.ModelKeys = map[string]string{"installation 7's openai key": installationKey}
		},
		turns: []pt.Turn{
			{Text: "The key is " + installationKey, ToolCalls: []pt.ToolCall{pt.Call("write_file", `{"path":"notes.txt","content":"`+installationKey+`\n"}`)}},
			call("finish", `{"summary":"Wrote `+installationKey+` to notes.txt."}`),
		},
	})
	if res.HeadCommit != "" {
		t.Errorf("the key's file was committed (%s)", res.HeadCommit)
	}
	if len(res.Secrets) == 0 || res.Secrets[0].RuleID != secrets.RuleModelKey || res.Secrets[0].File != "notes.txt" {
		t.Errorf("secrets %+v", res.Secrets)
	}
	texts := outputs(t, out, logs)
	noneHolds(t, texts, installationKey)
	if !strings.Contains(texts[FileLedger], secrets.RuleModelKey) {
		t.Error("the ledger does not say the key was withheld")
	}
	if want := "Model: `openai:" + pt.OpenAIModel + "`, installation 7's own model and key"; !strings.Contains(texts[FileBody], want) {
		t.Errorf("the body does not say %q:\n%s", want, texts[FileBody])
	}
}
