package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/docker"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// BenchmarkCheckSandbox is what a fresh verification container costs a
// run, per phase: copying a work tree of 2,000 files (8 MB) and starting a
// container on it, against starting one on the tree as it is (what the
// checks did before, in the agent's container, cost nothing extra).
//
//	go test -run '^$' -bench BenchmarkCheckSandbox -benchtime 10x -count 3 ./jobs/pipeline/
func BenchmarkCheckSandbox(b *testing.B) {
	image := sandboxtest.Image(b)
	engine := sandboxtest.NewDocker(b, docker.Options{})
	tmp := b.TempDir()
	work := filepath.Join(tmp, "work")
	for i := range 2000 {
		p := filepath.Join(work, fmt.Sprintf("pkg%02d", i%40), fmt.Sprintf("f%04d.go", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, 4096), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	ws, err := sandbox.OpenWorkspace(work)
	if err != nil {
		b.Fatal(err)
	}
	defer ws.Close()
	r := &run{e: &Executor{Sandboxes: engine}, job: Job{ID: "bench-check"}, clone: cloneResult{tmp: tmp, trees: tmp, image: image}, ws: ws}
	ctx := context.Background()
	// The baseline's copy of the pristine tree, and its container.
	b.Run("fresh-copy", func(b *testing.B) {
		var err error
		if r.first.pristine, err = r.keepPristine(); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			dir, err := r.baselineTree(r.first.pristine)
			if err != nil {
				b.Fatal(err)
			}
			c, err := r.newCheckSandbox(ctx, stageBaseline, dir)
			if err != nil {
				b.Fatal(err)
			}
			c.close()
		}
	})
	// The pristine copy (once a run) and the final tree made from it.
	b.Run("pristine-and-final", func(b *testing.B) {
		for b.Loop() {
			os.RemoveAll(r.first.pristine)
			var err error
			if r.first.pristine, err = r.keepPristine(); err != nil {
				b.Fatal(err)
			}
			dir, err := r.finalTree(r.first.pristine)
			if err != nil {
				b.Fatal(err)
			}
			c, err := r.newCheckSandbox(ctx, stageFinal, dir)
			if err != nil {
				b.Fatal(err)
			}
			c.close()
		}
	})
	b.Run("same-tree", func(b *testing.B) {
		if err := sandbox.HandOver(work, sandboxtest.UID, sandboxtest.GID); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			sb, err := engine.Create(ctx, sandbox.Spec{Image: image, Workspace: work, JobID: "bench-check"})
			if err != nil {
				b.Fatal(err)
			}
			sb.Close()
		}
	})
}
