// Package pipelinerun runs eval's tasks through the pipeline of
// `patchwright run` (jobs/pipeline): the one adapter between the benchmark
// and the product, so that what is measured is exactly what users run.
package pipelinerun

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"sync"
	"time"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/provider"
	"github.com/patchwright/patchwright/eval"
	"github.com/patchwright/patchwright/jobs/pipeline"
	"github.com/patchwright/patchwright/sandbox"
)

// Runner is an eval.Runner over pipeline.Executor with its LocalPublisher:
// each run clones the run's own repository, and the result branch is
// pushed back to it.
type Runner struct {
	// Provider is the model; shared by concurrent runs. Required.
	Provider provider.Provider
	// Sandboxes creates the runs' containers. Required.
	Sandboxes sandbox.Runner
	// Images, when set, checks that the chosen image exists.
	Images pipeline.ImageChecker
	// CheckTimeout bounds each verification check; zero for the
	// pipeline's default.
	CheckTimeout time.Duration
	// WorkDir holds the pipeline's temporary clones; default os.TempDir().
	WorkDir string
	// Logger receives the agent's log lines; nil discards them.
	Logger *slog.Logger
}

var unsafe = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// Run runs one task once. A stopped run's change is committed (the
// pipeline's --commit-stopped), so that the hidden tests judge what the
// run did rather than count every stopped run as unresolved.
func (r *Runner) Run(ctx context.Context, req eval.RunRequest) (eval.RunResult, error) {
	exec := &pipeline.Executor{
		Sandboxes:     &guard{Runner: r.Sandboxes, check: req.CheckTree},
		Provider:      r.Provider,
		Images:        r.Images,
		Image:         req.Image,
		DefaultImage:  req.DefaultImage,
		MaxSteps:      req.MaxSteps,
		CommitStopped: true,
		WorkDir:       r.WorkDir,
		CacheVolume:   func(string) string { return req.CacheVolume },
		CheckTimeout:  r.CheckTimeout,
		Logger:        r.Logger,
	}
	id := fmt.Sprintf("eval-%s-%d", unsafe.ReplaceAllString(req.Task.ID, "-"), req.Run)
	if len(id) > 100 {
		id = id[len(id)-100:]
	}
	res, err := exec.Execute(ctx, pipeline.Job{
		ID: id, RepoURL: req.Repo, OutDir: req.OutDir,
		Issue:     agent.Issue{Title: req.Title, Body: req.Body},
		Publisher: pipeline.LocalPublisher{},
	})
	if res == nil {
		return eval.RunResult{}, err
	}
	return eval.RunResult{
		Outcome: string(res.Outcome), Reason: res.Reason, HeadCommit: res.HeadCommit, Steps: res.Steps,
		Usage: eval.Usage{
			InputTokens: res.Usage.InputTokens, OutputTokens: res.Usage.OutputTokens,
			CachedInputTokens: res.Usage.CachedInputTokens, CacheWriteTokens: res.Usage.CacheWriteTokens,
		},
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
