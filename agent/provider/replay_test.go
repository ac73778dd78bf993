package provider_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/agent/provider"
)

// recorded is the run the replay tests replay: a read, a failed model
// call, a command, a text-only turn and finish.
var recorded = []ledger.Payload{
	&ledger.RunStart{Model: "openai:scripted", Prompt: "fix it"},
	&ledger.ModelTurn{Step: 1, StopReason: "tool_use", Text: "reading", InputTokens: 900,
		ToolCalls: []ledger.RequestedCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"a.go"}`}}},
	&ledger.ToolCall{Step: 1, CallID: "c1", Tool: "read_file", Arguments: `{"path":"a.go"}`, Result: "1\tpackage a\n"},
	&ledger.ModelTurn{Step: 2, Error: "openai: 400 context_length_exceeded: too long"},
	&ledger.ModelTurn{Step: 2, StopReason: "tool_use",
		ToolCalls: []ledger.RequestedCall{{ID: "c2", Name: "run", Arguments: `{"command":"go test ./..."}`}}},
	&ledger.Command{Step: 2, CallID: "c2", Tool: "run", CommandRecord: ledger.CommandRecord{Command: "go test ./...", ExitCode: 1}},
	&ledger.ToolCall{Step: 2, CallID: "c2", Tool: "run", Arguments: `{"command":"go test ./..."}`,
		Result: "exit code 1 in 1.234s\n--- stdout (40 bytes) ---\n--- FAIL: TestA (0.00s)\nFAIL\ta\t0.003s\n"},
	&ledger.ModelTurn{Step: 3, StopReason: "end_turn", Text: "I think it is done."},
	&ledger.ModelTurn{Step: 4, StopReason: "tool_use",
		ToolCalls: []ledger.RequestedCall{{ID: "c3", Name: "finish", Arguments: `{"summary":"fixed"}`}}},
	&ledger.ToolCall{Step: 4, CallID: "c3", Tool: "finish", Arguments: `{"summary":"fixed"}`, Result: "finished."},
	&ledger.RunStop{Reason: "finished", Steps: 4},
}

func writeLedger(t *testing.T, events ...ledger.Payload) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ledger.jsonl")
	lw, err := ledger.Create(path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if _, err := lw.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := lw.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func newReplay(t *testing.T, events ...ledger.Payload) (provider.Provider, string) {
	t.Helper()
	path := writeLedger(t, events...)
	p, err := provider.New("replay:"+path, provider.Options{Getenv: env()})
	if err != nil {
		t.Fatal(err)
	}
	return p, path
}

// conversation plays the loop's part: it appends each reply and the
// results given for its calls, as agent.Run does.
type conversation struct {
	t    *testing.T
	p    provider.Provider
	msgs []provider.Message
}

func (c *conversation) turn(results ...string) (*provider.Response, error) {
	c.t.Helper()
	if n := len(c.msgs); n > 0 && c.msgs[n-1].Role == provider.RoleAssistant {
		last := c.msgs[n-1]
		if len(last.ToolCalls) == 0 {
			c.msgs = append(c.msgs, provider.Message{Role: provider.RoleUser, Text: "use the tools"})
		} else {
			var trs []provider.ToolResult
			for i, call := range last.ToolCalls {
				trs = append(trs, provider.ToolResult{CallID: call.ID, Content: results[i]})
			}
			c.msgs = append(c.msgs, provider.Message{Role: provider.RoleUser, ToolResults: trs})
		}
	}
	resp, err := c.p.Complete(context.Background(), provider.Request{System: "s", Messages: c.msgs})
	if err == nil {
		c.msgs = append(c.msgs, resp.Message)
	}
	return resp, err
}

func start(t *testing.T, p provider.Provider) *conversation {
	return &conversation{t: t, p: p, msgs: []provider.Message{{Role: provider.RoleUser, Text: "fix it"}}}
}

// TestReplayInOrder: each request gets the next recorded turn that
// succeeded, with its call IDs, text and stop reason and no usage; a run
// result that differs only in timings and output is accepted.
func TestReplayInOrder(t *testing.T) {
	p, path := newReplay(t, recorded...)
	if p.Model() != "replay:"+filepath.Clean(path) {
		t.Errorf("Model() = %q", p.Model())
	}
	if file, ok := provider.ReplayedFrom(p); !ok || file != filepath.Clean(path) {
		t.Errorf("ReplayedFrom = %q, %v", file, ok)
	}
	c := start(t, p)
	want := []provider.Message{
		{Role: provider.RoleAssistant, Text: "reading", ToolCalls: []provider.ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"a.go"}`}}},
		{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "c2", Name: "run", Arguments: `{"command":"go test ./..."}`}}},
		{Role: provider.RoleAssistant, Text: "I think it is done."},
		{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "c3", Name: "finish", Arguments: `{"summary":"fixed"}`}}},
	}
	results := [][]string{
		nil,
		{"1\tpackage a\n"},
		{"exit code 1 in 3.9s\n--- stdout (41 bytes) ---\n--- FAIL: TestA (0.01s)\nFAIL\ta\t0.012s\n"},
		nil,
	}
	stops := []string{"tool_use", "tool_use", "end_turn", "tool_use"}
	for i := range want {
		resp, err := c.turn(results[i]...)
		if err != nil {
			t.Fatalf("turn %d: %v", i+1, err)
		}
		if !reflect.DeepEqual(resp.Message, want[i]) || resp.StopReason != stops[i] {
			t.Errorf("turn %d: %+v (%s), want %+v (%s)", i+1, resp.Message, resp.StopReason, want[i], stops[i])
		}
		if resp.Usage != (provider.Usage{}) {
			t.Errorf("turn %d: usage %+v: no model was called", i+1, resp.Usage)
		}
	}

	// The provider holds no state: a second run from the start gets the
	// first turn again.
	resp, err := start(t, p).turn()
	if err != nil || resp.Message.ToolCalls[0].ID != "c1" {
		t.Errorf("a second run's first turn: %+v, %v", resp, err)
	}
}

