package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/jobs/pipeline"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
	"github.com/patchwright/patchwright/webhook/runpage"
)

var recordExample = flag.Bool("record-example", false, "record docs/examples/"+exampleTranscript+" again from the scripted run in TestRecordExampleTranscript")

// The example try.sh runs, relative to this package's directory.
const (
	examplesDir       = "../../docs/examples"
	exampleTranscript = "wordcount.transcript.jsonl"
	// scriptedModel is the model name the recording asks the scripted
	// server for: it is written into the transcript's run_start and
	// model_turn events, so the file itself says no model wrote it.
	scriptedModel = "openai:scripted-by-hand"
)

// exampleTurns are the model turns of the example's transcript, written by
// hand: a scripted run of the loop, not a model's output. They fix the
// bug the way the issue asks and exercise reading, editing, a command in
// the sandbox and finish. They leave out the verify tool: its result
// holds the in-loop findings, whose wording is not the example's to pin.
func exampleTurns() []pt.Turn {
	call := func(name, args string) pt.Turn { return pt.Calls(pt.Call(name, args)) }
	first := call("list_files", `{}`)
	first.Text = "Scripted turn: this transcript was written by hand and recorded through patchwright run with a scripted model server; no language model produced it."
	return []pt.Turn{
		first,
		call("read_file", `{"path":"wordcount.go"}`),
		call("read_file", `{"path":"wordcount_test.go"}`),
		call("edit", `{"edits":[{"path":"wordcount.go","old_text":"\tif s == \"\" {\n\t\treturn 0\n\t}\n\treturn len(strings.Split(s, \" \"))","new_text":"\treturn len(strings.Fields(s))"}]}`),
		call("run", `{"command":"go test ./...","timeout_s":600}`),
		call("finish", `{"summary":"Count split the text on single spaces, so leading, trailing and repeated spaces made empty words and tabs and newlines did not separate words. It now counts strings.Fields(s), which splits on any run of white space and gives 0 for empty or blank text. (A scripted summary, written by hand for the example transcript.)"}`),
	}
}

// exampleRepo is the example as try.sh sets it up: docs/examples/wordcount
// committed on main in a fresh repository.
func exampleRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(examplesDir, "wordcount"))); err != nil {
		t.Fatal(err)
	}
	gitCmd(t, dir, "init", "-q", "-b", "main")
	gitCmd(t, dir, "add", "-A")
	gitCmd(t, dir, "-c", "user.name=example", "-c", "user.email=example@example.com", "commit", "-qm", "wordcount: first version")
	volume := pipeline.RepoCacheVolume(dir)
	t.Cleanup(func() { exec.Command("docker", "volume", "rm", "-f", volume).Run() })
	return dir
}

type runOutput struct {
	code           int
	stdout, stderr string
	res            pipeline.Result
	raw            map[string]any
	body           string
	out            string // the --out directory
}

// runExample runs `patchwright run` on repo with the example's issue.
func runExample(t *testing.T, repo, model string) runOutput {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"run", "--repo", repo, "--issue-file", filepath.Join(examplesDir, "issue.md"),
		"--model", model, "--image", sandboxtest.Image(t), "--out", out}, &stdout, &stderr)
	o := runOutput{code: code, stdout: stdout.String(), stderr: stderr.String(), out: out}
	data, err := os.ReadFile(filepath.Join(out, pipeline.FileResult))
	if err != nil {
		t.Fatalf("exit %d, no result.json: %v\nstderr: %s", code, err, o.stderr)
	}
	if err := json.Unmarshal(data, &o.res); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &o.raw); err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile(filepath.Join(out, pipeline.FileBody))
	if err != nil {
		t.Fatal(err)
	}
	o.body = string(body)
	return o
}

// TestRecordExampleTranscript makes docs/examples' transcript: the example
// run through `patchwright run` with the scripted model server, its
// ledger kept. It only runs with -record-example.
func TestRecordExampleTranscript(t *testing.T) {
	if !*recordExample {
		t.Skip("records the example transcript again only with -record-example")
	}
	srv := pt.New(t, exampleTurns()...)
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "scripted")
	o := runExample(t, exampleRepo(t), scriptedModel)
	if o.code != 0 || o.res.Outcome != "verified" || srv.Remaining() != 0 {
		t.Fatalf("exit %d, outcome %s (%s), %d turns left\nstderr: %s", o.code, o.res.Outcome, o.res.Reason, srv.Remaining(), o.stderr)
	}
	ledger, err := os.ReadFile(filepath.Join(o.out, pipeline.FileLedger))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(examplesDir, exampleTranscript), ledger, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRunReplaysExample runs the example as try.sh does without a model:
