package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/eval"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

func runArgs(args ...string) (int, string, string) {
	var stdout, stderr strings.Builder
	code := run(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestEvalBadUsage(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad")
	os.MkdirAll(bad, 0o755)
	os.WriteFile(filepath.Join(bad, "task.yml"), []byte("repo: ./repo\ncolour: blue\n"), 0o644)
	os.WriteFile(filepath.Join(bad, "issue.md"), []byte("# t\n"), 0o644)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"eval"}, "--tasks is required"},
		{[]string{"eval", "--tasks", dir, "--model", "openai:gpt-4.1", "--runs", "0"}, "--runs 0"},
		{[]string{"eval", "--tasks", dir, "--model", "openai:gpt-4.1", "--concurrency", "-1"}, "--concurrency -1"},
		{[]string{"eval", "--tasks", dir, "--model", "openai:gpt-4.1", "extra"}, "unexpected arguments"},
		{[]string{"eval", "--tasks", dir, "--model", " "}, "no model"},
		{[]string{"eval", "--tasks", filepath.Join(dir, "missing"), "--model", "openai:gpt-4.1"}, "no such file"},
		{[]string{"eval", "--tasks", bad, "--model", "openai:gpt-4.1"}, "field colour not found"},
		{[]string{"eval", "--tasks", filepath.Join(bad, "task.yml"), "--model", "openai:gpt-4.1"}, "needs --repos"},
		{[]string{"eval", "--no-such-flag"}, "flag provided but not defined"},
		{[]string{"eval", "compare", "a.json"}, "want two eval.json files"},
		{[]string{"eval", "compare", filepath.Join(dir, "x.json"), filepath.Join(dir, "y.json")}, "no such file"},
	}
	for _, c := range cases {
		code, _, stderr := runArgs(c.args...)
		if code != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 1 and %q", c.args, code, stderr, c.want)
		}
	}
}

func writeEvalJSON(t *testing.T, dir, model string, resolved []bool) string {
	t.Helper()
	rep := &eval.Report{Model: model, RunsPerTask: 1, Tasks: len(resolved), Invalid: []eval.Invalid{}}
	for i, r := range resolved {
		rep.Results = append(rep.Results, eval.Result{Task: fmt.Sprintf("t%02d", i), Run: 1, Resolved: r, Outcome: "verified"})
	}
	data, _ := json.Marshal(rep)
	p := filepath.Join(dir, model+".json")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestEvalCompare(t *testing.T) {
	dir := t.TempDir()
	// 11 discordant pairs, 8 to 3: p ≈ 0.227.
	var a, b []bool
	for i := range 20 {
		a = append(a, i < 5 || (i >= 5 && i < 13))
		b = append(b, i < 5 || (i >= 13 && i < 16))
	}
	pa, pb := writeEvalJSON(t, dir, "a", a), writeEvalJSON(t, dir, "b", b)
	plot := filepath.Join(dir, "both.svg")
	code, stdout, stderr := runArgs("eval", "compare", "--plot", plot, pa, pb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"discordant pairs: 11 (A only 8, B only 3)", "p = 0.2266", "verdict: not distinguishable from noise"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if svg, err := os.ReadFile(plot); err != nil || !strings.Contains(string(svg), "<svg") {
		t.Errorf("plot: %v", err)
	}
	// 10 to 0 is significant.
	var c []bool
	for i := range 20 {
		c = append(c, i < 15)
	}
	pc := writeEvalJSON(t, dir, "c", c)
	pd := writeEvalJSON(t, dir, "d", append(append([]bool{}, c[:5]...), make([]bool, 15)...))
	if code, stdout, _ := runArgs("eval", "compare", pd, pc); code != 0 || !strings.Contains(stdout, "verdict: B resolves more than A: significant") {
		t.Errorf("exit %d:\n%s", code, stdout)
	}
}

// TestEvalEndToEnd drives `patchwright eval` on one starter task (shipped
// as src/, without setup.sh) with the real pipeline and sandbox and a
// scripted model that makes the reference fix through the tools.
func TestEvalEndToEnd(t *testing.T) {
	sandboxtest.EndToEnd(t)
	image := sandboxtest.Image(t)
	src, _ := filepath.Abs(filepath.Join("..", "..", "testdata", "eval", "tasks", "go-lru-get-refreshes"))
	tasks := filepath.Join(t.TempDir(), "tasks")
	if err := os.CopyFS(filepath.Join(tasks, "go-lru-get-refreshes"), os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(tasks, "go-lru-get-refreshes", "repo"))
	call := func(name, args string) pt.Turn { return pt.Calls(pt.Call(name, args)) }
	srv := pt.New(t,
		call("read_file", `{"path":"cache/lru.go"}`),
		call("edit", `{"edits":[{"path":"cache/lru.go","old_text":"\t\treturn 0, false\n\t}\n\treturn el.Value","new_text":"\t\treturn 0, false\n\t}\n\tc.order.MoveToFront(el)\n\treturn el.Value"}]}`),
		call("finish", `{"summary":"Get now marks the entry as recently used."}`),
	)
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "test-key")
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runArgs("eval", "--tasks", tasks, "--model", "openai:"+pt.OpenAIModel, "--image", image, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "resolved 1 of 1 attempts: 100.0% (95% interval 20.7%-100.0%); 0 of 1 tasks invalid") {
		t.Errorf("stdout: %s", stdout)
	}
	if !strings.Contains(stderr, "eval: 1/1 tasks done · run 1/1 · 1 resolved · $") {
		t.Errorf("progress: %s", stderr)
	}
	rep, err := eval.ReadReport(filepath.Join(out, eval.FileJSON))
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Results[0]
	if !r.Resolved || r.Outcome != "verified" || r.Steps != 3 || r.CostUSD == nil || rep.Summary.CostUSD == nil {
		t.Errorf("result %+v", r)
	}
	for _, f := range []string{eval.FileReport, eval.FilePlot, "runs/go-lru-get-refreshes/1/pr.md", "runs/go-lru-get-refreshes/1/result.json",
		"runs/go-lru-get-refreshes/1/ledger.jsonl", "runs/go-lru-get-refreshes/1/hidden.log"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat(filepath.Join(src, "repo", "cache", "lru_hidden_test.go")); err == nil {
		t.Error("the hidden test was written into the suite's repository")
	}
}
