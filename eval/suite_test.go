package eval

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// starterSuite copies testdata/eval/tasks to a temporary directory and
// materialises its repositories there with testdata/eval/setup.sh, which
// fails when a commit's SHA differs from its task.yml.
func starterSuite(t *testing.T) string {
	t.Helper()
	src, err := filepath.Abs(filepath.Join("..", "testdata", "eval"))
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "tasks")
	if err := os.CopyFS(dst, os.DirFS(filepath.Join(src, "tasks"))); err != nil {
		t.Fatal(err)
	}
	for _, repo := range must(filepath.Glob(filepath.Join(dst, "*", "repo"))) {
		os.RemoveAll(repo) // a materialised copy in the source tree
	}
	cmd := exec.Command("bash", filepath.Join(src, "setup.sh"))
	cmd.Env = append(os.Environ(), "EVAL_TASKS="+dst)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("setup.sh: %v\n%s", err, out)
	}
	return dst
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestStarterSuiteLoads(t *testing.T) {
	tasks, err := Load(starterSuite(t), "")
	if err != nil {
		t.Fatal(err)
	}
	langs := map[string]int{}
	cats := map[string]int{}
	for _, task := range tasks {
		langs[task.Language]++
		cats[task.Category]++
		if len(task.FixPatch) == 0 || task.HiddenFiles == nil || task.ExistingTests == "" {
			t.Errorf("%s: want a fix.patch, hidden files and existing tests", task.ID)
		}
	}
	if len(tasks) < 12 || langs["go"] < 4 || langs["python"] < 4 || langs["javascript"] < 4 || cats["feature"] < 3 {
		t.Errorf("%d tasks, languages %v, categories %v", len(tasks), langs, cats)
	}
}

// The Go starter tasks on the host's Go toolchain (no Docker): valid, and
// their reference fixes resolve them. The Python and JavaScript tasks are
// checked in the sandbox (TestStarterSuiteInTheSandbox), and twelve of the
// thirteen through the whole pipeline in eval/pipelinerun.
func TestGoStarterTasksOnTheHost(t *testing.T) {
	sandboxtest.EndToEnd(t)
	if testing.Short() {
		t.Skip("runs the Go starter tasks' tests with the host's go (skipped with -short)")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs go on PATH")
	}
	all, err := Load(starterSuite(t), "")
	if err != nil {
		t.Fatal(err)
	}
	var tasks []*Task
	for _, task := range all {
		if task.Language == "go" {
			tasks = append(tasks, task)
		}
	}
	o := testOptions(t, &fakeRunner{t: t, act: applyFix}, &hostSandboxes{})
	o.Concurrency = 2
	rep, err := Evaluate(context.Background(), tasks, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Invalid) != 0 {
		t.Fatalf("invalid starter tasks: %+v", rep.Invalid)
	}
	if s := rep.Summary; s.Resolved != len(tasks) || s.Attempts != len(tasks) || len(tasks) < 4 {
		var failed []string
		for _, r := range rep.Results {
			if !r.Resolved {
				log, _ := os.ReadFile(filepath.Join(o.Out, "runs", r.Task, "1", FileHiddenLog))
				failed = append(failed, r.Task+":\n"+string(log))
			}
		}
		t.Fatalf("reference fixes resolved %d of %d:\n%s", s.Resolved, len(tasks), strings.Join(failed, "\n"))
	}
}

// Without setup.sh, a task's src/ is made into the same commit in the
// work directory, and the suite's directory is not written to.
func TestStarterSuiteWithoutSetup(t *testing.T) {
	src, _ := filepath.Abs(filepath.Join("..", "testdata", "eval", "tasks", "go-lru-get-refreshes"))
	dir := filepath.Join(t.TempDir(), "go-lru-get-refreshes")
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(dir, "repo"))
	task, err := LoadTaskDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	e := &evaluator{work: t.TempDir()}
	p := &prepared{task: task, repo: task.Repo}
	if reason := e.openRepo(context.Background(), p, t.TempDir()); reason != "" {
		t.Fatalf("openRepo: %s", reason)
	}
	if _, err := os.Stat(filepath.Join(dir, "repo")); err == nil {
		t.Error("the suite's directory was written to")
	}
	// An edited src/ no longer matches task.yml's commit.
	os.WriteFile(filepath.Join(dir, "src", "go.mod"), []byte("module example.com/other\n"), 0o644)
	e = &evaluator{work: t.TempDir()}
	p = &prepared{task: task, repo: task.Repo}
	if reason := e.openRepo(context.Background(), p, t.TempDir()); !strings.Contains(reason, "but task.yml says "+task.Commit) {
		t.Errorf("reason %q", reason)
	}
}