// TestReplayRunsOut: a request after the last recorded turn fails
// permanently, naming the turn it asked for.
func TestReplayRunsOut(t *testing.T) {
	p, path := newReplay(t, recorded...)
	c := start(t, p)
	for _, res := range [][]string{nil, {"1\tpackage a\n"}, {"exit code 1 in 1s\n"}, nil} {
		if _, err := c.turn(res...); err != nil {
			t.Fatal(err)
		}
	}
	_, err := c.turn("finished.")
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindPermanent || pe.Code != "transcript_exhausted" {
		t.Fatalf("err = %v, want a permanent transcript_exhausted error", err)
	}
	for _, want := range []string{filepath.Clean(path), "recorded turn 5: there is none", "has 4 model turns"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// TestReplayMismatch: a tool result that differs from the recording in
// a way the later turns depend on stops the replay at the next turn,
// naming the turn and the call.
func TestReplayMismatch(t *testing.T) {
	edit := &ledger.ModelTurn{Step: 1, StopReason: "tool_use", ToolCalls: []ledger.RequestedCall{
		{ID: "e1", Name: "edit", Arguments: `{"edits":[]}`},
		{ID: "v1", Name: "verify", Arguments: `{}`},
	}}
	editRes := &ledger.ToolCall{Step: 1, CallID: "e1", Tool: "edit", Result: "edited a.go"}
	verifyRes := &ledger.ToolCall{Step: 1, CallID: "v1", Tool: "verify",
		Result: "3 of 3 checks passed\nPASS build: go build ./... (exit code 0, 1.1s)\nPASS vet: go vet ./... (exit code 0, 2s)\nPASS test: go test ./... (exit code 0, 3s)\n"}
	next := &ledger.ModelTurn{Step: 2, StopReason: "end_turn", Text: "done"}
	events := []ledger.Payload{edit, editRes, verifyRes, next}
	okVerify := "3 of 3 checks passed\nPASS build: go build ./... (exit code 0, 4.5s)\nPASS vet: go vet ./... (exit code 0, 1ms)\nPASS test: go test ./... (exit code 0, 9s)\n"

	tests := map[string]struct {
		results []string
		want    string
	}{
		"same facts": {results: []string{"edited a.go", okVerify}},
		"edit failed": {results: []string{"error: no_match: old_text was not found in a.go", okVerify},
			want: `recorded turn 1: the edit call e1 got a different result than recorded: line 1 is "error: no_match: old_text was not found in a.go", recorded "edited a.go"`},
		"a check failed": {results: []string{"edited a.go", strings.Replace(okVerify, "PASS test: go test ./... (exit code 0", "FAIL test: go test ./... (exit code 1", 1)},
			want: "recorded turn 1: the verify call v1 got a different result"},
		"fewer checks": {results: []string{"edited a.go", "2 of 2 checks passed\nPASS build: go build ./... (exit code 0, 1s)\nPASS vet: go vet ./... (exit code 0, 2s)\n"},
			want: `line 1 is "2 of 2 checks passed", recorded "3 of 3 checks passed"`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p, _ := newReplay(t, events...)
			c := start(t, p)
			if _, err := c.turn(); err != nil {
				t.Fatal(err)
			}
			resp, err := c.turn(tc.results...)
			if tc.want == "" {
				if err != nil || resp.Message.Text != "done" {
					t.Fatalf("got %+v, %v; want the next turn", resp, err)
				}
				return
			}
			var pe *provider.Error
			if !errors.As(err, &pe) || pe.Kind != provider.KindPermanent || pe.Code != "transcript_mismatch" {
				t.Fatalf("err = %v, want a permanent transcript_mismatch error", err)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "no longer applies") {
				t.Errorf("error %q lacks %q", err, tc.want)
			}
		})
	}

	t.Run("results missing", func(t *testing.T) {
		p, _ := newReplay(t, events...)
		c := start(t, p)
		if _, err := c.turn(); err != nil {
			t.Fatal(err)
		}
		c.msgs = append(c.msgs, provider.Message{Role: provider.RoleUser, ToolResults: []provider.ToolResult{{CallID: "e1", Content: "edited a.go"}}})
		_, err := p.Complete(context.Background(), provider.Request{Messages: c.msgs})
		if err == nil || !strings.Contains(err.Error(), "1 tool results for 2 recorded calls") {
			t.Errorf("err = %v", err)
		}
	})

	t.Run("another call in the conversation", func(t *testing.T) {
		p, _ := newReplay(t, events...)
		msgs := []provider.Message{
			{Role: provider.RoleUser, Text: "fix it"},
			{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "e1", Name: "edit", Arguments: `{"edits":[1]}`}, {ID: "v1", Name: "verify", Arguments: `{}`}}},
			{Role: provider.RoleUser, ToolResults: []provider.ToolResult{{CallID: "e1", Content: "edited a.go"}, {CallID: "v1", Content: okVerify}}},
		}
		_, err := p.Complete(context.Background(), provider.Request{Messages: msgs})
		if err == nil || !strings.Contains(err.Error(), `call 1 is edit({"edits":[1]}) in the conversation`) {
			t.Errorf("err = %v", err)
		}
	})

	t.Run("recorded run ended before the result", func(t *testing.T) {
		p, _ := newReplay(t, edit, editRes, next) // no verify result recorded
		c := start(t, p)
		if _, err := c.turn(); err != nil {
			t.Fatal(err)
		}
		_, err := c.turn("edited a.go", okVerify)
		if err == nil || !strings.Contains(err.Error(), "no result for its verify call v1") {
			t.Errorf("err = %v", err)
		}
	})
}

