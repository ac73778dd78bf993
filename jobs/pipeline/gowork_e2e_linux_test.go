//go:build e2e

package pipeline

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/agent/provider"
	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/sandbox/docker"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
	"github.com/patchwright/patchwright/verify"
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

// TestGoWorkCannotSteerTheChecks: the model breaks Title and adds a
// go.work that uses a directory holding its own example.com/textcase,
// whose Title changes nothing: in workspace mode the test's dependency is
// that copy, and `go test` passes on the broken code (the model's own run
// shows it). The cloned commit tracks no go.work, so the final checks run
// with GOWORK=off (checksEnv), against the real module in the cache, and
// the run fails. (Without GOWORK=off the checks pass, and only the
// harness rule, testsrc, keeps the run from verified: this test asks for
// failed, so it fails then.) On both image shapes.
func TestGoWorkCannotSteerTheChecks(t *testing.T) {
	sandboxtest.EndToEnd(t)
	for _, image := range []string{sandboxtest.Image(t), sandboxtest.PublicImage(t)} {
		t.Run(filepath.Base(strings.Split(image, ":")[0]), func(t *testing.T) {
			engine := sandboxtest.NewDocker(t, docker.Options{})
			vol := trustVolume(t)
			files := trustNames(fillTextcaseCache(t, engine, image, vol), "verify:\n  - name: test\n    run: go test ./...\n")
			delete(files, "Makefile")
			delete(files, "deps.sh")
			res, out, _ := scenario{
				repo: gitRepo(t, files), image: image, cacheVolume: vol,
				issue: agent.Issue{Title: "Badge names", Body: "Simplify Title."},
				wire:  provider.NameOpenAI,
				turns: []pt.Turn{
					call("read_file", `{"path":"names.go"}`),
					call("write_file", `{"path":"names.go","content":`+jsonString(namesGo("name"))+`}`),
					call("write_file", `{"path":"go.work","content":"go 1.22\n\nuse (\n\t.\n\t./textcase\n)\n"}`),
					call("write_file", `{"path":"textcase/go.mod","content":"module example.com/textcase\n\ngo 1.22\n"}`),
					call("write_file", `{"path":"textcase/textcase.go","content":"package textcase\n\nfunc Title(s string) string { return s }\n"}`),
					call("run", `{"command":"go test ./...","timeout_s":900}`),
					call("finish", `{"summary":"Title is simpler; go test passes."}`),
				},
			}.run(t)
			runs := toolResults(t, out, "run")
			if len(runs) != 1 || !strings.Contains(runs[0], "exit code 0") {
				t.Fatalf("the model's go test %q: want it to pass in workspace mode (else this test proves nothing)", runs)
			}
			if !slices.Contains(res.FilesChanged, "go.work") {
				t.Fatalf("files changed %v lack go.work: the final checks never saw it (else this test proves nothing)", res.FilesChanged)
			}
			if res.Outcome != verify.Failed {
				t.Fatalf("outcome %s (%s), want failed: the final go test must ignore the change's go.work\n%s", res.Outcome, res.Reason, readLedger(t, out))
			}
		})
	}
}
