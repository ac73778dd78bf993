//go:build e2e

// Package soak is the load-and-fault harness of the queue and its workers
// (README "Performance", docs/scaling.md): one real redis-server with an
// append-only file, several worker processes running the real
// worker.Handlers and worker.Server (locks, fairness slots, drain) on
// asynq, bursts of jobs over several installations and repositories, and
// faults on the way. What it stands in for: the pipeline (a job is a
// sleep of model-like latency and an idempotent "publish"), GitHub (its
// outage is a flag the publish waits out, as githubapi.RetryTransport
// waits out 5xx and rate limits) and the webhook (deliveries are
// jobs.Queue's enqueue calls, which the webhook makes).
//
// go test -tags e2e -run TestSoak ./bench/soak (SOAK_JOBS=N for a longer run).
package soak

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/redistest"
	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/patchwright/patchwright/jobs/worker"
)

// Environment of a worker process (TestSoakWorker).
const (
	envAddr   = "SOAK_REDIS_ADDR"
	envEvents = "SOAK_EVENTS"
	envName   = "SOAK_WORKER"
	envOutage = "SOAK_OUTAGE" // a file: while it exists, "GitHub" is down
)

// jobLatency is a job's model-like work: uniform in [jobLatency, 2×).
const jobLatency = 150 * time.Millisecond

// ev is one line of the events file, which every worker appends to: the
// record of what ran, kept outside the Redis under test.
type ev struct {
	Kind     string    `json:"kind"` // start, done, published
	Worker   string    `json:"worker"`
	Task     string    `json:"task"`
	Issue    string    `json:"issue"`
	Retry    int       `json:"retry"`
	Enqueued time.Time `json:"enqueued"`
	At       time.Time `json:"at"`
}

// recorder appends events, one write per line (O_APPEND keeps lines of
// several processes whole).
type recorder struct {
	mu sync.Mutex
	f  *os.File
}

func (r *recorder) add(e ev) {
	e.At = time.Now()
	b, _ := json.Marshal(e)
	r.mu.Lock()
	defer r.mu.Unlock()
	_, _ = r.f.Write(append(b, '\n'))
}

// standIn is the pipeline of the soak workers.
type standIn struct {
	name   string
	rec    *recorder
	outage string
}

func (s *standIn) Solve(ctx context.Context, p tasks.SolveIssue, at tasks.Attempt) error {
	e := ev{Worker: s.name, Task: at.TaskID, Issue: p.Issue.String(), Retry: at.Retry, Enqueued: at.EnqueuedAt}
	e.Kind = "start"
	s.rec.add(e)
	d := jobLatency + rand.N(jobLatency)
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
	}
	// GitHub is down: wait it out, as the retry transport does.
	for {
		if _, err := os.Stat(s.outage); os.IsNotExist(err) {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	e.Kind = "done"
	s.rec.add(e)
	return nil
}

func (s *standIn) Retry(ctx context.Context, p tasks.RetryPR, at tasks.Attempt) error {
	return s.Solve(ctx, tasks.SolveIssue{Issue: p.Issue}, at)
}

type nopCommenter struct{}

func (nopCommenter) PostComment(context.Context, tasks.Issue, string) (int64, error) { return 1, nil }
func (nopCommenter) Comments(context.Context, tasks.Issue) ([]githubapi.Comment, error) {
	return nil, nil
}
func (nopCommenter) AddReaction(context.Context, tasks.Issue, string) error               { return nil }
func (nopCommenter) AddCommentReaction(context.Context, tasks.Issue, int64, string) error { return nil }

// TestSoakWorker is a worker process of TestSoak; run any other way it is
// skipped. SIGTERM drains it (grace 100 ms).
func TestSoakWorker(t *testing.T) {
	addr := os.Getenv(envAddr)
	if addr == "" {
		t.Skip("a worker process of TestSoak")
	}
	f, err := os.OpenFile(os.Getenv(envEvents), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	q := jobs.NewQueue(rdb)
	name := os.Getenv(envName)
	h := &worker.Handlers{Queue: q, Commenter: nopCommenter{}, Logger: log,
		Pipeline: &standIn{name: name, rec: &recorder{f: f}, outage: os.Getenv(envOutage)},
		Fairness: &worker.Fairness{Inspector: asynq.NewInspectorFromRedisClient(rdb)}}
	srv := worker.NewServer(rdb, worker.Config{Concurrency: 1, ShutdownTimeout: 100 * time.Millisecond, Logger: log})
	if err := srv.Start(h.Mux()); err != nil {
		t.Fatal(err)
	}
	<-ctx.Done()
	srv.Shutdown()
}

// harness is the parent's side.
type harness struct {
	t       *testing.T
	redis   *redistest.Process
	rdb     *redis.Client
	q       *jobs.Queue
	events  string
	outage  string
	workers map[string]*exec.Cmd
}

func (h *harness) startWorker(name string) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestSoakWorker$", "-test.timeout=10m")
	cmd.Env = append(os.Environ(), envAddr+"="+h.redis.Addr(), envEvents+"="+h.events, envName+"="+name, envOutage+"="+h.outage)
	logf, err := os.Create(filepath.Join(filepath.Dir(h.events), name+".log"))
	if err != nil {
		h.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		h.t.Fatal(err)
	}
	h.workers[name] = cmd
	h.t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logf.Close()
		if h.t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			h.t.Logf("worker %s:\n%s", name, b)
		}
	})
}

