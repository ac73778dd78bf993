package githubjob

import (
	"context"
	"log/slog"

	"github.com/patchwright/patchwright/internal/logkey"
	"github.com/patchwright/patchwright/jobs/budget"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// Budget is what monthly caps need (jobs/budget.Store).
type Budget interface {
	// Reserve holds usd of the month's caps for task until Settle, or
	// returns a *budget.Refusal when a cap is spent or held.
	Reserve(ctx context.Context, issue tasks.Issue, task string, usd float64) error
	// Settle counts the run's cost in place of task's hold.
	Settle(ctx context.Context, issue tasks.Issue, task string, usd float64) error
	// SettleAbandoned settles the hold of a task whose worker died.
	SettleAbandoned(ctx context.Context, issue tasks.Issue, task string) error
}

func isBudgetRefusal(err error) bool {
	_, ok := budget.AsRefusal(err)
	return ok
}

// reserve holds the operator's per-run cap (the most a run may cost
// before the repository's configuration is read, which can only lower
// it) from the monthly budgets, before the clone and the model: a spent
// budget costs nothing more. The settle it returns counts the run's cost
// (nil: none known) in place of the hold; it is called once, on every
// path, and outlives a cancelled ctx.
func (p *Pipeline) reserve(ctx context.Context, issue tasks.Issue, task string, log *slog.Logger) (settle func(cost *float64), err error) {
	if p.Budget == nil {
		return func(*float64) {}, nil
	}
	if err := p.Budget.Reserve(ctx, issue, task, p.Executor.MaxRunCostUSD); err != nil {
		return nil, err
	}
	return func(cost *float64) {
		usd := 0.0
		if cost != nil {
			usd = *cost
		}
		if err := p.Budget.Settle(context.WithoutCancel(ctx), issue, task, usd); err != nil {
			log.Error("the run's cost is not counted against the monthly budgets", logkey.Err, err)
		}
	}, nil
}

// RunNoter keeps what each run of an agent pull request cost and which
// model it used, for the pull request's outcome (jobs/outcomes.Store).
type RunNoter interface {
	// NoteRun keeps a run of issue (Number is the issue's) published to
	// pull request pr.
	NoteRun(ctx context.Context, issue tasks.Issue, pr int, model string, cost *float64) error
}
