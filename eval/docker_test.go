package eval

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/patchwright/patchwright/sandbox/docker"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// The Python and JavaScript starter tasks in the real sandbox: valid
// (hidden tests fail on the base commit and pass with fix.patch), and a
// run that makes the reference fix is resolved. The Go tasks run in the
// sandbox in eval/pipelinerun's and cmd/patchwright's end-to-end tests.
func TestStarterSuiteInTheSandbox(t *testing.T) {
	image := sandboxtest.Image(t)
	engine := sandboxtest.NewDocker(t, docker.Options{})
	all, err := Load(starterSuite(t), "")
	if err != nil {
		t.Fatal(err)
	}
	var tasks []*Task
	for _, task := range all {
		if task.Language != "go" {
			tasks = append(tasks, task)
		}
	}
	o := testOptions(t, &fakeRunner{t: t, act: applyFix}, engine)
	o.DefaultImage, o.Images = image, engine
	o.CacheVolume = func(*Task) string { return sandboxtest.CacheVolume }
	o.Concurrency = 2
	rep, err := Evaluate(context.Background(), tasks, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Invalid) != 0 {
		t.Fatalf("invalid in the sandbox: %+v", rep.Invalid)
	}
	for _, r := range rep.Results {
		if !r.Resolved {
			log, _ := os.ReadFile(filepath.Join(o.Out, "runs", r.Task, "1", FileHiddenLog))
			t.Errorf("%s: not resolved by its reference fix:\n%s", r.Task, log)
		}
	}
	if rep.Summary.Attempts != len(tasks) || len(tasks) < 8 {
		t.Errorf("%d attempts of %d tasks", rep.Summary.Attempts, len(tasks))
	}
}