func (h *harness) read() []ev {
	f, err := os.Open(h.events)
	if err != nil {
		h.t.Fatal(err)
	}
	defer f.Close()
	var out []ev
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e ev
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			h.t.Fatalf("events file: %v", err)
		}
		out = append(out, e)
	}
	return out
}

// waitEvents polls the events file until cond holds; the bound only
// keeps a stuck run from hanging the suite.
func (h *harness) waitEvents(what string, cond func([]ev) bool) []ev {
	h.t.Helper()
	for range 2400 {
		if es := h.read(); cond(es) {
			return es
		}
		time.Sleep(50 * time.Millisecond)
	}
	h.t.Fatalf("never happened: %s", what)
	return nil
}

// running is the task a worker started and did not finish, or "".
func running(es []ev, name string) string {
	open := ""
	for _, e := range es {
		if e.Worker != name {
			continue
		}
		switch e.Kind {
		case "start":
			open = e.Task
		case "done":
			open = ""
		}
	}
	return open
}

func (h *harness) enqueue(p tasks.SolveIssue, want jobs.EnqueueOutcome) {
	h.t.Helper()
	var res jobs.EnqueueResult
	var err error
	// Redis may be restarting: the webhook answers 503 and GitHub
	// redelivers; here, the same delivery is tried again.
	for range 100 {
		if res, err = h.q.EnqueueSolve(context.Background(), p); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil || res.Outcome != want {
		h.t.Fatalf("enqueue %s (%s): %v %v, want %v", p.Issue, p.DeliveryID, res.Outcome, err, want)
	}
}

// TestSoak is the short form (CI): SOAK_JOBS jobs (default 24) in
// bursts over three installations, three workers; on the way a worker
// is killed with SIGKILL mid-job, another is drained with SIGTERM
// mid-job, Redis is killed and restarted from its append-only file,
// "GitHub" is down for a while, and deliveries come twice and late. At
// the end every job ran to completion exactly once, nothing waits in
// asynq's retry or archive sets, every lock and slot is free, and the
// figures are logged.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("soak: starts redis-server and worker processes")
	}
	n := 24
	if s := os.Getenv("SOAK_JOBS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	dir := t.TempDir()
	h := &harness{t: t, events: filepath.Join(dir, "events.jsonl"), outage: filepath.Join(dir, "outage"), workers: map[string]*exec.Cmd{}}
	if err := os.WriteFile(h.events, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	h.redis = redistest.Start(t, "--appendonly", "yes", "--appendfsync", "always")
	h.rdb = redis.NewClient(&redis.Options{Addr: h.redis.Addr()})
	defer h.rdb.Close()
	h.q = jobs.NewQueue(h.rdb)
	for _, w := range []string{"w1", "w2", "w3"} {
		h.startWorker(w)
	}

	// Installation 1 floods two repositories; 2 has one repository; 3 a
	// single issue, labelled last.
	var all []tasks.SolveIssue
	for i := range n - 1 {
		inst := int64(1 + i%2)
		repo := fmt.Sprintf("repo-%d", i%3)
		all = append(all, tasks.SolveIssue{Issue: tasks.Issue{InstallationID: inst, Owner: fmt.Sprintf("org%d", inst), Repo: repo, Number: i + 1},
			DeliveryID: fmt.Sprintf("d-%d", i+1), Requester: "u"})
	}
	all = append(all, tasks.SolveIssue{Issue: tasks.Issue{InstallationID: 3, Owner: "org3", Repo: "solo", Number: 1}, DeliveryID: "d-solo", Requester: "u"})
	start := time.Now()
	half := len(all) / 2
	for _, p := range all[:half] {
		h.enqueue(p, jobs.Enqueued)
	}
	// A redelivery of the first and a second label on the same issue.
	h.enqueue(all[0], jobs.Duplicate)
	again := all[1]
	again.DeliveryID = "d-again"
	h.enqueue(again, jobs.Busy)

	// SIGKILL a worker mid-job; asynq takes the job back once its lease
	// has expired (moved into the past here, rather than waited for).
	es := h.waitEvents("w1 runs a job", func(es []ev) bool { return running(es, "w1") != "" })
	killed := running(es, "w1")
	_ = h.workers["w1"].Process.Kill()
	_ = h.workers["w1"].Wait()
	lease := "asynq:{" + tasks.QueueAgent + "}:lease"
	if err := h.rdb.ZAddXX(context.Background(), lease, redis.Z{Score: float64(time.Now().Add(-2 * time.Minute).Unix()), Member: killed}).Err(); err != nil {
		t.Fatal(err)
	}
	h.startWorker("w4")

	// GitHub goes down while Redis crashes and comes back.
	if err := os.WriteFile(h.outage, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	h.redis.Kill()
	time.Sleep(300 * time.Millisecond) // the workers see it gone
	h.redis.Restart()
	for _, p := range all[half:] {
		h.enqueue(p, jobs.Enqueued)
	}
	// Drain w2 with SIGTERM while its job waits for GitHub, so it cannot
	// finish within the grace period.
	es = h.waitEvents("w2 runs a job", func(es []ev) bool { return running(es, "w2") != "" })
	drained := running(es, "w2")
	_ = h.workers["w2"].Process.Signal(syscall.SIGTERM)
	_ = h.workers["w2"].Wait()
	h.startWorker("w5")
	if err := os.Remove(h.outage); err != nil {
		t.Fatal(err)
	}

	es = h.waitEvents("every job done", func(es []ev) bool {
		done := map[string]bool{}
		for _, e := range es {
			if e.Kind == "done" {
				done[e.Task] = true
			}
		}
		return len(done) == len(all)
	})
	elapsed := time.Since(start)
	// A late redelivery of a finished job is still a duplicate.
	h.enqueue(all[2], jobs.Duplicate)

	h.check(all, es, killed, drained)
	h.figures(es, elapsed)
}

// check asserts nothing was lost or run twice and the queue is clean.
func (h *harness) check(all []tasks.SolveIssue, es []ev, killed, drained string) {
	t := h.t
	done, starts := map[string]int{}, map[string]int{}
	for _, e := range es {
		switch e.Kind {
		case "done":
			done[e.Task]++
		case "start":
			starts[e.Task]++
		}
	}
	for _, p := range all {
		if done[p.DeliveryID] != 1 {
			t.Errorf("%s (%s) ran to completion %d times, want once", p.Issue, p.DeliveryID, done[p.DeliveryID])
		}
	}
	if len(done) != len(all) {
		t.Errorf("%d tasks completed, want %d (one per issue)", len(done), len(all))
	}
	if starts[killed] < 2 || starts[drained] < 2 {
		t.Errorf("the killed job started %d times and the drained one %d: want each run again", starts[killed], starts[drained])
	}
	ctx := context.Background()
	insp := asynq.NewInspectorFromRedisClient(h.rdb)
	// Jobs put back for a slot pass through the retry set; none may be
	// left there, or archived.
	var qi *asynq.QueueInfo
	for range 100 {
		var err error
		if qi, err = insp.GetQueueInfo(tasks.QueueAgent); err == nil && qi.Retry == 0 && qi.Pending == 0 && qi.Active == 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if qi == nil || qi.Retry+qi.Archived+qi.Pending+qi.Active+qi.Scheduled != 0 {
		t.Errorf("queue at the end: %+v; want every task completed", qi)
	}
	for _, p := range all {
		if id, err := h.q.Active(ctx, p.Issue); err != nil || id != "" {
			t.Errorf("%s: lock still held by %q (%v)", p.Issue, id, err)
		}
	}
	slots, err := h.rdb.Keys(ctx, jobs.KeyPrefix+"slots:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range slots {
		if n, _ := h.rdb.ZCard(ctx, k).Result(); n != 0 {
			t.Errorf("%s holds %d slots after every job ended", k, n)
		}
	}
}

// figures logs jobs per minute per worker, queue wait (enqueue to the
// first start) and label to done (enqueue to the completing run's end).
func (h *harness) figures(es []ev, elapsed time.Duration) {
	first := map[string]time.Time{}
	var waits, toDone []time.Duration
	slowest, slowTask := time.Duration(0), ""
	workers := map[string]bool{}
	for _, e := range es {
		switch e.Kind {
		case "start":
			workers[e.Worker] = true
			if _, ok := first[e.Task]; !ok {
				first[e.Task] = e.At
				waits = append(waits, e.At.Sub(e.Enqueued))
				if e.Task == "d-solo" {
					h.t.Logf("soak: the lone installation's job waited %v behind the flood", e.At.Sub(e.Enqueued).Round(time.Millisecond))
				}
			}
		case "done":
			toDone = append(toDone, e.At.Sub(e.Enqueued))
			if d := e.At.Sub(e.Enqueued); d > slowest {
				slowest, slowTask = d, e.Task+" "+e.Issue
			}
		}
	}
	h.t.Logf("soak: slowest label to done: %s, %v", slowTask, slowest.Round(time.Millisecond))
	perWorker := float64(len(toDone)) / elapsed.Minutes() / 3 // three run at any time
	h.t.Logf("soak: %d jobs in %v on 3 workers at a time (%d processes over the run): %.0f jobs/min/worker (job latency %v-%v)",
		len(toDone), elapsed.Round(time.Millisecond), len(workers), perWorker, jobLatency, 2*jobLatency)
	h.t.Logf("soak: queue wait p50 %v p99 %v; label to done p50 %v p99 %v",
		pct(waits, 50), pct(waits, 99), pct(toDone, 50), pct(toDone, 99))
}

func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)-1)*p/100].Round(time.Millisecond)
}
