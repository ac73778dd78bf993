package pipeline

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/provider"
	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/docker"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// BenchmarkRunOverhead is a run's infrastructure overhead: a whole
// pipeline run (Execute, as `patchwright run` does it) with an instant
// scripted model (one write, then finish) and `verify: true` on a small
// repository, against its baseline in the same iteration: bare
// containers doing the same work (one per sandbox the run starts, agent,
// baseline and final, with `true` run in the two check containers), on
// the tree as it is, without copies or a cache. Both halves of every
// iteration run back to back, so load changes hit them alike. Reported:
// run-ms, bare-ms, overhead-ms (their difference) and the run's phases
// (ms each).
//
//	go test -run '^$' -bench BenchmarkRunOverhead -benchtime 5x ./jobs/pipeline/
func BenchmarkRunOverhead(b *testing.B) {
	image := sandboxtest.Image(b)
	engine := sandboxtest.NewDocker(b, docker.Options{})
	files := calcFiles(false)
	files[".github/agent.yml"] = "verify:\n  - name: ok\n    run: \"true\"\n"
	repo := gitRepo(b, files)
	ctx := context.Background()
	var run, bare time.Duration
	phases := map[Phase]time.Duration{}
	n := 0
	for b.Loop() {
		start := time.Now()
		tm := overheadRun(b, engine, image, repo, n)
		run += time.Since(start)
		for _, p := range tm.Phases {
			phases[p.Phase] += p.Duration
		}
		start = time.Now()
		bareContainers(b, ctx, engine, image)
		bare += time.Since(start)
		n++
	}
	perRun := func(d time.Duration) float64 { return float64(d.Milliseconds()) / float64(n) }
	b.ReportMetric(perRun(run), "run-ms")
	b.ReportMetric(perRun(bare), "bare-ms")
	b.ReportMetric(perRun(run-bare), "overhead-ms")
	names := make([]Phase, 0, len(phases))
	for p := range phases {
		names = append(names, p)
	}
	slices.Sort(names)
	for _, p := range names {
		b.ReportMetric(perRun(phases[p]), strings.ReplaceAll(string(p), " ", "-")+"-ms")
	}
}

// overheadRun is one pipeline run with an instant model; it returns its
// timings.
func overheadRun(b *testing.B, engine *docker.Docker, image, repo string, n int) Timings {
	b.Helper()
	srv := pt.New(b,
		call("write_file", `{"path":"notes.txt","content":"hello\n"}`),
		call("finish", `{"summary":"Added notes."}`),
	)
	p, err := provider.New("openai:"+pt.OpenAIModel, srv.Options(provider.NameOpenAI))
	if err != nil {
		b.Fatal(err)
	}
	var tm Timings
	e := &Executor{
		Sandboxes:   engine,
		Provider:    p,
		Image:       image,
		CacheVolume: func(string) string { return sandboxtest.CacheVolumeFor(image) },
		Timings:     func(t Timings) { tm = t },
	}
	res, err := e.Execute(context.Background(), Job{ID: fmt.Sprintf("bench-overhead-%d", n), RepoURL: repo,
		Issue: agent.Issue{Title: fmt.Sprintf("Add notes %d", n)}, OutDir: filepath.Join(b.TempDir(), "out"), Publisher: LocalPublisher{}})
	if err != nil {
		b.Fatal(err)
	}
	if res.Outcome != "verified" {
		b.Fatalf("outcome %s (%s), want verified", res.Outcome, res.Reason)
	}
	return tm
}

// bareContainers is the baseline: the containers a run starts, on the
// tree as it is, with the checks' one command.
func bareContainers(b *testing.B, ctx context.Context, engine *docker.Docker, image string) {
	b.Helper()
	ws := sandboxtest.Workspace(b)
	for i := range 3 {
		sb, err := engine.Create(ctx, sandbox.Spec{Image: image, Workspace: ws, JobID: "bench-bare"})
		if err != nil {
			b.Fatal(err)
		}
		if i > 0 {
			if _, err := sb.Exec(ctx, sandbox.Command{Script: "true"}); err != nil {
				b.Fatal(err)
			}
		}
		sb.Close()
	}
}
