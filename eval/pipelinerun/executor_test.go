package pipelinerun

import (
	"context"
	"testing"

	"github.com/patchwright/patchwright/eval"
	"github.com/patchwright/patchwright/jobs/pipeline"
	"github.com/patchwright/patchwright/sandbox"
)

// TestExecutorKeepsTheBase: a run's executor is the base (what cmd builds
// for every command) with only the run's own fields set.
func TestExecutorKeepsTheBase(t *testing.T) {
	inner := &countingRunner{}
	bound := func(context.Context, string) (func() error, error) { return func() error { return nil }, nil }
	base := pipeline.Executor{
		Sandboxes: inner, DefaultImage: "operator/image:1", BoundWorkspace: bound,
		SandboxLimits: sandbox.Limits{MemoryBytes: 3 << 30, CPUs: 1.5, PIDs: 300}, SandboxRuntime: "runsc",
		CacheVolume: pipeline.RepoCacheVolume, WorkDir: "/work", CheckTimeout: 7,
	}
	r := &Runner{Base: base}
	e := r.Executor(eval.RunRequest{Image: "task/image", MaxSteps: 9, CacheVolume: "cache-1"})
	if e.DefaultImage != base.DefaultImage || e.SandboxLimits != base.SandboxLimits || e.SandboxRuntime != base.SandboxRuntime ||
		e.BoundWorkspace == nil || e.WorkDir != base.WorkDir || e.CheckTimeout != base.CheckTimeout {
		t.Fatalf("executor %+v lost the base's settings %+v", e, base)
	}
	if e.Image != "task/image" || e.MaxSteps != 9 || !e.CommitStopped || e.CacheVolume("any") != "cache-1" {
		t.Fatalf("executor %+v lacks the run's own fields", e)
	}
	if g, ok := e.Sandboxes.(*guard); !ok || g.Runner != inner {
		t.Fatalf("sandboxes %T: want the leak guard over the base's", e.Sandboxes)
	}
	if r.Base.Image != "" || r.Base.CommitStopped || r.Base.Sandboxes != inner {
		t.Fatalf("the base was changed: %+v", r.Base)
	}
}
