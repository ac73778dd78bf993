package agent

// Tests of what the model is sent when the repository holds secrets: the
// real tool set over a real work tree, commands run by a real shell, and
// the scripted model server at the wire level, whose received bodies are
// searched for the secret.

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/agent/provider"
	"github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/agent/tools"
	"github.com/patchwright/patchwright/sandbox"
)

// Built from parts so that secret scanners do not flag this file: a key
// gitleaks' aws-access-token rule matches, and a password no rule matches.
var (
	leakKey      = "AKIA" + "Z7QX3MPL4VNR2KDW"
	leakPassword = "hunter" + "2-correct-horse"
)

// shellSandbox runs each command with /bin/sh in the work tree on this
// machine: real cat, real ln, without Docker. Only what the loop records
// matters here; the sandbox's own isolation is sandbox/docker's to test.
type shellSandbox struct{ dir string }

func (s *shellSandbox) Exec(ctx context.Context, cmd sandbox.Command) (sandbox.Result, error) {
	var out, errb bytes.Buffer
	c := exec.CommandContext(ctx, "/bin/sh", "-c", cmd.Script)
	c.Dir, c.Stdout, c.Stderr = s.dir, &out, &errb
	start := time.Now()
	err := c.Run()
	res := sandbox.Result{Duration: time.Since(start),
		Stdout: sandbox.Output{Head: out.Bytes(), Total: int64(out.Len()), SHA256: "stdout"},
		Stderr: sandbox.Output{Head: errb.Bytes(), Total: int64(errb.Len()), SHA256: "stderr"}}
	if ee, ok := err.(*exec.ExitError); ok {
		res.ExitCode, err = ee.ExitCode(), nil
	}
	return res, err
}
func (s *shellSandbox) DisableNetwork(context.Context) error { return nil }
func (s *shellSandbox) ID() string                           { return "shell" }
func (s *shellSandbox) Close() error                         { return nil }

type leakRun struct {
	dir    string
	ledger string
	srv    *providertest.Server
	cfg    Config
}

// newLeakRun makes a work tree with files, the real tools over it and a
// ledger file, and scripts the model with turns.
func newLeakRun(t *testing.T, wire string, files map[string]string, turns ...providertest.Turn) *leakRun {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := sandbox.OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	set, err := tools.New(tools.Options{Workspace: ws, Sandbox: &shellSandbox{dir: dir}, Verifier: noChecks{}})
	if err != nil {
		t.Fatal(err)
	}
	r := &leakRun{dir: dir, ledger: filepath.Join(t.TempDir(), "ledger.jsonl"), srv: providertest.New(t, turns...)}
	lw, err := ledger.Create(r.ledger, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lw.Close() })
	p := r.srv.OpenAI(t)
	if wire == provider.NameAnthropic {
		p = r.srv.Anthropic(t)
	}
	r.cfg = Config{Provider: p, Tools: set.Tools(), Ledger: lw, Workspace: ws,
		Issue: Issue{Number: 9, Title: "Print the configuration", Body: "Show what .env holds."}}
	return r
}

// noLeak fails the test when a request body the server received, or the
// ledger file, holds the key or the password.
func (r *leakRun) noLeak(t *testing.T) {
	t.Helper()
	for i, req := range r.srv.Requests() {
		if bytes.Contains(req.Body, []byte(leakKey)) || bytes.Contains(req.Body, []byte(leakPassword)) {
			t.Errorf("request %d sent the secret to the model", i+1)
		}
	}
	data, err := os.ReadFile(r.ledger)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(leakKey)) || bytes.Contains(data, []byte(leakPassword)) {
		t.Error("the ledger holds the secret")
	}
}

// toolCalls are the ledger's tool_call records.
func (r *leakRun) toolCalls(t *testing.T) []ledger.ToolCall {
	t.Helper()
	log, err := ledger.ReadFile(r.ledger)
	if err != nil {
		t.Fatal(err)
	}
	var out []ledger.ToolCall
	for _, rec := range log.Records {
		if rec.Type == ledger.TypeToolCall {
			var tc ledger.ToolCall
			if err := rec.Decode(&tc); err != nil {
				t.Fatal(err)
			}
			out = append(out, tc)
		}
	}
	return out
}

