package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/agent/provider"
	pt "github.com/patchwright/patchwright/agent/provider/providertest"
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

// A run that falls back to another model mid-run is priced call by call,
// each by the model that answered it: the first model's turn at its
// price, the second's at its own (not the whole run at the price of the
// model it ended on), and the cap counts the same sum.
func TestFallbackRunPricedPerCall(t *testing.T) {
	first := pt.New(t,
		pt.Turn{ToolCalls: []pt.ToolCall{pt.Call("read_file", `{}`)}, Usage: provider.Usage{InputTokens: 1000}},
		pt.Status(529, ""), pt.Status(529, ""))
	second := pt.New(t, pt.Turn{ToolCalls: []pt.ToolCall{pt.Call("finish", `{"summary":"done"}`)}, Usage: provider.Usage{InputTokens: 1000}})
	fb := pt.Fallback(t, first, second)
	// $1 per thousand input tokens on the first model, $10 on the second.
	modelA, modelB := provider.NameAnthropic+":"+pt.AnthropicModel, provider.NameOpenAI+":"+pt.OpenAIModel
	perModel := map[string]float64{modelA: 1, modelB: 10}
	h := newHarness(t, nil, echoTool("read_file"), finishTool())
	h.cfg.Provider = fb
	h.cfg.Cost = func(model string, u provider.Usage) (float64, bool) {
		price, ok := perModel[model]
		return price * float64(u.InputTokens) / 1000, ok
	}
	h.cfg.Limits.MaxCostUSD = 100
	res, err := h.run(context.Background())
	wantStop(t, res, err, Finished)
	if usd, known := res.Cost(h.cfg.Cost); !known || usd != 11 {
		t.Fatalf("cost $%g (known %v), want $11 ($1 for the first model's turn, $10 for the second's)", usd, known)
	}
	var models []string
	for _, rec := range h.events() {
		if p, err := rec.Payload(); err == nil {
			if m, ok := p.(*ledger.ModelTurn); ok && m.Error == "" {
				models = append(models, m.Model)
			}
		}
	}
	if strings.Join(models, " ") != modelA+" "+modelB {
		t.Errorf("the ledger's answered turns came from %v", models)
	}

	// One call of a model without a price makes the run's cost unknown.
	h = newHarness(t, []turn{calls(600, "finish", `{}`)}, finishTool())
	h.cfg.Cost = func(string, provider.Usage) (float64, bool) { return 0, false }
	res, err = h.run(context.Background())
	if _, known := res.Cost(h.cfg.Cost); err != nil || known {
		t.Errorf("an unpriced run: cost known %v, %v", known, err)
	}
}
