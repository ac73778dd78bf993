package agent

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/patchwright/patchwright/agent/ledger"
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
