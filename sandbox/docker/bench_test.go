package docker_test

import (
	"context"
	"os/exec"
	"slices"
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

// BenchmarkExecSteps breaks an exec down into its engine calls (see
// docker.ExecSteps), for a bare `true` (the floor of one engine exec) and
// for `true` in Exec's wrapper, beside Exec itself (on the resident
// starter when one is configured: the tests build it, see TestMain), Exec
// with Options.EngineExec (engineExec) and the CLI, interleaved
// in one loop so that load from elsewhere falls on all of them alike. It
// reports medians: on a shared machine the means follow the outliers.
//
//	go test -run '^$' -bench ExecSteps -benchtime=40x ./sandbox/docker/
func BenchmarkExecSteps(b *testing.B) {
	d := sandboxtest.NewDocker(b, docker.Options{})
	sb := sandboxtest.New(b, d, sandbox.Spec{})
	engine := sandboxtest.New(b, sandboxtest.NewDocker(b, docker.Options{EngineExec: true}), sandbox.Spec{})
	if docker.StarterPID(sb) == 0 {
		b.Logf("no starter: %v", docker.StarterErr(sb))
	}
	ctx := context.Background()
	argv := map[string][]string{
		"bare":    {"true"},
		"wrapped": {"/bin/sh", "-c", docker.WrapScript, "sh", "60.000", "true"},
	}
	steps := []string{"create", "start", "stream", "inspect"}
	times := map[string][]time.Duration{}
	raw := func(name string) {
		// In the engine-exec sandbox: the wrapper's kill -9 -1 would end
		// the other's starter.
		took, err := docker.ExecSteps(ctx, engine, argv[name])
		if err != nil {
			b.Fatal(err)
		}
		total := time.Duration(0)
		for i, step := range steps {
			times[name+"-"+step] = append(times[name+"-"+step], took[i])
			total += took[i]
		}
		times[name] = append(times[name], total)
	}
	runs := []func(){
		func() { raw("bare") },
		func() { raw("wrapped") },
		func() {
			t := time.Now()
			if res, err := sb.Exec(ctx, sandbox.Command{Script: "true"}); err != nil || res.ExitCode != 0 {
				b.Fatalf("Exec(true) = %+v, %v", res, err)
			}
			times["Exec"] = append(times["Exec"], time.Since(t))
		},
		func() {
			t := time.Now()
			if res, err := engine.Exec(ctx, sandbox.Command{Script: "true"}); err != nil || res.ExitCode != 0 {
				b.Fatalf("Exec(true) = %+v, %v", res, err)
			}
			times["engineExec"] = append(times["engineExec"], time.Since(t))
		},
		func() {
			t := time.Now()
			if out, err := exec.Command("docker", "exec", sb.ID(), "true").CombinedOutput(); err != nil {
				b.Fatalf("docker exec: %v: %s", err, out)
			}
			times["cli"] = append(times["cli"], time.Since(t))
		},
	}
	// Each iteration starts with the next one, so that none always
	// follows the same other: the engine's work after an exec can slow
	// the one after it.
	for i := 0; b.Loop(); i++ {
		for j := range runs {
			runs[(i+j)%len(runs)]()
		}
	}
	median := func(name string) float64 {
		ts := slices.Clone(times[name])
		slices.Sort(ts)
		return float64(ts[len(ts)/2]) / 1e6
	}
	for name := range times {
		b.ReportMetric(median(name), name+"-ms")
	}
	b.ReportMetric(median("Exec")/median("cli"), "Exec/cli")
	b.ReportMetric(median("bare")/median("cli"), "bare/cli")
	b.ReportMetric(median("engineExec")/median("cli"), "engineExec/cli")
}
