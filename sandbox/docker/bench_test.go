package docker_test

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/docker"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// The benchmarks come in pairs, ours and the docker CLI's baseline, to be
// run together:
//
//	go test -run '^$' -bench . -benchtime=20x -count=5 ./sandbox/docker/

// BenchmarkExecTrue is the round trip of `true` through Exec.
func BenchmarkExecTrue(b *testing.B) {
	d := sandboxtest.NewDocker(b, docker.Options{})
	sb := sandboxtest.New(b, d, sandbox.Spec{})
	ctx := context.Background()
	for b.Loop() {
		res, err := sb.Exec(ctx, sandbox.Command{Script: "true"})
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("Exec(true) = %+v, %v", res, err)
		}
	}
}

// BenchmarkExecTrueDockerCLI is the baseline: `docker exec CONTAINER true`.
func BenchmarkExecTrueDockerCLI(b *testing.B) {
	d := sandboxtest.NewDocker(b, docker.Options{})
	sb := sandboxtest.New(b, d, sandbox.Spec{})
	for b.Loop() {
		if out, err := exec.Command("docker", "exec", sb.ID(), "true").CombinedOutput(); err != nil {
			b.Fatalf("docker exec: %v: %s", err, out)
		}
	}
}

// BenchmarkCreateReady is Create until commands can run; Close is not
// timed.
func BenchmarkCreateReady(b *testing.B) {
	d := sandboxtest.NewDocker(b, docker.Options{})
	image := sandboxtest.Image(b)
	ws := sandboxtest.Workspace(b)
	ctx := context.Background()
	for b.Loop() {
		sb, err := d.Create(ctx, sandbox.Spec{Image: image, Workspace: ws, JobID: "bench", TTL: time.Hour})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := sb.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkCreateReadyDockerCLI is the baseline: `docker run --rm IMAGE true`.
func BenchmarkCreateReadyDockerCLI(b *testing.B) {
	image := sandboxtest.Image(b)
	for b.Loop() {
		if out, err := exec.Command("docker", "run", "--rm", image, "true").CombinedOutput(); err != nil {
			b.Fatalf("docker run: %v: %s", err, out)
		}
	}
}

// BenchmarkCreateReadyReadOnlyCache is BenchmarkCreateReady with the
// tests' shared cache volume mounted read-only and copied into the
// sandbox (Spec.CacheReadOnly); compare with BenchmarkCreateReadyCache.
func BenchmarkCreateReadyReadOnlyCache(b *testing.B) {
	benchmarkCreate(b, sandbox.Spec{CacheVolume: sandboxtest.CacheVolume, CacheReadOnly: true})
}

// BenchmarkCreateReadyCache is Create with the tests' shared cache volume
// mounted writable.
func BenchmarkCreateReadyCache(b *testing.B) {
	benchmarkCreate(b, sandbox.Spec{CacheVolume: sandboxtest.CacheVolume})
}

func benchmarkCreate(b *testing.B, spec sandbox.Spec) {
	d := sandboxtest.NewDocker(b, docker.Options{})
	spec.Image = sandboxtest.Image(b)
	spec.Workspace = sandboxtest.Workspace(b)
	spec.JobID = "bench"
	spec.TTL = time.Hour
	ctx := context.Background()
	for b.Loop() {
		sb, err := d.Create(ctx, spec)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := sb.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}
