package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/agent/provider"
	"github.com/patchwright/patchwright/agent/tools"
)

func TestCleanFix(t *testing.T) {
	edit := &fakeTool{name: "edit", fn: func(context.Context, json.RawMessage) (tools.Result, error) {
		return tools.Result{Text: "edited greet.go", Changed: []string{"greet.go"}}, nil
	}}
	run := &fakeTool{name: "run", fn: func(context.Context, json.RawMessage) (tools.Result, error) {
		return tools.Result{Text: "exit 0\nok", Commands: []tools.CommandRecord{{
			Command: "go test ./...", ExitCode: 0, Duration: time.Second, Output: "ok", OutputBytes: 2, StdoutSHA256: "s1", StderrSHA256: "s2",
		}}}, nil
	}}
	h := newHarness(t, []turn{
		calls(1000, "read_file", `{"path":"greet.go"}`),
		calls(1200, "edit", `{"edits":[{"path":"greet.go","old_text":"helo","new_text":"hello"}]}`),
		calls(1300, "run", `{"command":"go test ./..."}`),
		calls(1400, "finish", `{"summary":"Fixed the typo."}`),
	}, constTool("read_file", "1\tpackage greet\n2\tconst S = \"helo\""), edit, run, finishTool())

	res, err := h.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	wantStop(t, res, err, Finished)
	if res.Steps != 4 || res.Summary != "Fixed the typo." || !reflect.DeepEqual(res.Changed, []string{"greet.go"}) {
		t.Errorf("result %+v", res)
	}
	if res.Usage.InputTokens != 4900 || res.Usage.OutputTokens != 40 || res.Usage.CachedInputTokens != 2450 {
		t.Errorf("usage %+v", res.Usage)
	}
	wantTypes := "run_start model_turn tool_call model_turn tool_call model_turn command tool_call model_turn tool_call run_stop"
	if got := h.types(); got != wantTypes {
		t.Errorf("ledger:\n got %s\nwant %s", got, wantTypes)
	}

	reqs := h.model.requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests", len(reqs))
	}
	// The stable prefix never changes between turns.
	for i, r := range reqs[1:] {
		if r.System != reqs[0].System || !reflect.DeepEqual(r.Tools, reqs[0].Tools) || r.Messages[0].Text != reqs[0].Messages[0].Text {
			t.Errorf("request %d changed the prefix", i+2)
		}
	}
	if names := toolNames(reqs[0].Tools); names != "read_file edit run finish" {
		t.Errorf("tools offered: %s", names)
	}
	got := lastResults(t, reqs[:2])
	if len(got) != 1 || got[0].CallID != "call_0_read_file" || !strings.Contains(got[0].Content, "helo") || got[0].IsError {
		t.Errorf("read result sent as %+v", got)
	}

	var stopEv ledger.RunStop
	evs := h.events()
	if err := evs[len(evs)-1].Decode(&stopEv); err != nil {
		t.Fatal(err)
	}
	if stopEv.Reason != "finished" || stopEv.Steps != 4 || stopEv.Usage.InputTokens != 4900 || stopEv.Summary != "Fixed the typo." {
		t.Errorf("run_stop %+v", stopEv)
	}
	var cmd ledger.Command
	if err := evs[6].Decode(&cmd); err != nil || cmd.Command != "go test ./..." || cmd.CallID != "call_0_run" || cmd.StdoutSHA256 != "s1" {
		t.Errorf("command event %+v %v", cmd, err)
	}
	var start ledger.RunStart
	if err := evs[0].Decode(&start); err != nil || start.Model != "fake:scripted" || start.Limits.MaxSteps != 40 || len(start.PromptSHA256) != 64 {
		t.Errorf("run_start %+v %v", start, err)
	}
}

func toolNames(defs []provider.ToolDef) string {
	var n []string
	for _, d := range defs {
		n = append(n, d.Name)
	}
	return strings.Join(n, " ")
}

