package agent

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/agent/provider"
	"github.com/patchwright/patchwright/agent/tools"
)

// A drain's interrupt, arriving while a turn's tool call runs, stops the
// run before the next request, like the cost cap: the call completes,
// no further request is sent, and the ledger's run_stop says interrupted.
// Without an interrupt channel the run goes on to finish.
func TestInterruptStopsBetweenSteps(t *testing.T) {
	ch := make(chan struct{})
	edit := &fakeTool{name: "edit", fn: func(context.Context, json.RawMessage) (tools.Result, error) {
		close(ch) // the drain's margin starts during this step
		return tools.Result{Text: "edited"}, nil
	}}
	h := newHarness(t, []turn{calls(10, "edit", `{}`), calls(10, "edit", `{}`), calls(10, "finish", `{}`)}, edit, finishTool())
	res, err := h.run(WithInterrupt(context.Background(), ch))
	wantStop(t, res, err, Interrupted)
	if res.Steps != 1 || len(h.model.requests()) != 1 || len(edit.calls()) != 1 {
		t.Errorf("steps %d, requests %d, tool calls %d; want 1, 1, 1", res.Steps, len(h.model.requests()), len(edit.calls()))
	}
	var stopped bool
	for _, rec := range h.events() {
		if p, err := rec.Payload(); err == nil {
			if s, ok := p.(*ledger.RunStop); ok {
				stopped = s.Reason == string(Interrupted)
			}
		}
	}
	if !stopped {
		t.Error("the ledger's run_stop does not say interrupted")
	}

	h = newHarness(t, []turn{calls(10, "read_file", `{}`), calls(10, "finish", `{}`)}, echoTool("read_file"), finishTool())
	res, err = h.run(WithInterrupt(context.Background(), nil))
	wantStop(t, res, err, Finished)
}

// An interrupt during a long tool call (a test run, say) cuts it short:
// the call's context ends, the run stops Interrupted rather than failing
// on the tool's error, the ledger records the call as cut, and what the
// call changed stays in the run's changed files.
func TestInterruptCutsALongToolCall(t *testing.T) {
	ch := make(chan struct{})
	run := &fakeTool{name: "run", fn: func(ctx context.Context, _ json.RawMessage) (tools.Result, error) {
		close(ch) // the drain's margin starts while the command runs
		<-ctx.Done()
		return tools.Result{Changed: []string{"out.txt"}}, ctx.Err()
	}}
	h := newHarness(t, []turn{calls(10, "run", `{}`), calls(10, "finish", `{}`)}, run, finishTool())
	res, err := h.run(WithInterrupt(context.Background(), ch))
	wantStop(t, res, err, Interrupted)
	if len(h.model.requests()) != 1 {
		t.Errorf("%d model requests, want 1", len(h.model.requests()))
	}
	if !slices.Contains(res.Changed, "out.txt") {
		t.Errorf("changed %v: the cut call's change is lost", res.Changed)
	}
	var recorded bool
	for _, rec := range h.events() {
		if p, err := rec.Payload(); err == nil {
			if c, ok := p.(*ledger.ToolCall); ok && c.Tool == "run" {
				recorded = c.Result == cutText && c.Failure == ""
			}
		}
	}
	if !recorded {
		t.Error("the ledger does not record the run call as cut short")
	}
}

// A call that ends by itself just as the interrupt comes keeps its own
// result; the calls of the turn after it are answered "not run".
func TestInterruptSkipsTheTurnsLaterCalls(t *testing.T) {
	ch := make(chan struct{})
	first := &fakeTool{name: "edit", fn: func(context.Context, json.RawMessage) (tools.Result, error) {
		close(ch)
		return tools.Result{Text: "edited"}, nil
	}}
	second := echoTool("read_file")
	h := newHarness(t, []turn{calls(10, "edit", `{}`, "read_file", `{}`), calls(10, "finish", `{}`)}, first, second, finishTool())
	res, err := h.run(WithInterrupt(context.Background(), ch))
	wantStop(t, res, err, Interrupted)
	if len(second.calls()) != 0 {
		t.Errorf("the call after the interrupt ran %d times, want 0", len(second.calls()))
	}
	results := map[string]string{}
	for _, rec := range h.events() {
		if p, err := rec.Payload(); err == nil {
			if c, ok := p.(*ledger.ToolCall); ok {
				results[c.Tool] = c.Result
			}
		}
	}
	if results["edit"] != "edited" || !strings.HasPrefix(results["read_file"], "not run") {
		t.Errorf("ledger results %q: want edit's own and read_file not run", results)
	}
}

// An interrupt while the model's answer streams drops the request: the
// run stops Interrupted, not as a provider error.
func TestInterruptCutsAModelRequest(t *testing.T) {
	ch := make(chan struct{})
	slow := turn{fn: func(ctx context.Context, _ provider.Request) (*provider.Response, error) {
		close(ch)
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	h := newHarness(t, []turn{slow, calls(10, "finish", `{}`)}, finishTool())
	res, err := h.run(WithInterrupt(context.Background(), ch))
	wantStop(t, res, err, Interrupted)
	if err != nil {
		t.Errorf("err %v, want none", err)
	}
}
