package eval

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/sandbox/docker"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// The Python and JavaScript starter tasks in the real sandbox: valid
// (hidden tests fail on the base commit and pass with fix.patch), and a
// run that makes the reference fix is resolved. The Go tasks run in the
// sandbox in eval/pipelinerun's and cmd/patchwright's end-to-end tests.
func TestStarterSuiteInTheSandbox(t *testing.T) {
	sandboxtest.EndToEnd(t)
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

// A SWE-bench instance end to end in the sandbox: the clone named
// owner__repo under --repos, test_patch as the hidden patch, and
// FAIL_TO_PASS and PASS_TO_PASS run as pytest node IDs.
func TestSWEBenchInstanceInTheSandbox(t *testing.T) {
	sandboxtest.EndToEnd(t)
	image := sandboxtest.Image(t)
	engine := sandboxtest.NewDocker(t, docker.Options{})
	dir := t.TempDir()
	repo := filepath.Join(dir, "repos", "acme__calc")
	writeFiles(t, repo, map[string]string{
		"calc.py":            "def add(a, b):\n    if b < 0:\n        return a\n    return a + b\n",
		"tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
	})
	runGit(t, repo, "init", "-q", "-b", "main")
	runGit(t, repo, "add", "-A")
	runGit(t, repo, "commit", "-q", "-m", "base")
	sha := runGit(t, repo, "rev-parse", "HEAD")
	testPatch := "diff --git a/tests/test_calc.py b/tests/test_calc.py\n--- a/tests/test_calc.py\n+++ b/tests/test_calc.py\n@@ -3,3 +3,7 @@ from calc import add\n \n def test_add():\n     assert add(2, 3) == 5\n+\n+\n+def test_add_negative():\n+    assert add(2, -3) == -1\n"
	line, _ := json.Marshal(map[string]any{
		"instance_id": "acme__calc-1", "repo": "acme/calc", "base_commit": sha,
		"problem_statement": "add() ignores negative numbers\n\nadd(2, -3) returns 2.", "test_patch": testPatch,
		"FAIL_TO_PASS": `["tests/test_calc.py::test_add_negative"]`, "PASS_TO_PASS": `["tests/test_calc.py::test_add"]`,
	})
	jsonl := filepath.Join(dir, "tasks.jsonl")
	os.WriteFile(jsonl, append(line, '\n'), 0o644)
	tasks, err := Load(jsonl, filepath.Join(dir, "repos"))
	if err != nil {
		t.Fatal(err)
	}
	fix := func(t *testing.T, req RunRequest, tree string) string {
		os.WriteFile(filepath.Join(tree, "calc.py"), []byte("def add(a, b):\n    return a + b\n"), 0o644)
		return "verified"
	}
	o := testOptions(t, &fakeRunner{t: t, act: fix}, engine)
	o.DefaultImage, o.Images = image, engine
	o.CacheVolume = func(*Task) string { return sandboxtest.CacheVolume }
	rep, err := Evaluate(context.Background(), tasks, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Invalid) != 0 || len(rep.Results) != 1 || !rep.Results[0].Resolved {
		log, _ := os.ReadFile(filepath.Join(o.Out, "runs", "acme__calc-1", "1", FileHiddenLog))
		t.Fatalf("invalid %+v results %+v\n%s", rep.Invalid, rep.Results, log)
	}
	log, _ := os.ReadFile(filepath.Join(o.Out, "runs", "acme__calc-1", "1", FileHiddenLog))
	for _, want := range []string{"PASSED tests/test_calc.py::test_add_negative", "PASSED tests/test_calc.py::test_add"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("hidden.log lacks %q:\n%s", want, log)
		}
	}
}