func TestPromptIsStableAcrossRuns(t *testing.T) {
	first := func() provider.Request {
		h := newHarness(t, []turn{calls(10, "finish", `{"summary":"x"}`)}, finishTool())
		if _, err := h.run(context.Background()); err != nil {
			t.Fatal(err)
		}
		return h.model.requests()[0]
	}
	a, b := first(), first()
	if !reflect.DeepEqual(a, b) {
		t.Errorf("two runs sent different first requests")
	}
	if strings.Contains(a.System, "2026") || a.System != systemPrompt {
		t.Error("system prompt is not the fixed one")
	}
}

func TestRepeatedCallsStop(t *testing.T) {
	read := constTool("read_file", "same")
	h := newHarness(t, []turn{
		calls(100, "read_file", `{"path":"a.go"}`),
		calls(100, "read_file", `{ "path" : "a.go" }`), // same call, spaced differently
		calls(100, "read_file", "{\"path\":\"a.go\"}\n"),
		calls(100, "finish", `{"summary":"never reached"}`),
	}, read, finishTool())
	res, err := h.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	wantStop(t, res, err, RepeatedCalls)
	if res.Steps != 3 || !strings.Contains(res.Detail, "read_file") {
		t.Errorf("steps %d, detail %q", res.Steps, res.Detail)
	}
}

func TestRepeatedCallsWithinWindow(t *testing.T) {
	// a, b, a, b, … with identical results is a loop even though no call
	// comes twice in a row.
	var script []turn
	for i := range 10 {
		name := []string{"list_files", "read_file"}[i%2]
		script = append(script, calls(100, name, `{}`))
	}
	h := newHarness(t, script, constTool("list_files", "a.go"), constTool("read_file", "x"))
	h.cfg.Limits.RepeatInWindow = 3
	res, err := h.run(context.Background())
	wantStop(t, res, err, RepeatedCalls)
	if res.Steps != 5 {
		t.Errorf("stopped after %d steps, want 5 (third identical list_files)", res.Steps)
	}
}

func TestEditTestCycleIsNotALoop(t *testing.T) {
	// The same test command with changing output is progress, not a loop.
	n := 0
	test := &fakeTool{name: "run", fn: func(context.Context, json.RawMessage) (tools.Result, error) {
		n++
		return tools.Result{Text: fmt.Sprintf("FAIL: %d tests failing", 10-n)}, nil
	}}
	var script []turn
	for i := range 8 {
		script = append(script, calls(100, "edit", fmt.Sprintf(`{"n":%d}`, i)))
		script = append(script, calls(100, "run", `{"command":"go test ./..."}`))
	}
	script = append(script, calls(100, "finish", `{"summary":"done"}`))
	h := newHarness(t, script, echoTool("edit"), test, finishTool())
	res, err := h.run(context.Background())
	wantStop(t, res, err, Finished)
}

func TestNeverFinishesStopsAtStepCap(t *testing.T) {
	var script []turn
	for i := range 5 {
		script = append(script, calls(100, "read_file", fmt.Sprintf(`{"path":"f%d.go"}`, i)))
	}
	h := newHarness(t, script, echoTool("read_file"))
	h.cfg.Limits.MaxSteps = 5
	res, err := h.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	wantStop(t, res, err, StepLimit)
	if res.Steps != 5 || len(h.model.requests()) != 5 {
		t.Errorf("steps %d, requests %d", res.Steps, len(h.model.requests()))
	}
	if got := h.types(); !strings.HasSuffix(got, "tool_call run_stop") {
		t.Errorf("ledger %s", got)
	}
}

func TestTokenBudget(t *testing.T) {
	t.Run("stops after the turn that crossed it", func(t *testing.T) {
		h := newHarness(t, []turn{calls(1500, "read_file", `{}`), calls(1, "finish", `{}`)}, echoTool("read_file"), finishTool())
		h.cfg.Limits.MaxInputTokens = 1000
		res, err := h.run(context.Background())
		wantStop(t, res, err, TokenBudget)
		if res.Steps != 1 || res.Usage.InputTokens != 1500 {
			t.Errorf("steps %d usage %d", res.Steps, res.Usage.InputTokens)
		}
	})
	t.Run("does not send a request that would cross it", func(t *testing.T) {
		h := newHarness(t, []turn{calls(600, "read_file", `{}`), calls(600, "finish", `{}`)}, echoTool("read_file"), finishTool())
		h.cfg.Limits.MaxInputTokens = 1000
		res, err := h.run(context.Background())
		wantStop(t, res, err, TokenBudget)
		// The next request re-sends about 600 tokens: 600+600 > 1000.
		if res.Steps != 1 || len(h.model.requests()) != 1 {
			t.Errorf("steps %d, requests %d", res.Steps, len(h.model.requests()))
		}
	})
}

