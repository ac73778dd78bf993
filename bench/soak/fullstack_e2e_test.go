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
	"slices"
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
	"github.com/patchwright/patchwright/internal/logkey"
	"github.com/patchwright/patchwright/jobs/githubtest"
	"github.com/patchwright/patchwright/jobs/interrupt"
	"github.com/patchwright/patchwright/jobs/redistest"
	"github.com/patchwright/patchwright/jobs/runstore"
	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/patchwright/patchwright/report/marker"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
	"github.com/patchwright/patchwright/webhook"
)

const (
	fsSecret  = "soak-webhook-secret"
	fsSender  = "Codertocat"
	fsKeyMark = "soak-key: "
	// fsModelLatency is each model reply's wait, as a hosted model's.
	fsModelLatency = 400 * time.Millisecond
	// fsWorkers is how many worker processes run at a time.
	fsWorkers = 3
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
	// kill, drain and handBack hold one model request each until its
	// connection drops (a worker mid-job, with no clock): kill the first
	// of a flood conversation, drain the first of the lone issue's that
	// asks for the turn after its edit, so that the drained job has a
	// change to push, and handBack the first of a later issue's, so that
	// the job drained there has none and is handed back.
	kill, drain, handBack *hold
	procs                 map[string]*exec.Cmd
	logs                  map[string]string
	// cpuOf is the CPU (user and system) of each process the test
	// started and waited for, by name.
	cpuOf map[string]time.Duration
	mu    sync.Mutex
}

// heldRequest is a held model request: the worker that sent it and the
// conversation's key.
type heldRequest struct{ worker, key string }

// hold holds the first model request match accepts once armed, and sends
// it on held.
type hold struct {
	armed atomic.Bool
	match func(key string, turn int) bool
	held  chan heldRequest
}

func newHold(match func(key string, turn int) bool) *hold {
	return &hold{match: match, held: make(chan heldRequest, 1)}
}

// take reports whether this request is the one to hold, disarming h.
func (h *hold) take(key string, turn int) bool {
	return h.match(key, turn) && h.armed.CompareAndSwap(true, false)
}

// wait returns the held request; the bound only keeps a stuck run from
// hanging.
func (h *hold) wait(t *testing.T, what string) heldRequest {
	t.Helper()
	select {
	case r := <-h.held:
		return r
	case <-time.After(3 * time.Minute):
		t.Fatalf("never happened: %s", what)
	}
	return heldRequest{}
}

