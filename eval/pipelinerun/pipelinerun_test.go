package pipelinerun_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/patchwright/patchwright/agent/provider"
	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/eval"
	"github.com/patchwright/patchwright/eval/pipelinerun"
	"github.com/patchwright/patchwright/jobs/pipeline"
	"github.com/patchwright/patchwright/sandbox/docker"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// starterTasks copies the named starter tasks and materialises their
// repositories with testdata/eval/setup.sh.
func starterTasks(t *testing.T, ids ...string) string {
	t.Helper()
	src, err := filepath.Abs(filepath.Join("..", "..", "testdata", "eval"))
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "tasks")
	for _, id := range ids {
		if err := os.CopyFS(filepath.Join(dst, id), os.DirFS(filepath.Join(src, "tasks", id))); err != nil {
			t.Fatal(err)
		}
		os.RemoveAll(filepath.Join(dst, id, "repo"))
	}
	cmd := exec.Command("bash", filepath.Join(src, "setup.sh"))
	cmd.Env = append(os.Environ(), "EVAL_TASKS="+dst)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("setup.sh: %v\n%s", err, out)
	}
	return dst
}

func call(name string, args any) pt.Turn {
	data, _ := json.Marshal(args)
	return pt.Calls(pt.Call(name, string(data)))
}

type edit struct {
	Path    string `json:"path"`
	OldText string `json:"old_text"`
	NewText string `json:"new_text"`
}

func edits(e ...edit) map[string]any { return map[string]any{"edits": e} }

// The real pipeline, the real sandbox and a scripted model over the
// OpenAI wire, on a Go starter task run twice: the first run replays the
// reference fix through the tools, the second does nothing. Runs go in
// order with concurrency 1, so the script's turns are consumed in that
// order. (TestReferenceFixesThroughThePipeline replays twelve tasks'
// fixes, this one's among them; this test adds the run that changes
// nothing and the agreement of both outcomes.)
func TestPipelineOnStarterTasks(t *testing.T) {
	sandboxtest.EndToEnd(t)
	t.Parallel()
	image := sandboxtest.Image(t)
	engine := sandboxtest.NewDocker(t, docker.Options{})
	suite := starterTasks(t, "go-backoff-cap")

	nothing := call("finish", map[string]string{"summary": "I looked and found nothing to change."})
	srv := pt.New(t,
		// go-backoff-cap, run 1: the reference fix.
		call("read_file", map[string]string{"path": "retry/backoff.go"}),
		call("edit", edits(edit{"retry/backoff.go",
			"\td := Base << attempt\n\tif d > Max {\n\t\treturn Max\n\t}\n\treturn d",
			"\tif attempt < 0 {\n\t\tattempt = 0\n\t}\n\td := Base\n\tfor i := 0; i < attempt; i++ {\n\t\td *= 2\n\t\tif d >= Max {\n\t\t\treturn Max\n\t\t}\n\t}\n\treturn d"})),
		call("finish", map[string]string{"summary": "Stop doubling once Max is reached."}),
		// go-backoff-cap, run 2: nothing.
		nothing,
	)
	prov, err := provider.New("openai:"+pt.OpenAIModel, srv.Options(provider.NameOpenAI))
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := eval.Load(suite, "")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	rep, err := eval.Evaluate(context.Background(), tasks, eval.Options{
		Model:        "openai:" + pt.OpenAIModel,
		Runner:       &pipelinerun.Runner{Base: pipeline.Executor{Provider: prov, Sandboxes: engine, Images: engine, DefaultImage: image}},
		Sandboxes:    engine,
		Runs:         2,
		Out:          out,
		Image:        image,
		DefaultImage: image,
		CacheVolume:  func(*eval.Task) string { return sandboxtest.CacheVolume },
		Cost:         func(u provider.Usage) (float64, bool) { return provider.Cost("openai:"+pt.OpenAIModel, u) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Invalid) != 0 {
		t.Fatalf("invalid: %+v", rep.Invalid)
	}
	if srv.Remaining() != 0 {
		t.Errorf("%d scripted turns were not used", srv.Remaining())
	}
	want := map[int]struct {
		outcome  string
		resolved bool
	}{1: {"verified", true}, 2: {"no_change", false}}
	for _, r := range rep.Results {
		w := want[r.Run]
		if r.Outcome != w.outcome || r.Resolved != w.resolved || r.HiddenPassed != w.resolved {
			log, _ := os.ReadFile(filepath.Join(out, "runs", r.Task, "1", eval.FileHiddenLog))
			t.Errorf("%s run %d: %+v, want outcome %s resolved %v\n%s", r.Task, r.Run, r, w.outcome, w.resolved, log)
		}
		for _, f := range []string{"pr.md", "result.json", "ledger.jsonl", eval.FileHiddenLog} {
			if _, err := os.Stat(filepath.Join(out, "runs", r.Task, string(rune('0'+r.Run)), f)); err != nil {
				t.Errorf("%s run %d: %v", r.Task, r.Run, err)
			}
		}
	}
	s := rep.Summary
	if s.Attempts != 2 || s.Resolved != 1 || s.VerifiedAgreement != (eval.Agreement{TruePos: 1, TrueNeg: 1}) {
		t.Errorf("summary %+v agreement %+v", s.Group, s.VerifiedAgreement)
	}
	if err := eval.WriteOutputs(out, rep); err != nil {
		t.Fatal(err)
	}
}