func TestInvalidArguments(t *testing.T) {
	read := echoTool("read_file")
	h := newHarness(t, []turn{
		calls(100, "read_file", `{"path": "a.go"`), // cut off mid-object
		calls(100, "read_file", `["a.go"]`),
		calls(100, "read_file", ``), // empty means no arguments
		calls(100, "finish", `{"summary":"ok"}`),
	}, read, finishTool())
	res, err := h.run(context.Background())
	wantStop(t, res, err, Finished)
	reqs := h.model.requests()
	for i, want := range []string{"error: invalid_arguments: the arguments are not valid JSON", "error: invalid_arguments: the arguments must be a JSON object"} {
		r := lastResults(t, reqs[:i+2])[0]
		if !strings.HasPrefix(r.Content, want) || !r.IsError {
			t.Errorf("call %d answered %+v, want prefix %q", i+1, r, want)
		}
	}
	if got := read.calls(); len(got) != 1 || got[0] != "{}" {
		t.Errorf("read_file ran with %q; only the empty-argument call should run, as {}", got)
	}
	if ev := h.toolEvents()[0]; ev.ErrorCode != tools.InvalidArguments || ev.Arguments != `{"path": "a.go"` {
		t.Errorf("ledger %+v", ev)
	}
}

func TestUnknownTool(t *testing.T) {
	h := newHarness(t, []turn{
		calls(100, "rm_rf", `{}`),
		calls(100, "finish", `{"summary":"ok"}`),
	}, echoTool("read_file"), finishTool())
	res, err := h.run(context.Background())
	wantStop(t, res, err, Finished)
	r := lastResults(t, h.model.requests())[0]
	if !r.IsError || !strings.HasPrefix(r.Content, `error: not_found: there is no tool named "rm_rf"`) || !strings.Contains(r.Content, "read_file, finish") {
		t.Errorf("answered %+v", r)
	}
}

func TestPanickingTool(t *testing.T) {
	boom := &fakeTool{name: "search", fn: func(context.Context, json.RawMessage) (tools.Result, error) {
		panic(errors.New("tool bug: nil map"))
	}}
	h := newHarness(t, []turn{
		calls(100, "search", `{"pattern":"x"}`),
		calls(100, "finish", `{"summary":"ok"}`),
	}, boom, finishTool())
	res, err := h.run(context.Background())
	wantStop(t, res, err, Finished)
	r := lastResults(t, h.model.requests())[0]
	if !r.IsError || !strings.HasPrefix(r.Content, "error: internal: the search tool crashed") {
		t.Errorf("answered %+v", r)
	}
	if ev := h.toolEvents()[0]; !strings.Contains(ev.Panic, "nil map") {
		t.Errorf("ledger panic %q", ev.Panic)
	}
}

func TestToolInfrastructureErrorEndsRun(t *testing.T) {
	dead := &fakeTool{name: "run", fn: func(context.Context, json.RawMessage) (tools.Result, error) {
		return tools.Result{}, errors.New("docker: container gone")
	}}
	h := newHarness(t, []turn{calls(100, "run", `{"command":"ls"}`)}, dead)
	res, err := h.run(context.Background())
	wantStop(t, res, err, Infrastructure)
	if err == nil || !strings.Contains(err.Error(), "container gone") || !strings.Contains(res.Detail, "tool run") {
		t.Errorf("err %v, detail %q", err, res.Detail)
	}
	if ev := h.toolEvents()[0]; ev.Failure != "docker: container gone" {
		t.Errorf("ledger %+v", ev)
	}
	if got := h.types(); got != "run_start model_turn tool_call run_stop" {
		t.Errorf("ledger %s", got)
	}
}