// `patchwright run --model replay:FILE` with the real sandbox, baseline
// and final checks. The run is verified, and the terminal, result.json
// and the body each say that no model was called.
func TestRunReplaysExample(t *testing.T) {
	sandboxtest.EndToEnd(t)
	transcript := filepath.Join(examplesDir, exampleTranscript)
	repo := exampleRepo(t)
	o := runExample(t, repo, "replay:"+transcript)
	if o.code != 0 || o.res.Outcome != "verified" {
		t.Fatalf("exit %d, outcome %s (%s)\nstdout: %s\nstderr: %s", o.code, o.res.Outcome, o.res.Reason, o.stdout, o.stderr)
	}
	if o.raw["replayed_from"] != transcript || o.res.Steps != len(exampleTurns()) {
		t.Errorf("result.json: replayed_from %v, steps %d; want %q, %d", o.raw["replayed_from"], o.res.Steps, transcript, len(exampleTurns()))
	}
	if o.res.Usage.InputTokens != 0 || o.res.Usage.OutputTokens != 0 {
		t.Errorf("usage %+v: no model was called", o.res.Usage)
	}
	if want := "no model was called; the model turns were replayed from " + transcript; !strings.Contains(o.stdout, want) {
		t.Errorf("stdout lacks %q:\n%s", want, o.stdout)
	}
	if want := "no model will be called; the model turns come from " + transcript; !strings.Contains(o.stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, o.stderr)
	}
	if want := "No model was called for this run: the model's turns were replayed from `" + transcript + "`"; !strings.Contains(o.body, want) {
		t.Errorf("pr.md lacks %q:\n%s", want, o.body)
	}
	// The baseline failed and the final checks passed on the replayed
	// change, which is on the branch.
	var testRow string
	for _, line := range strings.Split(o.body, "\n") {
		if strings.HasPrefix(line, "| `test` |") {
			testRow = line
		}
	}
	if !strings.Contains(testRow, "❌") || !strings.Contains(testRow, "✅") {
		t.Errorf("test row %q does not show a baseline failure and a final pass", testRow)
	}
	if got := gitCmd(t, repo, "show", o.res.Branch+":wordcount.go"); !strings.Contains(got, "return len(strings.Fields(s))") {
		t.Errorf("wordcount.go on %s:\n%s", o.res.Branch, got)
	}
	if o.raw["patchwright_version"] != currentBuild().String() {
		t.Errorf("result.json: patchwright_version %v, want %q", o.raw["patchwright_version"], currentBuild().String())
	}
	checkRunPage(t, o)
}

// checkRunPage: the run's folder holds its run page, the events of the
// run shown as serve shows them: the checks as tables, the edit as a
// diff, the commands with their exit codes, and the body.
func checkRunPage(t *testing.T, o runOutput) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(o.out, runpage.FileName))
	if err != nil {
		t.Fatalf("no run page: %v", err)
	}
	page := string(b)
	for _, want := range []string{"<strong>verified</strong>", "<th>check</th>", "<td>test</td><td>baseline</td>",
		`<div class="add">&#43;	return len(strings.Fields(s))</div>`, "$ go test ./...", "Model turn 1", "<summary>pr.md</summary>"} {
		if !strings.Contains(page, want) {
			t.Errorf("run.html lacks %q", want)
		}
	}
	if !strings.Contains(o.stdout, runpage.FileName) {
		t.Errorf("the summary does not name run.html:\n%s", o.stdout)
	}
}

