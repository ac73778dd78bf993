//go:build e2e

package soak

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/githubtest"
	"github.com/patchwright/patchwright/jobs/redistest"
	"github.com/patchwright/patchwright/jobs/runstore"
	"github.com/patchwright/patchwright/report"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
	"github.com/patchwright/patchwright/webhook"
)

const (
	fsSecret  = "soak-webhook-secret"
	fsSender  = "Codertocat"
	fsKeyMark = "soak-key: "
	// fsModelLatency is each model reply's wait, as a hosted model's.
	fsModelLatency = 400 * time.Millisecond
)

// fsIssue is one issue of the run.
type fsIssue struct {
	inst        int64
	owner, repo string
	n           int
	delivery    string
}

func (i fsIssue) key() string { return fmt.Sprintf("%s/%s#%d", i.owner, i.repo, i.n) }

// fullStack is the parent's side of TestSoakFullStack.
type fullStack struct {
	t        *testing.T
	dir      string
	bin      string
	redis    *redistest.Process
	rdb      *redis.Client
	fake     *githubtest.Server
	remote   *githubtest.GitRemote
	model    *pt.Router
	modelURL string
	keyFile  string
	hookURL  string
	// hold, when set, holds the next model request of any worker until
	// its connection drops; held then gets the worker and conversation.
	// Any worker, not a chosen one: the fairness limits may keep a given
	// worker from getting a job for minutes.
	hold  atomic.Bool
	held  chan heldRequest
	procs map[string]*exec.Cmd
	logs  map[string]string
	mu    sync.Mutex
}

// heldRequest is a held model request: the worker that sent it and the
// conversation's key.
type heldRequest struct{ worker, key string }

// modelHandler is the scripted model behind /wN/: it marks which worker
// sent a request and can hold one ("a worker mid-job", with no clock).
func (f *fullStack) modelHandler(w http.ResponseWriter, r *http.Request) {
	name, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if f.hold.CompareAndSwap(true, false) {
		body, _ := io.ReadAll(r.Body)
		key := ""
		if i := bytes.Index(body, []byte(fsKeyMark)); i >= 0 {
			// The body is JSON: the key ends at an escape or a quote.
			key = strings.FieldsFunc(string(body[i+len(fsKeyMark):]), func(c rune) bool {
				return c == '\\' || c == '"' || c == ' ' || c == '\n'
			})[0]
		}
		f.held <- heldRequest{worker: name, key: key}
		<-r.Context().Done()
		return
	}
	r.URL.Path = "/" + rest
	r.Header.Set("X-Soak-Worker", name)
	f.model.ServeHTTP(w, r)
}

func (f *fullStack) env(name string) []string {
	data := filepath.Join(f.dir, "data-"+name)
	_ = os.MkdirAll(data, 0o755)
	return append(os.Environ(),
		"PATCHWRIGHT_REDIS_URL=redis://"+f.redis.Addr()+"/0",
		"PATCHWRIGHT_GITHUB_API_URL="+f.fake.URL,
		"PATCHWRIGHT_APP_ID="+strconv.Itoa(githubtest.AppID),
		"PATCHWRIGHT_PRIVATE_KEY_FILE="+f.keyFile,
		"PATCHWRIGHT_WEBHOOK_SECRET="+fsSecret,
		"PATCHWRIGHT_MODEL=openai:"+pt.OpenAIModel,
		"OPENAI_API_KEY=soak-key",
		"OPENAI_BASE_URL="+f.modelURL+"/"+name+"/v1",
		"PATCHWRIGHT_SANDBOX_IMAGE="+sandboxtest.Image(f.t),
		"PATCHWRIGHT_WORKER_CONCURRENCY=1",
		"PATCHWRIGHT_SHUTDOWN_GRACE=5s",
		"PATCHWRIGHT_DATA_DIR="+data,
	)
}

