package main

import (
	"context"
	"os"

	"github.com/patchwright/patchwright/jobs/pipeline"
	"github.com/patchwright/patchwright/sandbox/docker"
)

// workspaceBytes bounds each job's work tree: a command that writes more
// fails with "no space left on device" instead of filling the host's disk.
const workspaceBytes = 8 << 30

// boundWorkspace gives each job a loop-mounted filesystem of
// workspaceBytes when the process may mount one (root beside its engine,
// as the worker runs); otherwise nil, and the work tree is a plain
// directory (README, "Security model").
func boundWorkspace() func(ctx context.Context, dir string) (func() error, error) {
	if os.Geteuid() != 0 {
		return nil
	}
	return func(ctx context.Context, dir string) (func() error, error) {
		b, err := docker.NewBoundedDir(ctx, dir, dir+".img", workspaceBytes, pipeline.DefaultSandboxUID, pipeline.DefaultSandboxGID)
		if err != nil {
			return nil, err
		}
		return b.Close, nil
	}
}
