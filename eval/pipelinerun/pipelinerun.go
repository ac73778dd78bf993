// Package pipelinerun runs eval's tasks through the pipeline of
// `patchwright run` (jobs/pipeline): the one adapter between the benchmark
// and the product, so that what is measured is exactly what users run.
package pipelinerun

import (
	"context"
	"fmt"
	"regexp"
	"sync"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/eval"
	"github.com/patchwright/patchwright/jobs/pipeline"
	"github.com/patchwright/patchwright/sandbox"
)

// Runner is an eval.Runner over pipeline.Executor with its LocalPublisher:
// each run clones the run's own repository, and the result branch is
// pushed back to it.
type Runner struct {
	// Base is the executor of `patchwright run`, as cmd/patchwright builds
	// it for every command: the model, the engine, the default image, the
	// sandbox limits and runtime, the bounded work tree. Provider and
	// Sandboxes are required. Each run copies it and sets only its own
	// fields (see Executor), so what is measured is what users run.
	Base pipeline.Executor
}

var unsafe = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// Executor is the executor of one run: Base with the run's image
// override, step cap and cache volume, the leak check at the sandbox seam,
// and its stopped change committed (the pipeline's --commit-stopped), so
// that the hidden tests judge what the run did rather than count every
// stopped run as unresolved.
func (r *Runner) Executor(req eval.RunRequest) *pipeline.Executor {
	exec := r.Base
	exec.Sandboxes = &guard{Runner: r.Base.Sandboxes, check: req.CheckTree}
	exec.Image = req.Image
	exec.MaxSteps = req.MaxSteps
	exec.CommitStopped = true
	exec.CacheVolume = func(string) string { return req.CacheVolume }
	return &exec
}

// Run runs one task once.
func (r *Runner) Run(ctx context.Context, req eval.RunRequest) (eval.RunResult, error) {
	id := fmt.Sprintf("eval-%s-%d", unsafe.ReplaceAllString(req.Task.ID, "-"), req.Run)
	if len(id) > 100 {
		id = id[len(id)-100:]
	}
	res, err := r.Executor(req).Execute(ctx, pipeline.Job{
		ID: id, RepoURL: req.Repo, OutDir: req.OutDir,
		Issue:     agent.Issue{Title: req.Title, Body: req.Body},
		Publisher: pipeline.LocalPublisher{},
	})
	if res == nil {
		return eval.RunResult{}, err
	}
	return eval.RunResult{
		Outcome: string(res.Outcome), Reason: res.Reason, HeadCommit: res.HeadCommit, Steps: res.Steps,
		Usage: res.Usage,
	}, err
}

// guard is the leak check at the sandbox seam: the agent's work tree is
// checked before its container starts and again when setup's network is
// cut, since setup may fetch what the base tree did not hold. Only the
// first sandbox is the agent's; later ones (the final verification's)
// hold the model's own change, which is not evidence of a leak.
type guard struct {
	sandbox.Runner
	check func(dir string) error

	mu      sync.Mutex
	created bool
}

func (g *guard) Create(ctx context.Context, spec sandbox.Spec) (sandbox.Sandbox, error) {
	g.mu.Lock()
	first := !g.created
	g.created = true
	g.mu.Unlock()
	if !first || g.check == nil {
		return g.Runner.Create(ctx, spec)
	}
	if err := g.check(spec.Workspace); err != nil {
		return nil, err
	}
	sb, err := g.Runner.Create(ctx, spec)
	if err != nil {
		return nil, err
	}
	return guarded{Sandbox: sb, dir: spec.Workspace, check: g.check}, nil
}

type guarded struct {
	sandbox.Sandbox
	dir   string
	check func(dir string) error
}

func (g guarded) DisableNetwork(ctx context.Context) error {
	if err := g.Sandbox.DisableNetwork(ctx); err != nil {
		return err
	}
	return g.check(g.dir)
}