// TestReplayBadTranscript: a file that is not a ledger with model turns
// is refused when the provider is built, so a run does not start.
func TestReplayBadTranscript(t *testing.T) {
	dir := t.TempDir()
	notLedger := filepath.Join(dir, "notes.txt")
	os.WriteFile(notLedger, []byte("hello\nworld\n"), 0o644)
	noTurns := writeLedger(t, &ledger.RunStart{Model: "x"}, &ledger.RunStop{Reason: "finished"})
	onlyFailed := writeLedger(t, &ledger.ModelTurn{Step: 1, Error: "boom"})
	tests := map[string]struct{ spec, want string }{
		"no file":      {"replay:", "want PROVIDER:MODEL"},
		"missing file": {"replay:" + filepath.Join(dir, "absent.jsonl"), "no such file"},
		"not a ledger": {"replay:" + notLedger, "not a JSON event"},
		"no turns":     {"replay:" + noTurns, "holds no model turn"},
		"only failed":  {"replay:" + onlyFailed, "holds no model turn"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := provider.New(tc.spec, provider.Options{Getenv: env()})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	if _, ok := provider.ReplayedFrom(nil); ok {
		t.Error("ReplayedFrom(nil) says replay")
	}
	real, err := provider.New("openai:gpt-4.1", provider.Options{APIKey: "k", Getenv: env()})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := provider.ReplayedFrom(real); ok {
		t.Error("an OpenAI provider says it replays")
	}
}
