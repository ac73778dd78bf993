package githubjob_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/patchwright/patchwright/jobs/pipeline"
)

// BenchmarkLabelToPR is the application's own latency: a signed
// issues.labeled delivery through the real webhook handler, Redis, a
// real asynq worker, the real pipeline and sandbox and the GitHub fake,
// with a model that answers at once (three scripted turns), until the pull
// request is open. It reports the wall time from the delivery to the
// completed task, the pipeline's own figure from the enqueue to the
// published pull request (phases.json), and each phase's share.
//
// go test -run '^$' -bench BenchmarkLabelToPR -benchtime 3x ./jobs/githubjob/
func BenchmarkLabelToPR(b *testing.B) {
	phases := map[pipeline.Phase]time.Duration{}
	var toPR, wall time.Duration
	for b.Loop() {
		b.StopTimer()
		e := newE2E(b,
			call("read_file", `{"path":"greeting.txt"}`),
			call("edit", `{"edits":[{"path":"greeting.txt","old_text":"helo","new_text":"hello"}]}`),
			call("finish", `{"summary":"Fixed the spelling in greeting.txt."}`),
		)
		stop := e.startWorker()
		b.StartTimer()
		start := time.Now()
		if code := e.label(1, "bench-label"); code != http.StatusAccepted {
			b.Fatalf("label: %d, want 202", code)
		}
		info := e.waitTask("bench-label", asynq.TaskStateCompleted, asynq.TaskStateArchived)
		wall += time.Since(start)
		b.StopTimer()
		if info.State != asynq.TaskStateCompleted || len(e.fake.Pulls(owner, repoName)) != 1 {
			b.Fatalf("task %s (%s), %d pull requests", info.State, info.LastErr, len(e.fake.Pulls(owner, repoName)))
		}
		tm := readTimings(b, e.pipe.DataDir)
		toPR += time.Duration(tm.ToPublishedMS) * time.Millisecond
		for _, p := range tm.Phases {
			phases[p.Phase] += time.Duration(p.DurationMS) * time.Millisecond
		}
		stop()
		b.StartTimer()
	}
	n := float64(b.N)
	b.ReportMetric(float64(wall.Milliseconds())/n, "label-to-done-ms")
	b.ReportMetric(float64(toPR.Milliseconds())/n, "enqueue-to-pr-ms")
	for p, d := range phases {
		b.ReportMetric(float64(d.Milliseconds())/n, strings.ReplaceAll(string(p), " ", "-")+"-ms")
	}
}

// readTimings reads the one run's phases.json under the pipeline's data
// directory.
func readTimings(b *testing.B, dataDir string) pipeline.Timings {
	b.Helper()
	files, _ := filepath.Glob(filepath.Join(dataDir, "runs", "*", pipeline.FilePhases))
	if len(files) != 1 {
		b.Fatalf("phases files %v, want one", files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		b.Fatal(err)
	}
	var tm pipeline.Timings
	if err := json.Unmarshal(data, &tm); err != nil {
		b.Fatal(err)
	}
	if tm.ToPublishedMS == 0 {
		b.Fatalf("phases.json has no time to the pull request: %s", data)
	}
	return tm
}
