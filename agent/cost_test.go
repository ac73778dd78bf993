package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/agent/provider"
)

// A dollar per thousand input tokens, so the test reads in round sums.
func perThousand(_ string, u provider.Usage) (float64, bool) {
	return float64(u.InputTokens) / 1000, true
}

// The cost cap stops the run between steps: the turn that crossed it has
// its tool calls run, no further request is sent, and the ledger's
// run_stop says why.
func TestCostCapStopsBetweenSteps(t *testing.T) {
	read := echoTool("read_file")
	h := newHarness(t, []turn{calls(600, "read_file", `{}`), calls(600, "read_file", `{}`), calls(100, "finish", `{}`)}, read, finishTool())
	h.cfg.Limits.MaxCostUSD = 1
	h.cfg.Cost = perThousand
	res, err := h.run(context.Background())
	wantStop(t, res, err, BudgetExceeded)
	if res.Steps != 2 || len(h.model.requests()) != 2 || len(read.calls()) != 2 {
		t.Errorf("steps %d, requests %d, tool calls %d; want 2, 2, 2", res.Steps, len(h.model.requests()), len(read.calls()))
	}
	if !strings.Contains(res.Detail, "$1.00") || !strings.Contains(res.Detail, "$1.20") {
		t.Errorf("detail %q does not name the cap and the spend", res.Detail)
	}
	var stopped bool
	for _, rec := range h.events() {
		if p, err := rec.Payload(); err == nil {
			if s, ok := p.(*ledger.RunStop); ok {
				stopped = s.Reason == string(BudgetExceeded)
			}
		}
	}
	if !stopped {
		t.Error("the ledger's run_stop does not say budget_exceeded")
	}
}

// Under the cap, or with no price for the model, the run goes on.
func TestCostCapNotReached(t *testing.T) {
	for name, cost := range map[string]func(string, provider.Usage) (float64, bool){
		"under the cap": perThousand,
		"no price":      func(string, provider.Usage) (float64, bool) { return 0, false },
		"no estimator":  nil,
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, []turn{calls(600, "read_file", `{}`), calls(100, "finish", `{}`)}, echoTool("read_file"), finishTool())
			h.cfg.Limits.MaxCostUSD = 5
			if name != "under the cap" {
				h.cfg.Limits.MaxCostUSD = 0.01
			}
			h.cfg.Cost = cost
			res, err := h.run(context.Background())
			wantStop(t, res, err, Finished)
		})
	}
}