func TestProviderErrors(t *testing.T) {
	perm := &provider.Error{Kind: provider.KindPermanent, Provider: "openai", StatusCode: 429, Code: "insufficient_quota", Reason: "the account has no quota"}
	trans := &provider.Error{Kind: provider.KindTransient, Provider: "anthropic", StatusCode: 529, Code: "overloaded_error", Reason: "the service is overloaded", Attempts: 5}
	for name, pe := range map[string]*provider.Error{"permanent": perm, "transient after retries": trans} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, []turn{{err: pe}}, finishTool())
			res, err := h.run(context.Background())
			wantStop(t, res, err, ProviderError)
			var got *provider.Error
			if !errors.As(err, &got) || got != pe {
				t.Errorf("err %v does not wrap the provider error", err)
			}
			if !strings.Contains(res.Detail, pe.Reason) {
				t.Errorf("detail %q", res.Detail)
			}
			var turnEv ledger.ModelTurn
			if err := h.events()[1].Decode(&turnEv); err != nil || turnEv.Error == "" {
				t.Errorf("failed turn not recorded: %+v", turnEv)
			}
		})
	}
}

func TestNoToolUse(t *testing.T) {
	t.Run("nudged twice then stopped", func(t *testing.T) {
		h := newHarness(t, []turn{text("I think the fix is X."), text("As I said."), text("")}, finishTool())
		res, err := h.run(context.Background())
		wantStop(t, res, err, NoToolUse)
		reqs := h.model.requests()
		if len(reqs) != 3 {
			t.Fatalf("%d requests", len(reqs))
		}
		last := reqs[2].Messages
		if last[len(last)-1].Text != nudgeText || last[len(last)-2].Role != provider.RoleAssistant {
			t.Errorf("no nudge before the third turn: %+v", last)
		}
	})
	t.Run("a planning run is nudged towards submit_plan", func(t *testing.T) {
		h := newHarness(t, []turn{text("The plan is X."), calls(100, "finish", `{"summary":"ok"}`)}, finishTool())
		h.cfg.Plan = &PlanRun{}
		res, err := h.run(context.Background())
		wantStop(t, res, err, Finished)
		reqs := h.model.requests()
		if last := reqs[1].Messages; last[len(last)-1].Text != planNudgeText || reqs[1].System != planSystemPrompt {
			t.Errorf("planning run nudged with %q", last[len(last)-1].Text)
		}
	})
	t.Run("a nudge gets it back on track", func(t *testing.T) {
		h := newHarness(t, []turn{text("Done, I think."), calls(100, "finish", `{"summary":"ok"}`)}, finishTool())
		res, err := h.run(context.Background())
		wantStop(t, res, err, Finished)
	})
}

func TestDeadlineAndCancel(t *testing.T) {
	t.Run("deadline already passed", func(t *testing.T) {
		h := newHarness(t, []turn{}, finishTool())
		ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		defer cancel()
		res, err := h.run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		wantStop(t, res, err, Deadline)
		if res.Steps != 0 {
			t.Errorf("steps %d", res.Steps)
		}
	})
	t.Run("deadline during a model call", func(t *testing.T) {
		ctx := newManualDeadline()
		wait := turn{fn: func(c context.Context, _ provider.Request) (*provider.Response, error) {
			ctx.expire() // the time limit passes while the model thinks
			<-c.Done()
			return nil, fmt.Errorf("post: %w", c.Err())
		}}
		h := newHarness(t, []turn{calls(100, "read_file", `{}`), wait}, echoTool("read_file"))
		res, err := h.run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		wantStop(t, res, err, Deadline)
		if res.Steps != 2 {
			t.Errorf("steps %d", res.Steps)
		}
	})
	t.Run("cancelled during a tool call", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		run := &fakeTool{name: "run", fn: func(ctx context.Context, _ json.RawMessage) (tools.Result, error) {
			cancel() // /agent stop arrives while the command runs
			return tools.Result{}, fmt.Errorf("exec: %w", ctx.Err())
		}}
		h := newHarness(t, []turn{calls(100, "run", `{"command":"sleep 100"}`)}, run)
		res, err := h.run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		wantStop(t, res, err, Cancelled)
	})
}

