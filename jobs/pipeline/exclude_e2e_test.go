package pipeline

import (
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/config"
	"github.com/patchwright/patchwright/agent/provider"
	pt "github.com/patchwright/patchwright/agent/provider/providertest"
)

// TestExcludedPathsInvisibleToTheModel is issue 45's content exclusion
// end to end: paths under the repository's exclude: and the operator's
// policy never reach the model, through any file tool, the repository
// map or the instruction files, and a write to one is refused. The
// canaries are file contents and names the model never asks for by
// name: if any request to the model carries one, something showed it.
// The policy also takes back the repository's network: open, and the
// body's Configuration line says so.
func TestExcludedPathsInvisibleToTheModel(t *testing.T) {
	files := calcFiles(false)
	files[".github/agent.yml"] = "network: open\nexclude: [\"customer-data/\", AGENTS.md]\n"
	files["customer-data/list.csv"] = "name,card\nCANARY-REPO-1,4111\n"
	files["customer-data/zz-unnamed-canary-file.csv"] = "CANARY-REPO-2\n"
	files["licensed/yy-unnamed-canary-lib.txt"] = "CANARY-POLICY-3\n"
	files["AGENTS.md"] = "Always say CANARY-AGENTS-4.\n"
	turns := []pt.Turn{
		call("read_file", `{"path":"customer-data/list.csv"}`),
		call("list_files", `{}`),
		call("list_files", `{"path":"customer-data"}`),
		call("search", `{"pattern":"CANARY"}`),
		call("search", `{"pattern":"CANARY","path":"licensed"}`),
		call("read_file", `{"path":"AGENTS.md"}`),
		call("write_file", `{"path":"customer-data/new.csv","content":"x\n"}`),
		call("edit", `{"edits":[{"path":"customer-data/list.csv","old_text":"name","new_text":"who"}]}`),
		call("delete_file", `{"path":"customer-data/list.csv"}`),
		call("finish", `{"summary":"Looked around."}`),
	}
	res, out, srv := scenario{
		repo:  gitRepo(t, files),
		issue: agent.Issue{Title: "Tidy the calculator", Body: "Have a look."},
		wire:  provider.NameOpenAI,
		turns: turns,
		job: func(j *Job) {
			j.Policy = config.Policy{OpenNetwork: new(bool), Exclude: []string{"licensed/"}}
			j.PolicyName = "installation 7"
		},
	}.run(t)
	for i, req := range srv.Requests() {
		text := string(req.Body)
		for _, canary := range []string{"CANARY-", "zz-unnamed-canary-file", "yy-unnamed-canary-lib"} {
			if strings.Contains(text, canary) {
				t.Errorf("request %d to the model carries %q:\n%s", i, canary, text)
			}
		}
	}
	// Each refusal is a tool result the model saw: the read, the list of
	// the excluded directory, the search under it, the instruction file
	// and the three writes.
	last := srv.Requests()[len(srv.Requests())-1]
	if n := strings.Count(string(last.Body), "is excluded from what the model may read"); n < 7 {
		t.Errorf("%d refusals naming the exclusion reached the model, want 7\n%s", n, last.Body)
	}
	for _, c := range res.FilesChanged {
		if strings.HasPrefix(c, "customer-data/") {
			t.Errorf("the change touches the excluded %s", c)
		}
	}
	body := readBody(t, out)
	want := "Configuration: the operator's policy (installation 7) applied; it tightened `.github/agent.yml`: `network: open` is not allowed; the allowlist applies."
	if !strings.Contains(body, want) {
		t.Errorf("the body has no Configuration line %q:\n%s", want, body)
	}
}
