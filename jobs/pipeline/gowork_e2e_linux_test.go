//go:build e2e

package pipeline

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/agent/provider"
	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/sandbox/docker"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// TestGoWorkCannotSteerTheDownload: the change adds a go.work whose
// replace points example.com/textcase at a module path no go.mod or
// go.sum names (so the Go proxy rule, goproxy.go, never sees it), and
// touches go.mod, so dependency setup after the change runs the Go
// download. In workspace mode that download would ask the module proxy
// for the new path, carrying it off the machine; the download runs with
// GOWORK=off and asks for nothing (textcase is in the cache). Our image
// only: the public-shaped one runs the same go.
func TestGoWorkCannotSteerTheDownload(t *testing.T) {
	sandboxtest.EndToEnd(t)
	image := sandboxtest.Image(t)
	engine := sandboxtest.NewDocker(t, docker.Options{})
	vol := trustVolume(t)
	files := trustNames(fillTextcaseCache(t, engine, image, vol), "verify:\n  - name: test\n    run: go test ./...\n")
	delete(files, "Makefile")
	delete(files, "deps.sh")
	work := "go 1.22\n\nuse .\n\nreplace example.com/textcase v1.0.0 => leak.invalid/data v1.0.0\n"
	_, out, _ := scenario{
		repo: gitRepo(t, files), image: image, cacheVolume: vol,
		issue: agent.Issue{Title: "Badge names", Body: "Use a workspace."},
		wire:  provider.NameOpenAI,
		turns: []pt.Turn{
			call("write_file", `{"path":"go.work","content":`+jsonString(work)+`}`),
			call("read_file", `{"path":"go.mod"}`),
			call("write_file", `{"path":"go.mod","content":`+jsonString(files["go.mod"]+"// touched\n")+`}`),
			call("finish", `{"summary":"Added a workspace."}`),
		},
	}.run(t)
	log, err := ledger.ReadFile(filepath.Join(out, FileLedger))
	if err != nil {
		t.Fatal(err)
	}
	downloads := 0
	for _, rec := range log.Records {
		var c ledger.Command
		if rec.Type != ledger.TypeCommand || rec.Decode(&c) != nil || c.Tool != ToolDependencies {
			continue
		}
		downloads++
		if strings.Contains(c.Output, "leak.invalid") {
			t.Errorf("dependency setup's %q asked for the workspace's module:\n%s", c.Command, c.Output)
		}
	}
	if downloads == 0 {
		t.Fatalf("dependency setup after the change ran no command (else this test proves nothing)\n%s", readLedger(t, out))
	}
}