func TestLongToolOutputIsCut(t *testing.T) {
	big := "HEAD" + strings.Repeat("x", 100_000) + "TAIL"
	h := newHarness(t, []turn{calls(100, "run", `{}`), calls(100, "finish", `{"summary":"ok"}`)}, constTool("run", big), finishTool())
	h.cfg.Limits.MaxToolOutput = 1000
	if _, err := h.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := lastResults(t, h.model.requests())[0]
	if len(r.Content) > 1100 || !strings.HasPrefix(r.Content, "HEAD") || !strings.HasSuffix(r.Content, "TAIL") || !strings.Contains(r.Content, "bytes cut from the middle") {
		t.Errorf("model saw %d bytes: %.80q…", len(r.Content), r.Content)
	}
	if ev := h.toolEvents()[0]; ev.ResultBytes != len(big) || ev.Result != r.Content {
		t.Errorf("ledger result_bytes %d, result matches model's view: %v", ev.ResultBytes, ev.Result == r.Content)
	}
}

func TestCallsAfterFinishAreNotRun(t *testing.T) {
	edit := echoTool("edit")
	h := newHarness(t, []turn{calls(100, "finish", `{"summary":"ok"}`, "edit", `{"x":1}`)}, edit, finishTool())
	res, err := h.run(context.Background())
	wantStop(t, res, err, Finished)
	if len(edit.calls()) != 0 {
		t.Error("a call after finish ran")
	}
	evs := h.toolEvents()
	if len(evs) != 2 || !strings.HasPrefix(evs[1].Result, "not run") {
		t.Errorf("ledger %+v", evs)
	}
}

func TestBadConfig(t *testing.T) {
	good := newHarness(t, nil, finishTool()).cfg
	cases := map[string]func(c *Config){
		"no provider":     func(c *Config) { c.Provider = nil },
		"no ledger":       func(c *Config) { c.Ledger = nil },
		"no tools":        func(c *Config) { c.Tools = nil },
		"duplicate tools": func(c *Config) { c.Tools = []tools.Tool{finishTool(), finishTool()} },
		"unnamed tool":    func(c *Config) { c.Tools = []tools.Tool{constTool("", "")} },
	}
	for name, mut := range cases {
		t.Run(name, func(t *testing.T) {
			c := good
			mut(&c)
			if _, err := Run(context.Background(), c); err == nil {
				t.Error("accepted")
			}
		})
	}
}

type failAfter struct{ n int }

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n--; f.n < 0 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

func TestLedgerFailureIsInfrastructure(t *testing.T) {
	h := newHarness(t, []turn{calls(100, "read_file", `{}`), calls(100, "finish", `{}`)}, echoTool("read_file"), finishTool())
	h.cfg.Ledger = ledger.New(&failAfter{n: 2}, ledger.Options{}) // run_start and one turn
	res, err := h.run(context.Background())
	wantStop(t, res, err, Infrastructure)
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("err %v", err)
	}
}

func TestCompactionNearWindow(t *testing.T) {
	big := strings.Repeat("observation ", 1000) // 12,000 bytes, ~3,000 tokens
	var script []turn
	for i := range 6 {
		script = append(script, calls(0, "read_file", fmt.Sprintf(`{"path":"f%d"}`, i)))
	}
	script = append(script, calls(0, "finish", `{"summary":"ok"}`))
	h := newHarness(t, script, constTool("read_file", big), finishTool())
	h.cfg.Limits.ContextWindow = 10_000 // compaction above 8,000, down to 6,000
	h.cfg.Limits.KeepRecent = 2
	res, err := h.run(context.Background())
	wantStop(t, res, err, Finished)
	reqs := h.model.requests()
	for i, r := range reqs {
		if est := estimateTokens(r); est > 8000 {
			t.Errorf("request %d was sent at about %d tokens", i+1, est)
		}
		if r.Messages[0].Text != reqs[0].Messages[0].Text {
			t.Errorf("request %d changed the opening message", i+1)
		}
		// The latest observation is always whole.
		if n := len(r.Messages); n > 1 {
			for _, tr := range r.Messages[n-1].ToolResults {
				if tr.Content != big {
					t.Errorf("request %d: latest observation was replaced", i+1)
				}
			}
		}
	}
	last := reqs[len(reqs)-1]
	if !strings.Contains(last.Messages[2].ToolResults[0].Content, "[earlier output of read_file removed") {
		t.Errorf("oldest observation kept: %.60q", last.Messages[2].ToolResults[0].Content)
	}
	if !strings.Contains(h.types(), "compaction") {
		t.Errorf("no compaction recorded: %s", h.types())
	}
}

