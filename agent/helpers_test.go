package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/agent/provider"
	"github.com/patchwright/patchwright/agent/tools"
)

// turn is one scripted model answer: a response, an error, or a function
// deciding at call time.
type turn struct {
	resp *provider.Response
	err  error
	fn   func(ctx context.Context, req provider.Request) (*provider.Response, error)
}

// scripted is a Provider at the seam: it answers from a script and keeps a
// deep copy of every request it got.
type scripted struct {
	t      *testing.T
	mu     sync.Mutex
	script []turn
	reqs   []provider.Request
}

func (s *scripted) Model() string { return "fake:scripted" }

func (s *scripted) Complete(ctx context.Context, req provider.Request) (*provider.Response, error) {
	s.mu.Lock()
	s.reqs = append(s.reqs, copyRequest(req))
	n := len(s.reqs)
	if n > len(s.script) {
		s.mu.Unlock()
		s.t.Errorf("model called %d times, script has %d turns", n, len(s.script))
		return nil, &provider.Error{Kind: provider.KindPermanent, Provider: "fake", Reason: "script exhausted"}
	}
	tn := s.script[n-1]
	s.mu.Unlock()
	if tn.fn != nil {
		return tn.fn(ctx, req)
	}
	return tn.resp, tn.err
}

func (s *scripted) requests() []provider.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reqs
}

func copyRequest(r provider.Request) provider.Request {
	data, _ := json.Marshal(r)
	var c provider.Request
	_ = json.Unmarshal(data, &c)
	return c
}

// calls builds a tool-use answer; each pair is name and arguments.
func calls(inTokens int64, pairs ...string) turn {
	msg := provider.Message{Role: provider.RoleAssistant}
	for i := 0; i+1 < len(pairs); i += 2 {
		msg.ToolCalls = append(msg.ToolCalls, provider.ToolCall{ID: fmt.Sprintf("call_%d_%s", i/2, pairs[i]), Name: pairs[i], Arguments: pairs[i+1]})
	}
	return turn{resp: &provider.Response{Message: msg, StopReason: "tool_use", Usage: provider.Usage{InputTokens: inTokens, OutputTokens: 10, CachedInputTokens: inTokens / 2}}}
}

func text(s string) turn {
	return turn{resp: &provider.Response{Message: provider.Message{Role: provider.RoleAssistant, Text: s}, StopReason: "end_turn", Usage: provider.Usage{InputTokens: 100, OutputTokens: 5}}}
}

// fakeTool is a tool at the seam whose behaviour a test supplies.
type fakeTool struct {
	name string
	fn   func(ctx context.Context, args json.RawMessage) (tools.Result, error)
	mu   sync.Mutex
	got  []string
}

func (f *fakeTool) Name() string            { return f.name }
func (f *fakeTool) Description() string     { return "test tool " + f.name }
func (f *fakeTool) Schema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (f *fakeTool) Call(ctx context.Context, args json.RawMessage) (tools.Result, error) {
	f.mu.Lock()
	f.got = append(f.got, string(args))
	f.mu.Unlock()
	return f.fn(ctx, args)
}

func (f *fakeTool) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.got
}

func constTool(name, out string) *fakeTool {
	return &fakeTool{name: name, fn: func(context.Context, json.RawMessage) (tools.Result, error) {
		return tools.Result{Text: out}, nil
	}}
}

// echoTool returns its arguments, so different arguments give different
// results.
func echoTool(name string) *fakeTool {
	return &fakeTool{name: name, fn: func(_ context.Context, args json.RawMessage) (tools.Result, error) {
		return tools.Result{Text: "got " + string(args)}, nil
	}}
}

func finishTool() *fakeTool {
	return &fakeTool{name: "finish", fn: func(_ context.Context, args json.RawMessage) (tools.Result, error) {
		var p struct{ Summary string }
		if err := json.Unmarshal(args, &p); err != nil {
			return tools.Result{Text: "error: invalid_arguments: " + err.Error(), Code: tools.InvalidArguments}, nil
		}
		return tools.Result{Text: "finished", Finish: &tools.FinishRecord{Summary: p.Summary}}, nil
	}}
}

// fixedNow is a clock that advances a millisecond per reading, so
// durations are positive and identical from run to run.
func fixedNow() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Millisecond)
		return t
	}
}

// harness runs the loop with an in-memory ledger and returns everything a
// test looks at.
type harness struct {
	t      *testing.T
	model  *scripted
	ledger *ledger.Writer
	buf    *bytes.Buffer
	cfg    Config
}

func newHarness(t *testing.T, script []turn, ts ...tools.Tool) *harness {
	t.Helper()
	var buf bytes.Buffer
	h := &harness{t: t, model: &scripted{t: t, script: script}, buf: &buf}
	h.ledger = ledger.New(&buf, ledger.Options{Now: fixedNow()})
	h.cfg = Config{
		Provider: h.model, Tools: ts, Ledger: h.ledger, Now: fixedNow(),
		Issue: Issue{Number: 7, Title: "Fix the greeting", Body: "It says helo."},
	}
	return h
}

func (h *harness) run(ctx context.Context) (Result, error) {
	h.t.Helper()
	return Run(ctx, h.cfg)
}

// events reads the ledger back from what was written and checks it
// matches the in-memory copy.
func (h *harness) events() []ledger.Record {
	h.t.Helper()
	log, err := ledger.Read(bytes.NewReader(h.buf.Bytes()))
	if err != nil {
		h.t.Fatalf("read ledger: %v", err)
	}
	mem := h.ledger.Records()
	if len(mem) != len(log.Records) || log.TornTail {
		h.t.Fatalf("ledger file has %d records (torn %v), memory %d", len(log.Records), log.TornTail, len(mem))
	}
	return log.Records
}

func (h *harness) types() string {
	h.t.Helper()
	var ts []string
	for _, r := range h.events() {
		ts = append(ts, r.Type)
	}
	return strings.Join(ts, " ")
}

// toolEvents decodes the ledger's tool_call events.
func (h *harness) toolEvents() []ledger.ToolCall {
	h.t.Helper()
	var out []ledger.ToolCall
	for _, r := range h.events() {
		if r.Type == ledger.TypeToolCall {
			var tc ledger.ToolCall
			if err := r.Decode(&tc); err != nil {
				h.t.Fatal(err)
			}
			out = append(out, tc)
		}
	}
	return out
}

// lastResults returns the tool results sent in the model's latest request.
func lastResults(t *testing.T, reqs []provider.Request) []provider.ToolResult {
	t.Helper()
	if len(reqs) == 0 {
		t.Fatal("no requests")
	}
	msgs := reqs[len(reqs)-1].Messages
	return msgs[len(msgs)-1].ToolResults
}

func wantStop(t *testing.T, res Result, err error, want StopReason) {
	t.Helper()
	if res.Stop != want {
		t.Fatalf("stop = %s (%s), err %v; want %s", res.Stop, res.Detail, err, want)
	}
	if res.Detail == "" {
		t.Error("no detail for people")
	}
}
