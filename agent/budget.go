package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/patchwright/patchwright/agent/provider"
)

// costStop ends the run once its estimated cost reaches the cap. It runs
// between steps, outside the model: the tool calls of the turn that
// crossed the cap have run, and no further request is sent.
func (r *runner) costStop() *stop {
	if r.lim.MaxCostUSD <= 0 {
		return nil
	}
	usd, known := costOf(r.byModel, r.cfg.Cost)
	if !known {
		if !r.costUnknown {
			r.costUnknown = true
			r.log.Warn("the model has no price in the price table: the run's cost cap is not enforced", "cap_usd", r.lim.MaxCostUSD)
		}
		return nil
	}
	if usd < r.lim.MaxCostUSD {
		return nil
	}
	return &stop{BudgetExceeded, fmt.Sprintf("the run's cost cap of $%.2f was reached ($%.2f spent by the estimate of the price table)", r.lim.MaxCostUSD, usd), nil}
}

// count adds one call's usage to the run's, under the model that
// answered it.
func (r *runner) count(model string, u provider.Usage) {
	r.usage = r.usage.Add(u)
	r.byModel[model] = r.byModel[model].Add(u)
}

// Cost is the run's estimated cost: each model's usage priced by price
// (Config.Cost's kind), summed. known is false when price is nil or a
// model the run called has no price.
func (res Result) Cost(price func(model string, u provider.Usage) (float64, bool)) (usd float64, known bool) {
	return costOf(res.ByModel, price)
}

func costOf(byModel map[string]provider.Usage, price func(string, provider.Usage) (float64, bool)) (float64, bool) {
	if price == nil {
		return 0, false
	}
	total := 0.0
	for model, u := range byModel {
		usd, known := price(model, u)
		if !known {
			return 0, false
		}
		total += usd
	}
	return total, true
}

func (r *runner) budgetStop() *stop {
	return &stop{TokenBudget, fmt.Sprintf("the input-token budget of %d would be exceeded (%d used)", r.lim.MaxInputTokens, r.usage.InputTokens), nil}
}

// estimate is the coming request's size in tokens: the provider's count
// for the last request plus the bytes added since, or bytes alone when
// there is no count to start from.
func (r *runner) estimate() int64 {
	if r.lastInput == 0 {
		return estimateTokens(r.req)
	}
	return r.lastInput + int64(r.messagesBytes()-r.lastBytes)/4
}

func (r *runner) messagesBytes() int {
	n := 0
	for _, m := range r.req.Messages {
		n += messageBytes(m)
	}
	return n
}

// cutStop is the Interrupted stop for a model request that failed once
// the interrupt came (its stream was cut, or it failed anyway: the run
// would stop before the next request), nil otherwise.
func (r *runner) cutStop(ctx context.Context, err error) *stop {
	if err == nil || ctx.Err() != nil {
		return nil
	}
	return interruptStop(ctx)
}

func (r *runner) countPlaceholders() int {
	n := 0
	for _, m := range r.req.Messages {
		for _, tr := range m.ToolResults {
			if strings.HasPrefix(tr.Content, placeholderPrefix) {
				n++
			}
		}
	}
	return n
}