// lastResult is the tool result the model was sent in request n (1-based).
func (r *leakRun) lastResult(t *testing.T, n int) string {
	t.Helper()
	reqs := r.srv.Requests()
	if len(reqs) < n {
		t.Fatalf("%d requests, want at least %d", len(reqs), n)
	}
	msgs := reqs[n-1].Messages
	res := msgs[len(msgs)-1].ToolResults
	if len(res) == 0 {
		t.Fatalf("request %d ends without a tool result", n)
	}
	return res[len(res)-1].Content
}

const envFile = "AWS_REGION=eu-west-1\nAWS_ACCESS_KEY_ID="

// TestRunCatEnvIsWithheld: `run cat .env` in both wire formats. The next
// request holds no secret, and the ledger says why, with the rule and the
// command, never the secret.
func TestRunCatEnvIsWithheld(t *testing.T) {
	for _, wire := range wires {
		t.Run(wire, func(t *testing.T) {
			r := newLeakRun(t, wire, map[string]string{".env": envFile + leakKey + "\n", "main.go": "package main\n"},
				providertest.Calls(providertest.Call("run", `{"command":"cat .env"}`)),
				providertest.Calls(providertest.Call("finish", `{"summary":"Could not show it."}`)),
			)
			res, err := Run(context.Background(), r.cfg)
			wantStop(t, res, err, Finished)
			r.noLeak(t)
			got := r.lastResult(t, 2)
			if !strings.HasPrefix(got, "error: secret_detected: ") || !strings.Contains(got, "aws-access-token") {
				t.Errorf("the model was sent:\n%s", got)
			}
			calls := r.toolCalls(t)
			if len(calls) != 2 || calls[0].ErrorCode != tools.SecretDetected ||
				!strings.Contains(calls[0].Result, "aws-access-token at output of command `cat .env`, line 3") {
				t.Errorf("the ledger does not say why: %+v", calls)
			}
		})
	}
}

// TestHardLinkedSecretThroughSearch: the model links .env to an innocent
// name with run, then searches for it, reads it and prints it. The
// password matches no gitleaks rule: the link check and the values of
// .env stand between it and the model.
func TestHardLinkedSecretThroughSearch(t *testing.T) {
	r := newLeakRun(t, provider.NameOpenAI, map[string]string{".env": "DB_PASSWORD=" + leakPassword + "\n", "db.go": "package db\n\n// DB_PASSWORD comes from the environment.\n"},
		providertest.Calls(providertest.Call("run", `{"command":"ln .env notes.txt && ls"}`)),
		providertest.Calls(providertest.Call("search", `{"pattern":"DB_PASSWORD"}`)),
		providertest.Calls(providertest.Call("read_file", `{"path":"notes.txt"}`)),
		providertest.Calls(providertest.Call("run", `{"command":"cat notes.txt"}`)),
		providertest.Calls(providertest.Call("finish", `{"summary":"done"}`)),
	)
	res, err := Run(context.Background(), r.cfg)
	wantStop(t, res, err, Finished)
	r.noLeak(t)
	if got := r.lastResult(t, 2); !strings.Contains(got, "notes.txt") {
		t.Fatalf("the link was not made (the test would prove nothing):\n%s", got)
	}
	if got := r.lastResult(t, 3); !strings.Contains(got, "db.go:3:") || !strings.Contains(got, "left out 1 matching files that are hard links") {
		t.Errorf("search result:\n%s", got)
	}
	if got := r.lastResult(t, 4); !strings.HasPrefix(got, "error: path_denied: notes.txt is a hard link") {
		t.Errorf("read_file result:\n%s", got)
	}
	// No gitleaks rule knows the password, but it is a value of .env.
	if got := r.lastResult(t, 5); !strings.HasPrefix(got, "error: secret_detected: ") || !strings.Contains(got, tools.RuleSecretFile) {
		t.Errorf("run cat notes.txt result:\n%s", got)
	}
}