func TestLogsStepToolAndStop(t *testing.T) {
	var buf strings.Builder
	h := newHarness(t, []turn{calls(100, "read_file", `{}`), calls(100, "finish", `{"summary":"ok"}`)}, echoTool("read_file"), finishTool())
	h.cfg.Logger = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if _, err := h.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`msg="tool call" step=1 tool=read_file`, `msg="agent stopped" stop=finished step=2`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, buf.String())
		}
	}
}

// manualDeadline is a context whose deadline passes when the test says
// so, so deadline tests never race a clock.
type manualDeadline struct {
	context.Context
	once sync.Once
	done chan struct{}
}

func newManualDeadline() *manualDeadline {
	return &manualDeadline{Context: context.Background(), done: make(chan struct{})}
}

func (m *manualDeadline) expire() { m.once.Do(func() { close(m.done) }) }

func (m *manualDeadline) Deadline() (time.Time, bool) {
	return time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC), true
}

func (m *manualDeadline) Done() <-chan struct{} { return m.done }

func (m *manualDeadline) Err() error {
	select {
	case <-m.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// TestSmallWindowCompactsBeforeOverflowing (issue 24): a local model with
// a 16k window, as the prices file or PATCHWRIGHT_CONTEXT_WINDOW gives it,
// reads file after file; without compaction the conversation would pass
// its window by the fifth read. Every request stays within the window
// less the room for a reply, and compaction is recorded.
func TestSmallWindowCompactsBeforeOverflowing(t *testing.T) {
	big := strings.Repeat("observation ", 1500) // 18,000 bytes, ~4,500 tokens
	var script []turn
	for i := range 8 {
		script = append(script, calls(0, "read_file", fmt.Sprintf(`{"path":"f%d"}`, i)))
	}
	script = append(script, calls(0, "finish", `{"summary":"ok"}`))
	h := newHarness(t, script, constTool("read_file", big), finishTool())
	win, err := provider.WindowFromEnv("openai:qwen2.5-coder:7b", func(k string) string {
		return map[string]string{provider.EnvContextWindow: "16384"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	h.cfg.Limits.ContextWindow, h.cfg.Limits.OutputLimit = win.Context, 2048
	h.cfg.Limits.KeepRecent = 2
	res, err := h.run(context.Background())
	wantStop(t, res, err, Finished)
	reqs := h.model.requests()
	if total := 8 * len(big) / 4; int64(total) < win.Context {
		t.Fatalf("the script's observations (%d tokens) fit the window: the test shows nothing", total)
	}
	for i, r := range reqs {
		if est := estimateTokens(r); est > win.Context-2048 {
			t.Errorf("request %d was sent at about %d tokens, past the %d-token window less the reply", i+1, est, win.Context)
		}
	}
	if !strings.Contains(h.types(), "compaction") {
		t.Errorf("no compaction recorded: %s", h.types())
	}
	// The default window would not have compacted this run: the window
	// is the model's own, not a fixed one.
	if d := (Limits{ContextWindow: DefaultLimits.ContextWindow}); d.compactAbove() < 8*int64(len(big))/4 {
		t.Fatalf("the default window would compact this run too")
	}
}

func TestCompactAbove(t *testing.T) {
	for _, tc := range []struct {
		window, output, want int64
	}{
		{16_384, 0, 16_384 - 16_384/5}, // unknown output: a fifth
		{16_384, 2048, 16_384 - 2048},  // a small output limit keeps less room
		{200_000, 64_000, 160_000},     // a large one at most a fifth
		{1_047_576, 32_768, 1_014_808}, // a large window is used, not 128k
	} {
		if got := (Limits{ContextWindow: tc.window, OutputLimit: tc.output}).compactAbove(); got != tc.want {
			t.Errorf("window %d output %d: compaction above %d, want %d", tc.window, tc.output, got, tc.want)
		}
	}
}