// TestRunReplayNoLongerApplies: on a repository where the recorded edit
// no longer fits, the replay stops at the turn whose result differs, with
// an error naming it; result.json says "error" and still says replay.
func TestRunReplayNoLongerApplies(t *testing.T) {
	sandboxtest.EndToEnd(t)
	transcript := filepath.Join(examplesDir, exampleTranscript)
	repo := exampleRepo(t)
	src := filepath.Join(repo, "wordcount.go")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(data), `if s == "" {`, `if len(s) == 0 {`, 1)
	if changed == string(data) {
		t.Fatal("the example changed: this test's edit does not apply")
	}
	os.WriteFile(src, []byte(changed), 0o644)
	gitCmd(t, repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qam", "another way to test for empty")

	o := runExample(t, repo, "replay:"+transcript)
	if o.code != 2 || o.res.Outcome != "error" || o.res.Branch != "" {
		t.Fatalf("exit %d, outcome %s, branch %q; want 2, error, none\nstderr: %s", o.code, o.res.Outcome, o.res.Branch, o.stderr)
	}
	// read_file of wordcount.go (turn 2) shows other text than recorded.
	for _, want := range []string{"transcript " + transcript + " no longer applies: recorded turn 2: the read_file call call_2 got a different result than recorded"} {
		if !strings.Contains(o.res.Reason, want) || !strings.Contains(o.stderr, want) {
			t.Errorf("reason and stderr should hold %q\nreason: %s\nstderr: %s", want, o.res.Reason, o.stderr)
		}
	}
	if o.raw["replayed_from"] != transcript || !strings.Contains(o.body, "No model was called for this run") {
		t.Errorf("the failed replay is not labelled: replayed_from %v\n%s", o.raw["replayed_from"], o.body)
	}
}

// TestRunReplayBadTranscript: a transcript that cannot be read is a usage
// error, before Docker.
func TestRunReplayBadTranscript(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"run", "--repo", userRepo(t), "--title", "x", "--out", t.TempDir(),
		"--model", "replay:" + filepath.Join(t.TempDir(), "absent.jsonl")}, &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "patchwright run: replay: open ledger:") || strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("exit %d, stderr %q; want 1 and one line about the ledger", code, stderr.String())
	}
}

// TestPrintResultReplay: a replay's summary opens with the label, and its
// result.json object carries replayed_from, which a model's run leaves out.
func TestPrintResultReplay(t *testing.T) {
	res := &pipeline.Result{Outcome: "verified", Reason: "all checks passed", ReplayedFrom: "t.jsonl"}
	var out bytes.Buffer
	printResult(&out, runOptions{out: "o"}, res)
	if first, _, _ := strings.Cut(out.String(), "\n"); first != "replay:  no model was called; the model turns were replayed from t.jsonl" {
		t.Errorf("first line %q", first)
	}
	for _, tc := range []struct {
		file string
		want any
	}{{"t.jsonl", "t.jsonl"}, {"", nil}} {
		out.Reset()
		res.ReplayedFrom = tc.file
		printResult(&out, runOptions{json: true}, res)
		var m map[string]any
		if err := json.Unmarshal(out.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		if got, ok := m["replayed_from"]; got != tc.want || ok != (tc.want != nil) {
			t.Errorf("replayed_from %q: result.json has %v", tc.file, got)
		}
	}
}

// TestTryScript runs docs/examples/try.sh as a new user would, without a
// model key, on the public-shaped test image: the local equivalent of
// docs/examples/Dockerfile (Debian with bash, git and Go only; no image
// can be pulled here). The run is verified and leaves its run page.
func TestTryScript(t *testing.T) {
	sandboxtest.EndToEnd(t)
	image := sandboxtest.PublicImage(t)
	t.Setenv("PATCHWRIGHT_MODEL", "")
	os.Unsetenv("PATCHWRIGHT_MODEL")
	out := filepath.Join(t.TempDir(), "out")
	cmd := exec.Command("bash", filepath.Join(examplesDir, "try.sh"), "--image", image, "--out", out)
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir()) // the script's copy of the example
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	t.Cleanup(func() {
		_, rest, _ := strings.Cut(stderr.String(), "example repository: ")
		if repo, _, ok := strings.Cut(rest, "\n"); ok {
			exec.Command("docker", "volume", "rm", "-f", pipeline.RepoCacheVolume(repo)).Run()
		}
	})
	if err != nil {
		t.Fatalf("try.sh: %v\nstdout: %s\nstderr: %s", err, stdout, stderr.String())
	}
	data, err := os.ReadFile(filepath.Join(out, pipeline.FileResult))
	if err != nil {
		t.Fatal(err)
	}
	var res pipeline.Result
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	if res.Outcome != "verified" || res.ReplayedFrom == "" {
		t.Errorf("outcome %s (%s), replayed from %q", res.Outcome, res.Reason, res.ReplayedFrom)
	}
	if _, err := os.Stat(filepath.Join(out, runpage.FileName)); err != nil {
		t.Errorf("no run page: %v", err)
	}
	for _, want := range []string{"no PATCHWRIGHT_MODEL: replaying", "run.html in a browser"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("try.sh's messages lack %q:\n%s", want, stderr.String())
		}
	}
}