// modelHandler is the scripted model behind /wN/: it marks which worker
// sent a request and can hold one.
func (f *fullStack) modelHandler(w http.ResponseWriter, r *http.Request) {
	name, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	key := ""
	if i := bytes.Index(body, []byte(fsKeyMark)); i >= 0 {
		// The body is JSON: the key ends at an escape or a quote.
		key = strings.FieldsFunc(string(body[i+len(fsKeyMark):]), func(c rune) bool {
			return c == '\\' || c == '"' || c == ' ' || c == '\n'
		})[0]
	}
	// The turn asked for: the model's replies the conversation holds.
	turn := bytes.Count(body, []byte(`"role":"assistant"`))
	for _, h := range []*hold{f.kill, f.drain, f.handBack} {
		if h.take(key, turn) {
			h.held <- heldRequest{worker: name, key: key}
			<-r.Context().Done()
			return
		}
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
		// The drain's interrupt comes 9 s into it, 3 s before its end: time
		// to commit and push on a loaded machine.
		"PATCHWRIGHT_SHUTDOWN_GRACE=12s",
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
		f.cpu(name, c.ProcessState)
		b, _ := os.ReadFile(logPath)
		if i := bytes.Index(b, []byte(raceReport)); i >= 0 {
			f.t.Errorf("%s reported a data race:\n%s", name, tail(b[i:], 6000))
		}
		if f.t.Failed() {
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
// Each check, if given, runs every 2 s of the wait, to fail it early.
func waitFor(t *testing.T, what string, bound time.Duration, cond func() bool, checks ...func()) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for i := 1; !cond(); i++ {
		if time.Now().After(deadline) {
			t.Fatalf("never happened: %s", what)
		}
		if i%20 == 0 {
			for _, c := range checks {
				c()
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// noEndWithoutPull fails the test at once if a job ended for good (done,
// or failed with no try left) while its issue has no pull request: it
// would never get one, and the wait for it would only time out.
func (f *fullStack) noEndWithoutPull(issues []fsIssue) {
	ended := map[string]bool{}
	f.eachLog(func(_ string, l map[string]any) {
		task, _ := l[logkey.Task].(string)
		if final, _ := l["final"].(bool); l["msg"] == "job done" || (l["msg"] == "job failed" && final) {
			ended[task] = true
		}
	})
	for _, is := range issues {
		if ended[is.delivery] && len(f.pullsFor(is)) == 0 {
			f.t.Fatalf("%s (task %s) ended for good without a pull request", is.key(), is.delivery)
		}
	}
}

// build builds cmd/patchwright into f.bin, with -race if this test binary
// has it. The build is most of the soak's CPU outside Docker: the same
// mode as the test's own means the packages `go test -race` compiled
// (CI's whole tree, so cmd/patchwright's too) are reused, where a
// non-race build compiled them all again (330 s of CPU on a cold cache,
// 33 s in a fresh checkout on a warm one, 2026-12-03). It is `go run
// -exec cp`, not `go build -o`: go run keeps the linked executable in
// the build cache, so a second run with nothing changed does not link
// again (7-9 s of CPU here); cp takes a copy before go run removes its own.
// -race also makes serve and the workers race-checked (raceReport), at
// a few seconds of CPU.
func (f *fullStack) build() {
	t := f.t
	args := []string{"run"}
	if raceTest {
		args = append(args, "-race")
	}
	// -s -w as deploy/Dockerfile's build: no symbol table or DWARF, a
	// quarter less of the link.
	args = append(args, "-ldflags=-s -w", "-exec", "cp", "./cmd/patchwright", f.bin)
	build := exec.Command("go", args...)
	build.Dir = githubtest.ModuleRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	f.cpu("go run (the build)", build.ProcessState)
}

// cpu adds a process's CPU to the run's figure, logged at the end.
func (f *fullStack) cpu(name string, ps *os.ProcessState) {
	if ps == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cpuOf == nil {
		f.cpuOf = map[string]time.Duration{}
	}
	f.cpuOf[name] += ps.UserTime() + ps.SystemTime()
}

// logCPU logs the CPU of the build, serve and the workers (the
// sandboxes' containers are Docker's, not counted).
func (f *fullStack) logCPU() {
	f.mu.Lock()
	defer f.mu.Unlock()
	var workers time.Duration
	var names []string
	for name, d := range f.cpuOf {
		if strings.HasPrefix(name, "w") {
			workers += d
			names = append(names, name)
		}
	}
	slices.Sort(names)
	f.t.Logf("soak full stack: CPU (user and system) of the build %v, serve %v, the %d workers %v (%s)",
		f.cpuOf["go run (the build)"].Round(10*time.Millisecond), f.cpuOf["serve"].Round(10*time.Millisecond),
		len(names), workers.Round(10*time.Millisecond), strings.Join(names, " "))
}

// TestSoakFullStack is the load-and-fault harness over the real binary:
// `patchwright serve` and three `patchwright worker` processes on one
// redis-server of its own (append-only file on), the GitHub fake with git
// remotes over git http-backend, and a scripted model with a model's
// latency, one script per issue. SOAK_ISSUES issues (default 8) over two
// installations and three repositories arrive as signed deliveries: a
// flood of one installation's issues at once, then the other's single
// issue, then the rest in reverse order, some twice. On the way a worker
// is killed with SIGKILL mid-conversation and replaced, Redis is killed
// and restarted from its append-only file, GitHub answers secondary rate
// limits and 502s (one after it stored the comment), the single issue's
// worker is drained with SIGTERM mid-conversation after its edit, and the
// worker of a later issue with SIGTERM before its model's first answer.
// At the end, on the fake's own state: one pull request and one status
// comment by the app per issue; each job ran to completion once; the
// first drained job's change was pushed as a draft marked interrupted, or
// it was handed back and run again; the second, with no change, was
// handed back and run again by another worker, which said so; at most
// one flood job per worker started before the single issue's; asynq's
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
	f := &fullStack{t: t, dir: t.TempDir(), procs: map[string]*exec.Cmd{}, logs: map[string]string{}}
	t.Cleanup(f.logCPU) // first, so it runs after the processes' cleanups

	// The binary, as shipped but for -race (build).
	f.bin = filepath.Join(f.dir, "patchwright")
	f.build()

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
	// The flood: installation 21 labels all its issues but its last at
	// once; then installation 22 labels one. The rest come later.
	small, flood, rest := split(issues)
	inFlood := map[string]bool{}
	for _, is := range flood {
		inFlood[is.key()] = true
	}
	// Set before the model server starts, which reads them.
	f.kill = newHold(func(key string, _ int) bool { return inFlood[key] })
	f.drain = newHold(func(key string, turn int) bool { return key == small.key() && turn == 2 })
	back := handBackIssue(rest)
	f.handBack = newHold(func(key string, turn int) bool { return key == back.key() && turn == 0 })
	scripts := map[string][]pt.Turn{}
	for _, r := range repos {
		f.remote.Create(t, r.owner, r.name, "main", map[string]string{
			"greeting.txt":      "helo\n",
			".github/agent.yml": "review: off\nverify:\n  - name: greeting\n    run: grep -qx hello greeting.txt\n",
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

	// The flood, then the single issue.
	f.kill.armed.Store(true)
	f.drain.armed.Store(true)
	start := time.Now()
	var wg sync.WaitGroup
	for _, is := range flood {
		wg.Go(func() {
			if code := f.deliver(is, is.delivery); code != http.StatusAccepted {
				t.Errorf("delivery %s: %d, want 202", is.delivery, code)
			}
		})
	}
	wg.Wait()
	if code := f.deliver(small, small.delivery); code != http.StatusAccepted {
		t.Errorf("delivery %s: %d, want 202", small.delivery, code)
	}
	// The same delivery again is a duplicate, not a second job.
	if code := f.deliver(issues[0], issues[0].delivery); code >= 300 {
		t.Errorf("redelivery of %s: %d", issues[0].delivery, code)
	}

	// SIGKILL a worker mid-conversation of a flood job; asynq takes its job
	// back once the lease has expired (moved into the past here rather
	// than waited for), and a replacement's recoverer finds it at start-up.
	held := f.kill.wait(t, "a flood job reaches the model")
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
	lease := "asynq:{" + tasks.QueueAgent + "}:lease"
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

	// SIGTERM the worker of the lone issue once its model has made the
	// edit and is asked for the next turn (held: the job is mid-run). The
	// drain interrupts it in the grace period's last quarter; a
	// replacement starts at once.
	drained := f.drain.wait(t, "the lone issue's job asks for the turn after its edit")
	_ = f.procs[drained.worker].Process.Signal(syscall.SIGTERM)
	f.start("w5", "worker")

	// Second burst, in reverse order, with a late duplicate of the first.
	f.handBack.armed.Store(true)
	for i := len(rest) - 1; i >= 0; i-- {
		if code := f.deliver(rest[i], rest[i].delivery); code != http.StatusAccepted {
			t.Errorf("delivery %s: %d, want 202", rest[i].delivery, code)
		}
	}
	if code := f.deliver(issues[1], issues[1].delivery); code >= 300 {
		t.Errorf("late redelivery of %s: %d", issues[1].delivery, code)
	}

	// SIGTERM the worker of one of them while its first model request is
	// held: the drain interrupts a job with no change, which is handed
	// back to the queue for another worker (a replacement starts at once).
	handedBack := f.handBack.wait(t, "a job of the second burst asks for its first turn")
	_ = f.procs[handedBack.worker].Process.Signal(syscall.SIGTERM)
	f.start("w6", "worker")

	// Every issue gets its pull request; the time it was first seen is the
	// label-to-PR figure's cross-check.
	insp := asynq.NewInspectorFromRedisClient(f.rdb)
	waitFor(t, "a pull request for every issue and an idle queue", 8*time.Minute, func() bool {
		for _, is := range issues {
			if len(f.pullsFor(is)) == 0 {
				return false
			}
		}
		qi, err := insp.GetQueueInfo(tasks.QueueAgent)
		return err == nil && qi.Pending+qi.Active+qi.Scheduled+qi.Retry == 0
	}, func() { f.noEndWithoutPull(issues) })
	elapsed := time.Since(start)

	f.check(issues, insp, killedTask)
	f.checkDrain(small, drained.worker)
	f.checkHandBack(back, handedBack.worker)
	before := f.checkFairness(flood, small)
	f.figures(issues, elapsed, small, before)
}

// handBackIssue is the issue of the second burst whose worker is drained
// before its model's first answer: installation 22's if there is one
// (installation 21's wait behind the flood for its one slot, and so would
// a re-run), else the first.
func handBackIssue(rest []fsIssue) fsIssue {
	for _, is := range rest {
		if is.inst == 22 {
			return is
		}
	}
	return rest[0]
}

// split picks the fairness flood: every issue of installation 21 but its
// last, labelled at once; small, installation 22's first, labelled after
// them; and the rest, labelled later.
func split(issues []fsIssue) (small fsIssue, flood, rest []fsIssue) {
	last := -1
	for i, is := range issues {
		if is.inst == 21 {
			last = i
		}
	}
	for i, is := range issues {
		switch {
		case is.inst == 22 && small.inst == 0:
			small = is
		case is.inst == 21 && i != last:
			flood = append(flood, is)
		default:
			rest = append(rest, is)
		}
	}
	return small, flood, rest
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
		if status := f.statusComments(is); len(status) != 1 {
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
	for _, q := range []string{tasks.QueueAgent, tasks.QueueReplies} {
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

// raceReport starts what the race detector writes of a data race: serve
// and the workers are built with -race when the test is (build), and a
// report in a process's log fails the test.
const raceReport = "WARNING: DATA RACE"

// doneRetry is the try on which task's "job done" was logged (-1: none).
func (f *fullStack) doneRetry(task string) int {
	out := -1
	f.eachLog(func(_ string, l map[string]any) {
		if l["msg"] == "job done" && l[logkey.Task] == task {
			r, _ := l[logkey.Retry].(float64)
			out = int(r)
		}
	})
	return out
}

// eachLog calls fn with every JSON line of every process's log and the
// process's name.
func (f *fullStack) eachLog(fn func(proc string, line map[string]any)) {
	for name, path := range f.logs {
		fl, err := os.Open(path)
		if err != nil {
			f.t.Fatal(err)
		}
		sc := bufio.NewScanner(fl)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var l map[string]any
			if json.Unmarshal(sc.Bytes(), &l) == nil {
				fn(name, l)
			}
		}
		fl.Close()
	}
}

// doneBy is the process that logged task's "job done" ("": none).
func (f *fullStack) doneBy(task string) string {
	out := ""
	f.eachLog(func(proc string, l map[string]any) {
		if l["msg"] == "job done" && l[logkey.Task] == task {
			out = proc
		}
	})
	return out
}

// checkDrain asserts how the job of the worker drained mid-run ended:
// either its change pushed as a draft marked interrupted by that worker,
// or handed back and run again by another; one pull request and one
// status comment either way (check), so the work is neither lost nor
// published twice.
func (f *fullStack) checkDrain(is fsIssue, worker string) {
	t := f.t
	ps := f.pullsFor(is)
	if len(ps) != 1 {
		return // check said so
	}
	switch by := f.doneBy(is.delivery); by {
	case "":
		t.Errorf("drained job %s (%s) never completed", is.key(), is.delivery)
	case worker:
		if !ps[0].Draft || !strings.Contains(ps[0].Body, "interrupted") {
			t.Errorf("drained job %s completed by its drained worker %s, but its pull request is not a draft marked interrupted: draft %v, body:\n%s", is.key(), worker, ps[0].Draft, ps[0].Body)
		}
		if st := f.statusComments(is); len(st) != 1 || !strings.Contains(st[0].Body, "interrupted") {
			t.Errorf("drained job %s: status comments %+v, want one saying interrupted", is.key(), st)
		}
		t.Logf("soak full stack: the drained job %s was pushed as draft #%d marked interrupted", is.key(), ps[0].Number)
	default:
		t.Logf("soak full stack: the drained job %s was handed back and completed by %s (pull request #%d)", is.key(), by, ps[0].Number)
	}
}

// rerunDrained is what a run after a hand-back says in the status comment
// and the body's history (githubjob's rerunNote).
const rerunDrained = "run again: the previous try was handed back when its worker shut down"

// checkHandBack asserts how the job of the worker drained before its
// model had changed anything ended: its worker logged it handed back, and
// another worker ran it to completion (once: check) on the same try,
// saying in the status comment and the pull request's history that it
// ran again after a drain.
func (f *fullStack) checkHandBack(is fsIssue, worker string) {
	t := f.t
	handed := false
	f.eachLog(func(proc string, l map[string]any) {
		msg, _ := l[logkey.Err].(string)
		if proc == worker && l["msg"] == "job failed" && l[logkey.Task] == is.delivery && strings.Contains(msg, interrupt.ErrHandedBack.Error()) {
			handed = true
		}
	})
	if !handed {
		t.Errorf("the job %s (%s) drained on %s with no change was not handed back (no such \"job failed\" line)", is.key(), is.delivery, worker)
	}
	if by := f.doneBy(is.delivery); by == "" || by == worker {
		t.Errorf("the handed-back job %s was completed by %q, want a worker other than the drained %s", is.key(), by, worker)
	}
	if r := f.doneRetry(is.delivery); r != 0 {
		t.Errorf("the handed-back job %s completed on try %d, want 0 (a hand-back is no failure)", is.key(), r)
	}
	if st := f.statusComments(is); len(st) == 1 && !strings.Contains(st[0].Body, rerunDrained) {
		t.Errorf("the handed-back job %s: the status comment does not say it ran again after a drain:\n%s", is.key(), st[0].Body)
	}
	if ps := f.pullsFor(is); len(ps) == 1 {
		if ps[0].Draft || !strings.Contains(ps[0].Body, rerunDrained) {
			t.Errorf("the handed-back job %s: pull request #%d draft %v, want a ready one whose history says it ran again after a drain:\n%s", is.key(), ps[0].Number, ps[0].Draft, ps[0].Body)
		}
		t.Logf("soak full stack: the job %s drained with no change was handed back and completed by another worker (pull request #%d)", is.key(), ps[0].Number)
	}
}

// checkFairness asserts that the flood delayed the lone issue of the other
// installation by at most one job per worker: no more than fsWorkers of
// the flood's runs started before its run did. A run's start is the first
// request on its issue's comments (a run posts its status comment once it
// holds its slot), in the order the fake answered them: an order, not a
// clock. It returns that count.
func (f *fullStack) checkFairness(flood []fsIssue, small fsIssue) int {
	t := f.t
	paths := map[string]string{}
	for _, is := range append(slices.Clone(flood), small) {
		paths[fmt.Sprintf("/repos/%s/%s/issues/%d/comments", is.owner, is.repo, is.n)] = is.key()
	}
	seen := map[string]bool{}
	before := 0
	for _, r := range f.fake.Requests() {
		k, ok := paths[r.Path]
		if !ok || seen[k] {
			continue
		}
		seen[k] = true
		if k != small.key() {
			before++
			continue
		}
		if len(flood) <= fsWorkers {
			t.Logf("soak full stack: a flood of %d issues on %d workers cannot show fairness", len(flood), fsWorkers)
		} else if before > fsWorkers {
			t.Errorf("%d of the flood's %d jobs started before the other installation's single issue, want at most %d (one per worker)", before, len(flood), fsWorkers)
		}
		return before
	}
	t.Errorf("the run of %s never touched its comments", small.key())
	return -1
}

func (f *fullStack) statusComments(is fsIssue) []githubtest.Comment {
	var out []githubtest.Comment
	for _, c := range f.fake.Comments(is.owner, is.repo, is.n) {
		if c.Author == githubtest.BotLogin && strings.Contains(c.Body, marker.Status(is.n)) {
			out = append(out, c)
		}
	}
	return out
}

// jobsDone counts the workers' "job done" log lines by task.
func (f *fullStack) jobsDone() map[string]int {
	out := map[string]int{}
	f.eachLog(func(_ string, l map[string]any) {
		if task, _ := l[logkey.Task].(string); l["msg"] == "job done" && task != "" {
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
func (f *fullStack) figures(issues []fsIssue, elapsed time.Duration, small fsIssue, before int) {
	var waits, toPR []time.Duration
	for _, rt := range f.phases() {
		if strings.HasSuffix(rt.RunID, ".0") {
			for _, p := range rt.Phases {
				if p.Phase == "queued" {
					d := time.Duration(p.DurationMS) * time.Millisecond
					waits = append(waits, d)
					if rt.RunID == small.delivery+".0" {
						f.t.Logf("soak full stack: the other installation's single issue waited %v (queued), %d flood jobs started before it", d, before)
					}
				}
			}
		}
		if rt.ToPublishedMS > 0 {
			toPR = append(toPR, time.Duration(rt.ToPublishedMS)*time.Millisecond)
		}
	}
	perWorker := float64(len(issues)) / elapsed.Minutes() / fsWorkers
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
