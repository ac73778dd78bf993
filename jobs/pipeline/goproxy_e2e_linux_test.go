//go:build e2e

package pipeline

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/agent/provider"
	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/report"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
	"github.com/patchwright/patchwright/verify"
)

// TestGoModuleOnUnallowedHostIsNotFetched: the change needs
// example.com/textcase, served by a module proxy on the fake internet
// that the repository's network.allow names, but example.com itself is
// on no allowlist. A module proxy fetches from any origin, so dependency
// setup holds the module back (fetch_dependencies' and the one after the
// change): the proxy is never asked for it, the model and the body are
// told, the ledger's dependencies events list it, and the run, whose
// build cannot find the module, is unverified rather than failed.
// TestDependencySetupAfterTheChange, whose allowlist names example.com,
// is the same run with the module fetched.
//
// It runs on both image shapes: the module settings come from `go env` in
// the image (the public-shaped one sets GOPATH and runs as root).
func TestGoModuleOnUnallowedHostIsNotFetched(t *testing.T) {
	sandboxtest.EndToEnd(t)
	for name, image := range images {
		t.Run(name, func(t *testing.T) { goModuleHeld(t, image(t)) })
	}
}

func goModuleHeld(t *testing.T, image string) {
	data := filepath.Join("testdata", "go-deps")
	proxy, sum := newGoProxy(t, filepath.Join(data, "module"), "example.com/textcase", "v1.0.0")
	host := sandboxtest.FakeHost(t, proxy)
	url := "http://" + host
	files := map[string]string{
		".github/agent.yml": "setup:\n  - go env -w GOPROXY=" + url + " GOSUMDB=off && go mod download\n" +
			"network:\n  allow: ['" + host + "']\n" +
			"verify:\n  - name: test\n    run: go test ./...\n",
	}
	for _, name := range []string{"go.mod", "names.go", "names_test.go"} {
		b, err := os.ReadFile(filepath.Join(data, "repo", name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = string(b)
	}
	names := "package names\n\nimport \"example.com/textcase\"\n\n// Title formats a name for a badge.\nfunc Title(name string) string {\n\treturn textcase.Title(name)\n}\n"
	res, out, _ := scenario{
		repo:        gitRepo(t, files),
		image:       image,
		issue:       agent.Issue{Title: "Badges show names in lower case", Body: "Use example.com/textcase's Title for badge names."},
		wire:        provider.NameOpenAI,
		cacheVolume: fmt.Sprintf("patchwright-test-goproxy-%s-%d", strings.ReplaceAll(t.Name(), "/", "-"), os.Getpid()),
		turns: []pt.Turn{
			call("read_file", `{"path":"go.mod"}`),
			call("edit", `{"edits":[{"path":"go.mod","old_text":"go 1.22\n","new_text":"go 1.22\n\nrequire example.com/textcase v1.0.0\n"}]}`),
			call("write_file", `{"path":"go.sum","content":`+jsonString(sum)+`}`),
			call("read_file", `{"path":"names.go"}`),
			call("write_file", `{"path":"names.go","content":`+jsonString(names)+`}`),
			call("fetch_dependencies", `{}`),
			call("finish", `{"summary":"Title uses example.com/textcase."}`),
		},
	}.run(t)

	if res.Outcome != verify.Unverified || !strings.Contains(res.Reason, "example.com/textcase") {
		t.Fatalf("outcome %s (%s), want unverified naming the module held back\n%s", res.Outcome, res.Reason, readLedger(t, out))
	}
	for _, p := range proxy.paths() {
		if strings.Contains(p, "textcase") {
			t.Errorf("the module proxy was asked for the held module: %q", proxy.paths())
		}
	}
	log, err := ledger.ReadFile(filepath.Join(out, FileLedger))
	if err != nil {
		t.Fatal(err)
	}
	var fetchResult string
	var held [][]report.UnfetchedModule
	for _, rec := range log.Records {
		switch rec.Type {
		case ledger.TypeToolCall:
			var c ledger.ToolCall
			rec.Decode(&c)
			if c.Tool == "fetch_dependencies" {
				fetchResult = c.Result
			}
		case ledger.TypeDependencies:
			var d ledger.DependencyEvent
			if err := rec.Decode(&d); err != nil {
				t.Fatal(err)
			}
			held = append(held, d.NotFetched)
		}
	}
	if !strings.Contains(fetchResult, "not fetched: Go module example.com/textcase") {
		t.Errorf("fetch_dependencies did not tell the model:\n%s", fetchResult)
	}
	want := report.UnfetchedModule{Module: "example.com/textcase", Host: "example.com", Route: "proxy"}
	if len(held) != 2 || len(held[0]) != 1 || held[0][0] != want || len(held[1]) != 1 || held[1][0] != want {
		t.Errorf("dependencies events hold %+v, want %+v in both", held, want)
	}
	body := readBody(t, out)
	for _, s := range []string{"were not fetched", "`example.com/textcase`", "PATCHWRIGHT_GOPROXY_ANY_ORIGIN"} {
		if !strings.Contains(body, s) {
			t.Errorf("body lacks %q:\n%s", s, body)
		}
	}
}
