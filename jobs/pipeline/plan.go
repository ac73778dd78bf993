package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/provider"
	"github.com/patchwright/patchwright/agent/secrets"
	"github.com/patchwright/patchwright/agent/tools"
	"github.com/patchwright/patchwright/jobs/gitrepo"
)

// PlanResult is how a planning run ended.
type PlanResult struct {
	// Plan is the model's submitted plan (tools.PlanText), "" when it
	// did not submit one.
	Plan string
	// Stop and Detail say how the loop ended.
	Stop   agent.StopReason
	Detail string
	Steps  int
	Usage  provider.Usage
	// CostUSD is the estimated model cost; nil without a price.
	CostUSD *float64
}

// Plan runs a read-only attempt at job: the clone and the trusted
// configuration as Execute reads them, then the model loop with the
// planning tool set (tools.Options.ReadOnly) and no sandbox at all: no
// setup, no command, no change, no commit and no publish. The ledger is
// written to job.OutDir as for any run. job.Publisher is not used.
func (e *Executor) Plan(ctx context.Context, job Job) (*PlanResult, error) {
	if e.Provider == nil {
		return nil, errors.New("executor: no model provider")
	}
	if job.Publisher == nil {
		job.Publisher = noPublisher{}
	}
	if err := job.validate(); err != nil {
		return nil, fmt.Errorf("executor: %w", err)
	}
	scanner, err := secrets.Default()
	if err != nil {
		return nil, err
	}
	r := &run{e: e, job: job, start: e.now(), scanner: scanner}
	defer r.cleanup()
	r.traceUnder(job.Span)
	defer r.endTrace()
	if err := r.prepare(ctx); err != nil {
		return nil, scrubPaths(err, r.clone.tmp)
	}
	if err := os.MkdirAll(job.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("create output directory: %w", err)
	}
	if err := r.openLedger(filepath.Join(job.OutDir, FileLedger)); err != nil {
		return nil, err
	}
	defer r.closeLedger()
	set, err := tools.New(tools.Options{Workspace: r.ws, Protected: r.protected(), Secrets: r.scanner, ReadOnly: true})
	if err != nil {
		return nil, configError{err}
	}
	// The planning instruction is the agent's own (agent.Config.Plan), in
	// the system prompt: job.Issue.Feedback holds people's words only.
	// The loop is the agent phase, as in Execute: its model turns and
	// tool calls are that phase's, not the clone's.
	r.phase(PhaseAgent)
	res, err := r.runModel(ctx, set, &agent.PlanRun{Previous: job.PreviousPlan})
	out := &PlanResult{Stop: res.Stop, Detail: res.Detail, Steps: res.Steps, Usage: res.Usage}
	if res.Stop == agent.Finished {
		out.Plan = res.Summary
	}
	if usd, ok := res.Cost(e.cost); ok {
		out.CostUSD = &usd
	}
	return out, scrubPaths(err, r.clone.tmp)
}

// noPublisher stands in for a planning job's publisher, which nothing
// calls: a plan commits and publishes nothing.
type noPublisher struct{}

func (noPublisher) Target(context.Context, *gitrepo.Repo, Job) (Target, error) {
	return Target{}, errors.New("a planning run has no target")
}

func (noPublisher) Publish(context.Context, *gitrepo.Repo, *Result) (string, error) {
	return "", errors.New("a planning run publishes nothing")
}