// start runs `patchwright cmd` as name, its log in the test's directory.
func (f *fullStack) start(name, cmd string, extra ...string) {
	c := exec.Command(f.bin, cmd)
	c.Env = append(f.env(name), extra...)
	logPath := filepath.Join(f.dir, name+".log")
	lf, err := os.Create(logPath)
	if err != nil {
		f.t.Fatal(err)
	}
	c.Stdout, c.Stderr = lf, lf
	if err := c.Start(); err != nil {
		f.t.Fatal(err)
	}
	f.mu.Lock()
	f.procs[name], f.logs[name] = c, logPath
	f.mu.Unlock()
	f.t.Cleanup(func() {
		_ = c.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = c.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = c.Process.Kill()
			<-done
		}
		lf.Close()
		if f.t.Failed() {
			b, _ := os.ReadFile(logPath)
			f.t.Logf("%s log (last 6000 bytes):\n%s", name, tail(b, 6000))
		}
	})
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// deliver sends a signed issues.labeled delivery to serve, sending it
// again while serve answers 5xx (Redis restarting), as GitHub's
// redelivery would; it returns the final status.
func (f *fullStack) deliver(is fsIssue, delivery string) int {
	raw := githubtest.Fixture(f.t, "github-webhooks", "issues.labeled.json")
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		f.t.Fatal(err)
	}
	m["installation"] = map[string]any{"id": is.inst}
	m["label"].(map[string]any)["name"] = "agent"
	r := m["repository"].(map[string]any)
	r["name"], r["full_name"], r["default_branch"] = is.repo, is.owner+"/"+is.repo, "main"
	r["owner"].(map[string]any)["login"] = is.owner
	i := m["issue"].(map[string]any)
	// GitHub's IDs: the webhook tells a replayed body by them.
	r["id"] = 5000 + fnv(is.owner+"/"+is.repo)
	i["id"], i["node_id"] = 7000000+fnv(is.key()), "I_soak_"+is.key()
	i["number"], i["title"] = is.n, "Greeting is misspelled"
	i["body"] = "greeting.txt says helo; it should say hello.\n\n" + fsKeyMark + is.key()
	body, _ := json.Marshal(m)
	for range 200 {
		req, _ := http.NewRequest(http.MethodPost, f.hookURL, bytes.NewReader(body))
		req.Header.Set("X-GitHub-Event", "issues")
		req.Header.Set("X-GitHub-Delivery", delivery)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Hub-Signature-256", webhook.Signature([]byte(fsSecret), body))
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode < 500 {
				return resp.StatusCode
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	f.t.Fatalf("delivery %s never accepted", delivery)
	return 0
}

// waitFor polls cond; the bound only keeps a stuck run from hanging.
func waitFor(t *testing.T, what string, bound time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never happened: %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestSoakFullStack is the load-and-fault harness over the real binary:
// `patchwright serve` and three `patchwright worker` processes on one
// redis-server of its own (append-only file on), the GitHub fake with git
// remotes over git http-backend, and a scripted model with a model's
// latency, one script per issue. SOAK_ISSUES issues (default 8) over two
// installations and three repositories arrive as signed deliveries in two
// bursts, some twice and the second burst in reverse order. On the way a
// worker is killed with SIGKILL mid-conversation and replaced, Redis is
// killed and restarted from its append-only file, and GitHub answers
// secondary rate limits and 502s (one after it stored the comment). At
// the end, on the fake's own state: one pull request and one status
// comment by the app per issue; each job ran to completion once; asynq's
// retry and archive sets are empty.
func TestSoakFullStack(t *testing.T) {
	sandboxtest.EndToEnd(t)
	if testing.Short() {
		t.Skip("soak: starts redis-server, serve and worker processes")
	}
	sandboxtest.Image(t)
	n := 8
	if s := os.Getenv("SOAK_ISSUES"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 4 {
			t.Fatalf("SOAK_ISSUES=%q: want a number of at least 4", s)
		}
	}
	f := &fullStack{t: t, dir: t.TempDir(), held: make(chan heldRequest, 1), procs: map[string]*exec.Cmd{}, logs: map[string]string{}}
	f.hold.Store(false)

	// The binary, as shipped.
	f.bin = filepath.Join(f.dir, "patchwright")
	build := exec.Command("go", "build", "-o", f.bin, "./cmd/patchwright")
	build.Dir = githubtest.ModuleRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	f.keyFile = filepath.Join(f.dir, "app.pem")
	if err := os.WriteFile(f.keyFile, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600); err != nil {
		t.Fatal(err)
	}
	f.fake = githubtest.New(t, &key.PublicKey)
	f.remote = githubtest.NewGitRemote(t, f.fake.ValidToken)

	// Issues: installation 21 has two repositories, 22 one.
	repos := []struct {
		inst        int64
		owner, name string
	}{{21, "orga", "alpha"}, {21, "orga", "beta"}, {22, "orgb", "gamma"}}
	var issues []fsIssue
	for i := range n {
		r := repos[i%len(repos)]
		issues = append(issues, fsIssue{inst: r.inst, owner: r.owner, repo: r.name, n: 1 + i/len(repos), delivery: fmt.Sprintf("soak-d%d", i)})
	}
	scripts := map[string][]pt.Turn{}
	for _, r := range repos {
		f.remote.Create(t, r.owner, r.name, "main", map[string]string{
			"greeting.txt":      "helo\n",
			".github/agent.yml": "verify:\n  - name: greeting\n    run: grep -qx hello greeting.txt\n",
		})
		f.fake.AddRepo(githubtest.Repo{Owner: r.owner, Name: r.name, DefaultBranch: "main", CloneURL: f.remote.CloneURL(r.owner, r.name),
			Heads: func(b string) string { return f.remote.Head(t, r.owner, r.name, b) },
			Log:   func(base, head string) []githubtest.GitCommit { return f.remote.Log(t, r.owner, r.name, base, head) }})
		f.fake.SetPermission(r.owner, r.name, fsSender, "admin")
	}
	for _, is := range issues {
		f.fake.AddIssue(githubtest.Issue{Owner: is.owner, Repo: is.repo, Number: is.n, Title: "Greeting is misspelled",
			Body: "greeting.txt says helo; it should say hello.\n\n" + fsKeyMark + is.key(), Author: fsSender})
		scripts[is.key()] = []pt.Turn{
			pt.Calls(pt.Call("read_file", `{"path":"greeting.txt"}`)),
			pt.Calls(pt.Call("edit", `{"edits":[{"path":"greeting.txt","old_text":"helo","new_text":"hello"}]}`)),
			pt.Calls(pt.Call("finish", `{"summary":"Fixed the spelling in greeting.txt."}`)),
		}
	}
	f.model = pt.NewRouter(t, pt.RouterConfig{Scripts: scripts, Latency: fsModelLatency, Route: func(req pt.Request) string {
		text := pt.FirstUser(req)
		if i := strings.Index(text, fsKeyMark); i >= 0 {
			if fs := strings.Fields(text[i+len(fsKeyMark):]); len(fs) > 0 {
				return fs[0]
			}
		}
		return ""
	}})
	ms := &http.Server{Handler: http.HandlerFunc(f.modelHandler)}
	mln, err := netListen()
	if err != nil {
		t.Fatal(err)
	}
	go ms.Serve(mln)
	t.Cleanup(func() { ms.Close() })
	f.modelURL = "http://" + mln.Addr().String()

	f.redis = redistest.Start(t, "--appendonly", "yes", "--appendfsync", "always")
	f.rdb = redis.NewClient(&redis.Options{Addr: f.redis.Addr()})
	defer f.rdb.Close()

	port := redistest.FreePort(t)
	f.hookURL = fmt.Sprintf("http://127.0.0.1:%d/webhook", port)
	f.start("serve", "serve", fmt.Sprintf("PATCHWRIGHT_LISTEN=127.0.0.1:%d", port))
	waitFor(t, "serve ready", time.Minute, func() bool {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", port))
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	for _, w := range []string{"w1", "w2", "w3"} {
		f.start(w, "worker")
	}

	// First burst, with the first model request of any worker held.
	start := time.Now()
	f.hold.Store(true)
	half := (n + 1) / 2
	var wg sync.WaitGroup
	for _, is := range issues[:half] {
		wg.Go(func() {
			if code := f.deliver(is, is.delivery); code != http.StatusAccepted {
				t.Errorf("delivery %s: %d, want 202", is.delivery, code)
			}
		})
	}
	wg.Wait()
	// The same delivery again is a duplicate, not a second job.
	if code := f.deliver(issues[0], issues[0].delivery); code >= 300 {
		t.Errorf("redelivery of %s: %d", issues[0].delivery, code)
	}

	// SIGKILL that worker mid-conversation; asynq takes its job back once the
	// lease has expired (moved into the past here rather than waited for),
	// and a replacement's recoverer finds it at start-up.
	var held heldRequest
	select {
	case held = <-f.held:
	case <-time.After(3 * time.Minute):
		t.Fatal("no worker reached the model")
	}
	killedKey := held.key
	_ = f.procs[held.worker].Process.Kill()
	killedTask := ""
	for _, is := range issues {
		if is.key() == killedKey {
			killedTask = is.delivery
		}
	}
	if killedTask == "" {
		t.Fatalf("%s held a request of no known issue (%q)", held.worker, killedKey)
	}
	lease := "asynq:{" + jobs.QueueAgent + "}:lease"
	if err := f.rdb.ZAddXX(context.Background(), lease, redis.Z{Score: float64(time.Now().Add(-2 * time.Minute).Unix()), Member: killedTask}).Err(); err != nil {
		t.Fatal(err)
	}
	f.start("w4", "worker")

	// GitHub has a bad while: secondary rate limits (Retry-After 1 s),
	// 502s, and one 502 after the comment was stored.
	wait1 := http.Header{"Retry-After": {"1"}}
	sec := githubtest.SecondaryRateLimit("", "/repos/", 3)
	sec.Header = sec.Header.Clone()
	sec.Header.Set("Retry-After", "1")
	f.fake.Fail(sec)
	f.fake.Fail(githubtest.Fault{Method: http.MethodGet, Path: "/repos/", Status: http.StatusBadGateway, Times: 4, Header: wait1})
	f.fake.Fail(githubtest.Fault{Method: http.MethodPost, Path: "/repos/orgb/gamma/issues/", Status: http.StatusBadGateway, Times: 1, Landed: true})

	// Redis crashes and comes back from its append-only file.
	f.redis.Kill()
	time.Sleep(500 * time.Millisecond) // long enough for clients to notice it gone
	f.redis.Restart()

	// Second burst, in reverse order, with a duplicate of the first burst.
	for i := n - 1; i >= half; i-- {
		if code := f.deliver(issues[i], issues[i].delivery); code != http.StatusAccepted {
			t.Errorf("delivery %s: %d, want 202", issues[i].delivery, code)
		}
	}
	if code := f.deliver(issues[1], issues[1].delivery); code >= 300 {
		t.Errorf("late redelivery of %s: %d", issues[1].delivery, code)
	}

	// Every issue gets its pull request; the time it was first seen is the
	// label-to-PR figure's cross-check.
	insp := asynq.NewInspectorFromRedisClient(f.rdb)
	waitFor(t, "a pull request for every issue and an idle queue", 8*time.Minute, func() bool {
		for _, is := range issues {
			if len(f.pullsFor(is)) == 0 {
				return false
			}
		}
		qi, err := insp.GetQueueInfo(jobs.QueueAgent)
		return err == nil && qi.Pending+qi.Active+qi.Scheduled+qi.Retry == 0
	})
	elapsed := time.Since(start)

	f.check(issues, insp, killedTask)
	f.figures(issues, elapsed)
}

func (f *fullStack) pullsFor(is fsIssue) []githubtest.Pull {
	var out []githubtest.Pull
	for _, p := range f.fake.Pulls(is.owner, is.repo) {
		if p.Head == fmt.Sprintf("agent/issue-%d", is.n) {
			out = append(out, p)
		}
	}
	return out
}

// check asserts the outcome on the fake's state, the workers' logs and
// the queue.
func (f *fullStack) check(issues []fsIssue, insp *asynq.Inspector, killedTask string) {
	t := f.t
	for _, is := range issues {
		if ps := f.pullsFor(is); len(ps) != 1 {
			t.Errorf("%s: %d pull requests, want 1: %+v", is.key(), len(ps), ps)
		}
		var status []githubtest.Comment
		for _, c := range f.fake.Comments(is.owner, is.repo, is.n) {
			if c.Author == githubtest.BotLogin && strings.Contains(c.Body, report.StatusMarker(is.n)) {
				status = append(status, c)
			}
		}
		if len(status) != 1 {
			t.Errorf("%s: %d status comments by the app, want 1", is.key(), len(status))
		}
	}
	done := f.jobsDone()
	for _, is := range issues {
		if done[is.delivery] != 1 {
			t.Errorf("%s (task %s) ran to completion %d times, want once", is.key(), is.delivery, done[is.delivery])
		}
	}
	if len(done) != len(issues) {
		t.Errorf("tasks completed: %v; want one per issue", done)
	}
	if f.model.Served(issues[0].key()) == 0 {
		t.Errorf("the model never saw %s", issues[0].key())
	}
	for _, q := range []string{jobs.QueueAgent, jobs.QueueReplies} {
		qi, err := insp.GetQueueInfo(q)
		if err != nil {
			continue // a queue never used
		}
		if qi.Retry+qi.Archived != 0 {
			var left []string
			for _, ls := range []func(string, ...asynq.ListOption) ([]*asynq.TaskInfo, error){insp.ListRetryTasks, insp.ListArchivedTasks} {
				tis, _ := ls(q)
				for _, ti := range tis {
					left = append(left, ti.ID+": "+ti.LastErr)
				}
			}
			t.Errorf("queue %s: %d in retry, %d archived, unexplained: %v", q, qi.Retry, qi.Archived, left)
		}
	}
	// The faults happened: every injected answer was given.
	var limited, bad, landed int
	for _, r := range f.fake.Requests() {
		switch {
		case r.Status == http.StatusForbidden:
			limited++
		case r.Status == http.StatusBadGateway && r.Method == http.MethodPost:
			landed++
		case r.Status == http.StatusBadGateway:
			bad++
		}
	}
	if limited < 3 || bad < 4 || landed < 1 {
		t.Errorf("GitHub answered %d secondary limits, %d 502s and %d 502s after storing; want 3, 4 and 1", limited, bad, landed)
	}
	// The killed job was taken back and run again.
	if r := f.doneRetry(killedTask); r < 1 {
		t.Errorf("the killed job %s completed on try %d, want a later try than the killed one", killedTask, r)
	}
}

// doneRetry is the try on which task's "job done" was logged (-1: none).
func (f *fullStack) doneRetry(task string) int {
	out := -1
	f.eachLog(func(l map[string]any) {
		if l["msg"] == "job done" && l[jobs.LogTask] == task {
			r, _ := l[jobs.LogRetry].(float64)
			out = int(r)
		}
	})
	return out
}

// eachLog calls fn with every JSON line of every process's log.
func (f *fullStack) eachLog(fn func(map[string]any)) {
	for _, path := range f.logs {
		fl, err := os.Open(path)
		if err != nil {
			f.t.Fatal(err)
		}
		sc := bufio.NewScanner(fl)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var l map[string]any
			if json.Unmarshal(sc.Bytes(), &l) == nil {
				fn(l)
			}
		}
		fl.Close()
	}
}

// jobsDone counts the workers' "job done" log lines by task.
func (f *fullStack) jobsDone() map[string]int {
	out := map[string]int{}
	f.eachLog(func(l map[string]any) {
		if task, _ := l[jobs.LogTask].(string); l["msg"] == "job done" && task != "" {
			out[task]++
		}
	})
	return out
}

// runTimings is what figures needs of a phases file.
type runTimings struct {
	RunID  string `json:"run_id"`
	Phases []struct {
		Phase      string `json:"phase"`
		DurationMS int64  `json:"duration_ms"`
	} `json:"phases"`
	ToPublishedMS int64 `json:"to_published_ms"`
}

// phases reads every run's timings from the workers' data directories.
func (f *fullStack) phases() []runTimings {
	var out []runTimings
	_ = filepath.WalkDir(f.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != runstore.FilePhases {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		var rt runTimings
		if json.Unmarshal(b, &rt) == nil {
			out = append(out, rt)
		}
		return nil
	})
	return out
}

// figures logs jobs per minute per worker, queue wait (the runs' queued
// phase: enqueue to the pipeline's start, acknowledgement included) and
// label to pull request (the runs' to_published).
func (f *fullStack) figures(issues []fsIssue, elapsed time.Duration) {
	var waits, toPR []time.Duration
	for _, rt := range f.phases() {
		if strings.HasSuffix(rt.RunID, ".0") {
			for _, p := range rt.Phases {
				if p.Phase == "queued" {
					waits = append(waits, time.Duration(p.DurationMS)*time.Millisecond)
				}
			}
		}
		if rt.ToPublishedMS > 0 {
			toPR = append(toPR, time.Duration(rt.ToPublishedMS)*time.Millisecond)
		}
	}
	perWorker := float64(len(issues)) / elapsed.Minutes() / 3
	f.t.Logf("soak full stack: %d issues in %v on 3 workers at a time (concurrency 1, model latency %v per turn): %.1f jobs/min/worker",
		len(issues), elapsed.Round(time.Second), fsModelLatency, perWorker)
	f.t.Logf("soak full stack: queue wait p50 %v p99 %v (%d first runs); label to PR p50 %v p99 %v (%d runs)",
		pct(waits, 50), pct(waits, 99), len(waits), pct(toPR, 50), pct(toPR, 99), len(toPR))
}

func netListen() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }

func fnv(s string) int64 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return int64(h % 1_000_000)
}