// TestNULPathIsAToolError: a NUL byte in a path is invalid_arguments and
// the run goes on to finish.
func TestNULPathIsAToolError(t *testing.T) {
	r := newLeakRun(t, provider.NameAnthropic, map[string]string{"main.go": "package main\n"},
		providertest.Calls(providertest.Call("read_file", `{"path":"main\u0000.go"}`)),
		providertest.Calls(providertest.Call("list_files", `{"path":"`+strings.Repeat("d", 300)+`"}`)),
		providertest.Calls(providertest.Call("finish", `{"summary":"done"}`)),
	)
	res, err := Run(context.Background(), r.cfg)
	wantStop(t, res, err, Finished)
	for n := 2; n <= 3; n++ {
		if got := r.lastResult(t, n); !strings.HasPrefix(got, "error: invalid_arguments: ") {
			t.Errorf("request %d was sent:\n%s", n, got)
		}
	}
	calls := r.toolCalls(t)
	if len(calls) != 3 || calls[0].Failure != "" || calls[0].ErrorCode != tools.InvalidArguments {
		t.Errorf("ledger %+v", calls)
	}
}

// TestInstructionFilesDoNotLeakOrHang: a FIFO named AGENTS.md, a
// CLAUDE.md that is a symbolic link to .env, and copilot instructions
// holding a key are all left out of the prompt with a note, and the run
// starts promptly (a blocking open of the FIFO would never return).
func TestInstructionFilesDoNotLeakOrHang(t *testing.T) {
	r := newLeakRun(t, provider.NameOpenAI, map[string]string{
		".env":                            envFile + leakKey + "\n",
		".github/copilot-instructions.md": "Deploy with key " + leakKey + ".\n",
		"docs/guide.md":                   "Use tabs.\n",
		"main.go":                         "package main\n",
	}, providertest.Calls(providertest.Call("finish", `{"summary":"done"}`)))
	if err := syscall.Mkfifo(filepath.Join(r.dir, "AGENTS.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(r.dir, ".gitignore"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".env", filepath.Join(r.dir, "CLAUDE.md")); err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), r.cfg)
	wantStop(t, res, err, Finished)
	r.noLeak(t)
	first := r.srv.Requests()[0].Messages[0].Text
	for _, want := range []string{
		"source=\"AGENTS.md\">\n[withheld: AGENTS.md is a FIFO, not a regular file]",
		"source=\"CLAUDE.md\">\n[withheld: CLAUDE.md is a symbolic link, which is never followed]",
		"source=\".github/copilot-instructions.md\">\n[withheld: it holds what looks like a secret (aws-access-token at .github/copilot-instructions.md line 1)]",
	} {
		if !strings.Contains(first, want) {
			t.Errorf("first message lacks %q:\n%s", want, first)
		}
	}
}

// TestHardLinkedInstructionFile: AGENTS.md made a hard link to .env (by a
// setup command) is not shown, whatever it holds.
func TestHardLinkedInstructionFile(t *testing.T) {
	r := newLeakRun(t, provider.NameOpenAI, map[string]string{".env": "DB_PASSWORD=" + leakPassword + "\n"},
		providertest.Calls(providertest.Call("finish", `{"summary":"done"}`)))
	if err := os.Link(filepath.Join(r.dir, ".env"), filepath.Join(r.dir, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), r.cfg)
	wantStop(t, res, err, Finished)
	r.noLeak(t)
	if first := r.srv.Requests()[0].Messages[0].Text; !strings.Contains(first, "[withheld: AGENTS.md is a hard link") {
		t.Errorf("first message:\n%s", first)
	}
}

// TestDetailHasNoHostPath: an infrastructure failure's detail, which the
// worker posts, names the workspace by a placeholder.
func TestDetailHasNoHostPath(t *testing.T) {
	r := newLeakRun(t, provider.NameOpenAI, map[string]string{"main.go": "package main\n"},
		providertest.Calls(providertest.Call("boom", `{}`)))
	dir := r.dir
	boom := &fakeTool{name: "boom", fn: func(context.Context, json.RawMessage) (tools.Result, error) {
		return tools.Result{}, &os.PathError{Op: "open", Path: filepath.Join(dir, "main.go"), Err: syscall.EIO}
	}}
	r.cfg.Tools = append(r.cfg.Tools, boom)
	res, err := Run(context.Background(), r.cfg)
	wantStop(t, res, err, Infrastructure)
	if real, _ := filepath.EvalSymlinks(dir); strings.Contains(res.Detail, dir) || strings.Contains(res.Detail, real) || !strings.Contains(res.Detail, "<workspace>/main.go") {
		t.Errorf("detail %q", res.Detail)
	}
}
