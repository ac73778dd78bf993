package agent

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/agent/provider"
	"github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/agent/tools"
)

// testPEM is a private key made at run time, so the repository holds none.
func testPEM(t *testing.T) string {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}))
}

// pemBody is the key's first line of base64: a piece no withheld text
// may hold.
func pemBody(key string) string { return strings.Split(key, "\n")[1] }

// jsonString is s as a JSON string literal, without the quotes.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// TestModelWordsAreWithheld: a key the model writes itself, in its text,
// in a tool call's arguments (raw, \u-escaped, a PEM key with escaped
// newlines), in a command, as a tool's name and in its finish summary,
// reaches neither the ledger, the log nor the Result; each place holds a
// note naming the rule instead, and the ledger is still one JSON object
// a line.
func TestModelWordsAreWithheld(t *testing.T) {
	key := testPEM(t)
	escaped := `\u0041` + leakKey[1:] // "A" written as an escape
	runTool := &fakeTool{name: "run", fn: func(_ context.Context, args json.RawMessage) (tools.Result, error) {
		var p struct{ Command string }
		json.Unmarshal(args, &p)
		return tools.Result{Text: "exit 0", Commands: []tools.CommandRecord{{Command: p.Command, Output: "done\n"}}}, nil
	}}
	script := []turn{
		{resp: &provider.Response{StopReason: "tool_use", Usage: provider.Usage{InputTokens: 100},
			Message: provider.Message{Text: "Putting the pieces together, the key is " + leakKey + ".", ToolCalls: []provider.ToolCall{
				{ID: "c1", Name: "write_file", Arguments: `{"path":"k.pem","content":"` + jsonString(key) + `"}`},
				{ID: "c2", Name: "write_file", Arguments: `{"path":"a.txt","content":"id ` + escaped + `"}`},
			}}}},
		calls(100, "run", `{"command":"echo `+leakKey+` > notes.txt"}`),
		{resp: &provider.Response{StopReason: "tool_use", Usage: provider.Usage{InputTokens: 100},
			Message: provider.Message{ToolCalls: []provider.ToolCall{{ID: "c3", Name: leakKey, Arguments: `{}`}}}}},
		calls(100, "finish", `{"summary":"Configured with `+leakKey+`."}`),
	}
	h := newHarness(t, script, constTool("write_file", "wrote the file"), runTool, finishTool())
	var logs strings.Builder
	h.cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	res, err := h.run(context.Background())
	wantStop(t, res, err, Finished)

	raw := h.buf.String()
	for what, text := range map[string]string{"ledger": raw, "log": logs.String(), "summary": res.Summary, "detail": res.Detail} {
		for _, secret := range []string{leakKey, escaped, pemBody(key), jsonString(pemBody(key))} {
			if strings.Contains(text, secret) {
				t.Errorf("the %s holds %q:\n%s", what, secret, text)
			}
		}
	}
	note := "[withheld: secret_detected: aws-access-token at line 1]"
	if res.Summary != "Configured with "+note+"." {
		t.Errorf("summary %q", res.Summary)
	}
	if !strings.Contains(logs.String(), `msg="model text withheld: it holds what looks like a secret" step=1 in="model turn text" rule=aws-access-token`) {
		t.Errorf("the log does not say what was withheld:\n%s", logs.String())
	}
	var sawTurn, sawCommand, sawPEM bool
	for _, rec := range h.events() { // each line one JSON object, read back
		switch p, _ := rec.Payload(); e := p.(type) {
		case *ledger.ModelTurn:
			if e.Step == 1 {
				sawTurn = e.Text == "Putting the pieces together, the key is "+note+"."
				for _, c := range e.ToolCalls {
					var args map[string]string
					if err := json.Unmarshal([]byte(c.Arguments), &args); err != nil {
						t.Errorf("arguments are no longer JSON: %s", c.Arguments)
					}
					sawPEM = sawPEM || strings.Contains(args["content"], "[withheld: secret_detected: private-key")
				}
			}
		case *ledger.Command:
			sawCommand = e.Command == "echo "+note+" > notes.txt"
		case *ledger.RunStop:
			if e.Summary != res.Summary {
				t.Errorf("run_stop summary %q", e.Summary)
			}
		}
	}
	if !sawTurn || !sawCommand || !sawPEM {
		t.Errorf("turn text %v, command %v, PEM argument %v withheld in place; ledger:\n%s", sawTurn, sawCommand, sawPEM, raw)
	}
}

// TestModelWordsWithTheToolSet: with the tool set as Redactor, a value of
// .env that no rule knows is withheld from the model's text too, and a
// file written under a name that is a key is recorded with the key
// withheld from its name.
func TestModelWordsWithTheToolSet(t *testing.T) {
	r := newLeakRun(t, provider.NameOpenAI, map[string]string{".env": "DB_PASSWORD=" + leakPassword + "\n", "main.go": "package main\n"},
		providertest.Turn{Text: "The password must be " + leakPassword, ToolCalls: []providertest.ToolCall{
			providertest.Call("write_file", `{"path":"docs/`+leakKey+`.md","content":"notes\n"}`)}},
		providertest.Calls(providertest.Call("finish", `{"summary":"Wrote docs/`+leakKey+`.md for `+leakPassword+`"}`)),
	)
	set, err := tools.New(tools.Options{Workspace: r.cfg.Workspace, Sandbox: &shellSandbox{dir: r.dir}, Verifier: noChecks{}})
	if err != nil {
		t.Fatal(err)
	}
	r.cfg.Tools, r.cfg.Redactor = set.Tools(), set
	res, err := Run(context.Background(), r.cfg)
	wantStop(t, res, err, Finished)
	data, err := os.ReadFile(r.ledger)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{leakKey, leakPassword} {
		if strings.Contains(string(data), secret) || strings.Contains(res.Summary, secret) {
			t.Errorf("the ledger or summary holds %q:\n%s", secret, data)
		}
	}
	calls := r.toolCalls(t)
	if len(calls) == 0 || len(calls[0].Changed) != 1 || calls[0].Changed[0] != "docs/[withheld: secret_detected: aws-access-token].md" {
		t.Errorf("changed paths as recorded: %+v", calls)
	}
	// The file itself was written: the change's scan, not the tool, stops it.
	if _, err := os.Stat(r.dir + "/docs/" + leakKey + ".md"); err != nil || len(res.Changed) != 1 {
		t.Errorf("the file was not written as asked: %v %v", err, res.Changed)
	}
}

// TestStopDetailIsWithheld: a repeated call's arguments are quoted in
// the stop's detail, which is posted; the key in them is not.
func TestStopDetailIsWithheld(t *testing.T) {
	args := `{"command":"echo ` + leakKey + `"}`
	h := newHarness(t, []turn{calls(100, "run", args), calls(100, "run", args), calls(100, "run", args)}, constTool("run", "same"))
	var logs strings.Builder
	h.cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	res, err := h.run(context.Background())
	wantStop(t, res, err, RepeatedCalls)
	if strings.Contains(res.Detail, leakKey) || strings.Contains(logs.String(), leakKey) || strings.Contains(h.buf.String(), leakKey) {
		t.Errorf("the detail, log or ledger holds the key: %q\n%s", res.Detail, logs.String())
	}
	if !strings.Contains(res.Detail, "repeated") || !strings.Contains(res.Detail, "[withheld: secret_detected: aws-access-token") {
		t.Errorf("detail %q", res.Detail)
	}
}
