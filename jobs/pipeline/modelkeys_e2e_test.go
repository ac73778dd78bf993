package pipeline

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
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

// withInstallationKey runs on installation 7's own model and key.
func withInstallationKey(e *Executor) {
	e.ModelSource = "installation 7"
	e.ModelKeys = map[string]string{"installation 7's openai key": installationKey}
}

// TestInstallationKeyInToolOutput: the key sits in a file of the
// repository, and the model reads it with read_file and with a command:
// the ledger, result.json, the body, the run page and the log hold none
// of it.
func TestInstallationKeyInToolOutput(t *testing.T) {
	files := calcFiles(false)
	files[".github/agent.yml"] = cheapConfig
	files["notes.txt"] = "key: " + installationKey + "\n"
	_, out, logs := runLogged(t, scenario{
		repo:  gitRepo(t, files),
		issue: agent.Issue{Title: "Read the notes", Body: "What do the notes say?"},
		wire:  provider.NameOpenAI,
		tune:  withInstallationKey,
		turns: []pt.Turn{
			call("read_file", `{"path":"notes.txt"}`),
			call("run", `{"command":"cat notes.txt"}`),
			call("finish", `{"summary":"Read the notes."}`),
		},
	})
	noneHolds(t, outputs(t, out, logs), installationKey)
}

// refusedKey is an endpoint's answer quoting the key it refuses.
const refusedKey = `{"error":{"message":"Incorrect API key provided: ` + installationKey + `.","type":"invalid_request_error","code":"invalid_api_key"}}`

// TestInstallationKeyInProviderError: the installation's endpoint
// refuses the key and quotes it whole in its error: the run's error,
// its outputs and the log do not hold it.
func TestInstallationKeyInProviderError(t *testing.T) {
	files := calcFiles(false)
	files[".github/agent.yml"] = cheapConfig
	res, out, logs, err := runLoggedErr(t, scenario{
		repo:  gitRepo(t, files),
		issue: agent.Issue{Title: "Double is slow", Body: "Make Double faster."},
		wire:  provider.NameOpenAI,
		tune:  withInstallationKey,
		turns: []pt.Turn{pt.Status(401, refusedKey)},
	})
	texts := map[string]string{"the log": logs}
	if err != nil {
		texts["the error"] = err.Error()
	}
	// The worker words the status comment from the provider's error.
	if perr := (*provider.Error)(nil); errors.As(err, &perr) {
		texts["the provider's error"] = perr.Error()
	} else {
		t.Errorf("the run's error %v is not the provider's", err)
	}
	if res != nil {
		texts["the result's reason"] = res.Reason
	}
	for _, name := range []string{FileLedger, FileResult, FileBody} {
		if data, rerr := os.ReadFile(filepath.Join(out, name)); rerr == nil {
			texts[name] = string(data)
		}
	}
	if _, serr := os.Stat(filepath.Join(out, FileLedger)); serr == nil {
		texts["the run page"] = runPage(t, out)
	}
	if !strings.Contains(strings.Join(slices.Collect(maps.Values(texts)), "\n"), "401") {
		t.Errorf("nothing says the provider refused the key: %v", texts)
	}
	noneHolds(t, texts, installationKey)
}

// TestInstallationKeyInReviewError: the review model's endpoint refuses
// the key and quotes it: the failed review is said, without the key.
func TestInstallationKeyInReviewError(t *testing.T) {
	_, out, _ := reviewed{files: calcWith(nil), agent: documentAdd, review: []pt.Turn{pt.Status(401, refusedKey)},
		maxCost: 1, tune: withInstallationKey}.run(t)
	texts := outputs(t, out, "")
	if !strings.Contains(texts[FileLedger], "the review model failed") {
		t.Errorf("the ledger does not say the review failed:\n%s", texts[FileLedger])
	}
	noneHolds(t, texts, installationKey)
}
