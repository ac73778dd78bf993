package githubjob_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/patchwright/patchwright/agent/provider"
	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/budget"
	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/githubjob"
	"github.com/patchwright/patchwright/jobs/githubtest"
	"github.com/patchwright/patchwright/jobs/pipeline"
	"github.com/patchwright/patchwright/jobs/redistest"
	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/patchwright/patchwright/jobs/worker"
	"github.com/patchwright/patchwright/report/marker"
	"github.com/patchwright/patchwright/sandbox"
	sbdocker "github.com/patchwright/patchwright/sandbox/docker"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
	"github.com/patchwright/patchwright/webhook"
)

const (
	e2eRedisDB = 5
	e2eSecret  = "e2e-webhook-secret"
	e2eInst    = 11
	owner      = "Codertocat"
	repoName   = "Hello-World"
)

// gate sits in front of the scripted model server. When armed, it holds
// the next request until the caller's context ends (the worker was shut
// down or the job cancelled) and reports that it holds one: a run stopped
// exactly "while the model is mid-conversation", with no clock involved.
type gate struct {
	armed   atomic.Bool
	holding chan struct{}
	proxy   *httputil.ReverseProxy
	// before, when set, runs before request n (1, 2, …) is passed on.
	before   func(n int)
	requests atomic.Int64
}

func newGate(t testing.TB, target string) (*gate, string) {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	// A fresh backend connection per request: a reused keep-alive
	// connection torn down under a streaming reply once cost a scripted
	// turn (the SDK retried the cut stream and took the next one).
	proxy.Transport = &http.Transport{DisableKeepAlives: true}
	g := &gate{holding: make(chan struct{}, 1), proxy: proxy}
	hs := httptest.NewServer(g)
	t.Cleanup(hs.Close)
	return g, hs.URL
}

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if g.armed.CompareAndSwap(true, false) {
		// The server notices a client that went away only once the body
		// is read.
		_, _ = io.Copy(io.Discard, r.Body)
		g.holding <- struct{}{}
		<-r.Context().Done()
		return
	}
	if n := int(g.requests.Add(1)); g.before != nil {
		g.before(n)
	}
	g.proxy.ServeHTTP(w, r)
}

// e2e is every part of the GitHub path for real but GitHub's API.
type e2e struct {
	t      testing.TB
	fake   *githubtest.Server
	remote *githubtest.GitRemote
	rdb    *redis.Client
	queue  *jobs.Queue
	hook   http.Handler
	model  *pt.Server
	gate   *gate
	// gateURL is the gate's address and pemKey the app's private key: what
	// a worker in another process needs.
	gateURL string
	pemKey  []byte
	pipe    *githubjob.Pipeline
	app     *githubapi.App
	waits   *waitLog
	insp    *asynq.Inspector
	log     *slog.Logger
}

type waitLog struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waitLog) sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	w.d = append(w.d, d)
	w.mu.Unlock()
	return ctx.Err()
}

func (w *waitLog) all() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.d...)
}

func newE2E(t testing.TB, turns ...pt.Turn) *e2e {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end: needs Redis, Docker and the sandbox test image; run without -short (bash .ci/run starts them)")
	}
	sandboxtest.Image(t)
	rdb := redistest.Client(t, e2eRedisDB)
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))

	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	e := &e2e{t: t, rdb: rdb, waits: &waitLog{}, log: log}
	e.fake = githubtest.New(t, &key.PublicKey)
	e.remote = githubtest.NewGitRemote(t, e.fake.ValidToken)
	e.remote.Workflows = func(tok string) bool { return e.fake.TokenHas(tok, "workflows=write") }
	e.remote.Create(t, owner, repoName, "master", map[string]string{
		"greeting.txt":      "helo\n",
		".github/agent.yml": "verify:\n  - name: greeting\n    run: grep -qx hello greeting.txt\n",
		"README.md":         "A greeting.\n",
	})
	e.fake.AddRepo(githubtest.Repo{Owner: owner, Name: repoName, DefaultBranch: "master", CloneURL: e.remote.CloneURL(owner, repoName),
		Heads: func(b string) string { return e.remote.Head(t, owner, repoName, b) },
		Log:   func(base, head string) []githubtest.GitCommit { return e.remote.Log(t, owner, repoName, base, head) },
		Merge: func(base, head, msg string) (string, bool, error) {
			return e.remote.Merge(owner, repoName, base, head, msg)
		}})
	e.fake.AddIssue(githubtest.Issue{Owner: owner, Repo: repoName, Number: 1, Title: "Greeting is misspelled", Body: "greeting.txt says helo; it should say hello.", Author: owner})
	e.fake.AddIssue(githubtest.Issue{Owner: owner, Repo: repoName, Number: 2, Title: "Another one", Body: "Something else.", Author: owner})
	e.fake.SetPermission(owner, repoName, owner, "admin")

	app, err := githubapi.NewApp(githubtest.AppID, pemKey, e.fake.URL, &githubapi.RetryTransport{Sleep: e.waits.sleep})
	if err != nil {
		t.Fatal(err)
	}
	e.app = app
	e.queue = jobs.NewQueue(rdb)
	e.insp = asynq.NewInspectorFromRedisClient(rdb)
	hook, err := webhook.New(webhook.Config{Secret: []byte(e2eSecret), BotLogin: githubtest.BotLogin, Logger: log}, e.queue, githubapi.NewPermissionCache(app, 0))
	if err != nil {
		t.Fatal(err)
	}
	e.hook = hook

	e.model = pt.New(t, turns...)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("model calls retried after a transient failure, with these waits: %v", e.model.Waits())
		}
	})
	e.gate, e.gateURL = newGate(t, e.model.URL)
	e.pemKey = pemKey
	opts := e.model.Options(provider.NameOpenAI)
	opts.BaseURL = e.gateURL + "/v1"
	e.pipe = e2ePipeline(t, app, e.queue, opts, log)
	return e
}

// e2ePipeline is the GitHub pipeline over the real sandbox, with the model
// that opts reach.
func e2ePipeline(t testing.TB, app *githubapi.App, queue *jobs.Queue, opts provider.Options, log *slog.Logger) *githubjob.Pipeline {
	prov, err := provider.New(provider.NameOpenAI+":"+pt.OpenAIModel, opts)
	if err != nil {
		t.Fatal(err)
	}
	return &githubjob.Pipeline{
		GitHub:  app,
		Cancels: queue,
		Notes:   queue,
		Plans:   queue,
		Executor: &pipeline.Executor{
			Sandboxes: sandboxtest.NewDocker(t, sbdocker.Options{}), Provider: prov, Image: sandboxtest.Image(t),
			SandboxLimits: sandbox.Limits{CPUs: 1}, Logger: log,
			CacheVolume: func(string) string { return sandboxtest.CacheVolume },
		},
		DataDir: t.TempDir(),
		RunURL:  "https://patchwright.example/runs",
		Logger:  log,
	}
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// startWorker starts a real asynq server with the real handlers; the
// returned function shuts it down (a short shutdown timeout, so a held
// job is handed back to the queue as a killed worker's would be).
func (e *e2e) startWorker() func() {
	h := &worker.Handlers{Queue: e.queue, Pipeline: e.pipe, Commenter: e.app, Branches: &githubjob.Branches{GitHub: e.app},
		Approvals: &githubjob.Approvals{GitHub: e.app}, Logger: e.log}
	srv := worker.NewServer(e.rdb, worker.Config{Concurrency: 1, ShutdownTimeout: 500 * time.Millisecond, Logger: e.log})
	if err := srv.Start(h.Mux()); err != nil {
		e.t.Fatal(err)
	}
	var once sync.Once
	stop := func() { once.Do(srv.Shutdown) }
	e.t.Cleanup(stop)
	return stop
}

// deliver sends a fixture payload, changed by edit, signed, through the
// real webhook handler, and returns the status code.
func (e *e2e) deliver(event, fixture, delivery string, edit func(m map[string]any)) int {
	e.t.Helper()
	raw := githubtest.Fixture(e.t, "github-webhooks", fixture)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		e.t.Fatal(err)
	}
	m["installation"] = map[string]any{"id": e2eInst}
	edit(m)
	body, _ := json.Marshal(m)
	req := httptest.NewRequest(http.MethodPost, "/webhook", bytes.NewReader(body))
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", delivery)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Hub-Signature-256", webhook.Signature([]byte(e2eSecret), body))
	rec := httptest.NewRecorder()
	e.hook.ServeHTTP(rec, req)
	e.t.Logf("delivery %s (%s): %d %s", delivery, event, rec.Code, strings.TrimSpace(rec.Body.String()))
	return rec.Code
}

// label delivers the trigger label on issue, with the issue's text as
// the fake holds it now (as GitHub's payload carries it).
func (e *e2e) label(issue int, delivery string) int {
	return e.deliver("issues", "issues.labeled.json", delivery, func(m map[string]any) {
		m["label"].(map[string]any)["name"] = "agent"
		e.issueText(m["issue"].(map[string]any), issue)
	})
}

// issueText sets a payload's issue number, title and body from the fake.
func (e *e2e) issueText(is map[string]any, n int) {
	is["number"] = n
	if i, ok := e.fake.Issue(owner, repoName, n); ok {
		is["title"], is["body"] = i.Title, i.Body
	}
}

func (e *e2e) comment(issue int, onPR bool, body, delivery string) int {
	return e.deliver("issue_comment", "issue_comment.created.with-installation.json", delivery, func(m map[string]any) {
		is := m["issue"].(map[string]any)
		e.issueText(is, issue)
		is["state"] = "open"
		is["labels"] = []any{map[string]any{"name": "agent"}}
		if onPR {
			is["pull_request"] = map[string]any{"url": fmt.Sprintf("%srepos/%s/%s/pulls/%d", e.fake.URL, owner, repoName, issue)}
			is["user"] = map[string]any{"login": githubtest.BotLogin, "type": "Bot"}
		}
		m["comment"].(map[string]any)["body"] = body
	})
}

// waitTask polls the task until it reaches one of states; the bound is
// only there so a hung run fails instead of hanging the suite.
func (e *e2e) waitTask(id string, states ...asynq.TaskState) *asynq.TaskInfo {
	e.t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		info, err := e.insp.GetTaskInfo(tasks.QueueAgent, id)
		if err == nil {
			for _, s := range states {
				if info.State == s {
					return info
				}
			}
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("task %s never reached %v (last: %+v, %v)", id, states, info, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (e *e2e) waitHeld() {
	e.t.Helper()
	select {
	case <-e.gate.holding:
	case <-time.After(5 * time.Minute):
		e.t.Fatal("the run never reached the model")
	}
}

// waitComment waits until the issue's status comment contains text (the
// handler of a cancelled run writes it after asynq has let go of the task).
func (e *e2e) waitComment(issue int, text string) []githubtest.Comment {
	e.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		st := e.statusComments(issue)
		for _, c := range st {
			if strings.Contains(c.Body, text) {
				return st
			}
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("status comment of #%d never said %q: %+v", issue, text, st)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (e *e2e) statusComments(issue int) []githubtest.Comment {
	var out []githubtest.Comment
	for _, c := range e.fake.Comments(owner, repoName, issue) {
		if strings.Contains(c.Body, marker.Status(issue)) {
			out = append(out, c)
		}
	}
	return out
}

func call(name, args string) pt.Turn { return pt.Calls(pt.Call(name, args)) }

// TestGitHubEndToEnd walks one repository through the GitHub path: a
// label (delivered twice) whose first run is cut off by a worker shutdown
// mid-conversation and re-run by a new worker; a secondary rate limit on
// the way; a `/agent retry` with instructions on top of a person's
// commit; and a second issue stopped with `/agent stop`.
func TestGitHubEndToEnd(t *testing.T) {
	sandboxtest.EndToEnd(t)
	e := newE2E(t,
		// Attempt 1 (the run after the restart).
		call("read_file", `{"path":"greeting.txt"}`),
		call("edit", `{"edits":[{"path":"greeting.txt","old_text":"helo","new_text":"hello"}]}`),
		call("finish", `{"summary":"Fixed the spelling in greeting.txt."}`),
		// Attempt 2 (/agent retry).
		call("write_file", `{"path":"NOTES.md","content":"Spelling fixed as asked.\n"}`),
		call("finish", `{"summary":"Added NOTES.md as the reviewer asked."}`),
	)
	// The first status comment meets a secondary rate limit (the recorded
	// body, no Retry-After), then a 429 with Retry-After.
	limit := githubtest.Fixture(t, "github-api", "secondary-rate-limit.403.body.json")
	commentsPath := fmt.Sprintf("/repos/%s/%s/issues/1/comments", owner, repoName)
	e.fake.Fail(githubtest.Fault{Method: http.MethodPost, Path: commentsPath, Status: 403, Body: string(limit)})
	e.fake.Fail(githubtest.Fault{Method: http.MethodPost, Path: commentsPath, Status: 429, Body: string(limit), Header: http.Header{"Retry-After": {"3"}}})

	// The issue's comments: a writer's reach the model, a drive-by's not.
	e.fake.AddComment(owner, repoName, 1, owner, "Issue context: keep the trailing newline.")
	e.fake.AddComment(owner, repoName, 1, "drive-by", "Drive-by issue remark.")

	// Label → one job, even when GitHub delivers twice.
	e.gate.armed.Store(true)
	if code := e.label(1, "delivery-label-1"); code != http.StatusAccepted {
		t.Fatalf("label: %d, want 202", code)
	}
	if code := e.label(1, "delivery-label-1"); code != http.StatusOK {
		t.Fatalf("same delivery again: %d, want 200", code)
	}
	stop1 := e.startWorker()
	e.waitHeld()
	// The worker dies mid-conversation; a new one takes the job over.
	stop1()
	e.startWorker()
	info := e.waitTask("delivery-label-1", asynq.TaskStateCompleted, asynq.TaskStateArchived)
	if info.State != asynq.TaskStateCompleted {
		t.Fatalf("solve task ended %s: %s", info.State, info.LastErr)
	}

	pulls := e.fake.Pulls(owner, repoName)
	if len(pulls) != 1 {
		t.Fatalf("%d pull requests, want 1: %+v", len(pulls), pulls)
	}
	pr := pulls[0]
	head := e.remote.Head(t, owner, repoName, "agent/issue-1")
	switch {
	case pr.Head != "agent/issue-1" || pr.Base != "master":
		t.Errorf("pull request %s → %s", pr.Head, pr.Base)
	case pr.Draft:
		t.Error("a verified change was opened as a draft (draft: auto)")
	case pr.Author != githubtest.BotLogin:
		t.Errorf("pull request by %s", pr.Author)
	case pr.Title != "Greeting is misspelled":
		t.Errorf("title %q", pr.Title)
	}
	// pr.md is the body that was posted, markers included.
	if mds, _ := filepath.Glob(filepath.Join(e.pipe.DataDir, "runs", "*", "pr.md")); !slices.ContainsFunc(mds, func(p string) bool {
		b, err := os.ReadFile(p)
		return err == nil && string(b) == pr.Body
	}) {
		t.Errorf("no pr.md among %v is the posted body", mds)
	}
	for _, want := range []string{"Closes #1", "## Summary", "## Verification", "**Outcome: verified**", "## Not verified", "Attempt history", "triggered by @Codertocat", "attempt=1 -->", "https://patchwright.example/runs/"} {
		if !strings.Contains(pr.Body, want) {
			t.Errorf("pull request body lacks %q:\n%s", want, pr.Body)
		}
	}
	if got := strings.TrimSpace(githubtest.Git(t, e.remote.Dir(owner, repoName), "show", "agent/issue-1:greeting.txt")); got != "hello" {
		t.Errorf("greeting.txt on the branch = %q", got)
	}
	commit := githubtest.Git(t, e.remote.Dir(owner, repoName), "log", "-1", "--format=%an <%ae>%n%B", "agent/issue-1")
	wantAuthor := fmt.Sprintf("%s <%d+%s@users.noreply.github.com>", githubtest.BotLogin, githubtest.BotUserID, githubtest.BotLogin)
	wantCo := fmt.Sprintf("Co-authored-by: %s <%d+%s@users.noreply.github.com>", owner, githubtest.UserID(owner), owner)
	if !strings.HasPrefix(commit, wantAuthor) || !strings.Contains(commit, wantCo) {
		t.Errorf("commit:\n%s\nwant author %s and %s", commit, wantAuthor, wantCo)
	}
	if !e.remote.Verified(owner, repoName, head) || marker.ParsePushed(pr.Body) != head {
		t.Errorf("head %s: want a commit GitHub made and signed, named by the body's pushed marker", head)
	}
	runs := e.fake.CheckRuns(owner, repoName, head)
	if len(runs) != 1 || runs[0].Name != githubjob.CheckRunPrefix+"greeting" || runs[0].Conclusion != "success" {
		t.Errorf("check runs on %s: %+v", head, runs)
	}
	st := e.statusComments(1)
	if len(st) != 1 {
		t.Fatalf("%d status comments, want 1", len(st))
	}
	if !strings.Contains(st[0].Body, "finished") || !strings.Contains(st[0].Body, fmt.Sprintf("/pull/%d", pr.Number)) || st[0].Author != githubtest.BotLogin {
		t.Errorf("status comment:\n%s", st[0].Body)
	}
	if r := e.fake.Reactions(owner, repoName, 1); len(r) != 1 || r[0].Content != "eyes" {
		t.Errorf("reactions %+v", r)
	}
	// The second limit in a row waits twice the first, though its
	// Retry-After asks for less (GitHub: back off exponentially).
	if w := e.waits.all(); len(w) < 2 || w[0] != githubapi.SecondaryLimitWait || w[1] != 2*githubapi.SecondaryLimitWait {
		t.Errorf("rate-limit waits %v, want [1m0s 2m0s ...]", w)
	}
	for _, tok := range e.fake.Tokens() {
		if len(tok.Repositories) > 0 && (len(tok.Repositories) != 1 || tok.Repositories[0] != repoName || tok.Permissions["contents"] != "write") {
			t.Errorf("clone token scope %+v", tok)
		}
	}
	if n := e.remote.Denied.Load(); n != 0 {
		t.Logf("git remote refused %d unauthenticated probes (go-git asks without credentials first)", n)
	}

	// A person adds a commit to the branch; a reviewer asks for a retry
	// with instructions and leaves a review comment.
	work := t.TempDir()
	githubtest.Git(t, "", "clone", "-q", "-b", "agent/issue-1", e.remote.Dir(owner, repoName), work)
	if err := os.WriteFile(filepath.Join(work, "HUMAN.md"), []byte("by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The person also rewrites the configuration on the branch: the retry
	// keeps the default branch's, and the body names the commit and its
	// files instead of calling the branch verified.
	if err := os.WriteFile(filepath.Join(work, ".github", "agent.yml"), []byte("verify:\n  - name: greeting\n    run: \"true\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	githubtest.Git(t, work, "add", "HUMAN.md", ".github/agent.yml")
	githubtest.Git(t, work, "commit", "-qm", "human commit")
	githubtest.Git(t, work, "push", "-q", "origin", "agent/issue-1")
	human := e.remote.Head(t, owner, repoName, "agent/issue-1")
	e.fake.SetPermission(owner, repoName, "reviewer", "write")
	e.fake.AddReviewComment(owner, repoName, pr.Number, "reviewer", "greeting.txt", 1, "Please explain the change in a NOTES.md.", false)
	// Words of people without write access never reach the model.
	e.fake.AddReviewComment(owner, repoName, pr.Number, "drive-by", "greeting.txt", 1, "Drive-by line remark.", false)
	e.fake.AddComment(owner, repoName, pr.Number, "drive-by", "Drive-by conversation remark.")
	e.fake.AddReview(owner, repoName, pr.Number, "drive-by", "CHANGES_REQUESTED", "Drive-by review.")
	// Reviews and conversation by writers since the last attempt do.
	e.fake.AddReview(owner, repoName, pr.Number, "reviewer", "CHANGES_REQUESTED", "Review body: keep the file short.")
	e.fake.AddComment(owner, repoName, pr.Number, "reviewer", "Conversation: thanks, nearly there.")
	e.fake.ResolveThread(e.fake.AddReviewComment(owner, repoName, pr.Number, "reviewer", "greeting.txt", 1, "Settled remark the retry must not see.", false))

	if code := e.comment(pr.Number, true, "/agent retry add a NOTES.md file", "delivery-retry-1"); code != http.StatusAccepted {
		t.Fatalf("/agent retry: %d, want 202", code)
	}
	if info := e.waitTask("delivery-retry-1", asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted {
		t.Fatalf("retry task ended %s: %s", info.State, info.LastErr)
	}
	pulls = e.fake.Pulls(owner, repoName)
	if len(pulls) != 1 {
		t.Fatalf("%d pull requests after the retry, want 1", len(pulls))
	}
	body := pulls[0].Body
	for _, want := range []string{"attempt=2 -->", "1. ", "2. ", "(/agent retry)", "Closes #1",
		"Commits on this branch that Patchwright did not make", "`human commit`", "`.github/agent.yml` `HUMAN.md`",
		"**Outcome: unverified**", "1 commit that Patchwright did not make", "grep -qx hello greeting.txt"} {
		if !strings.Contains(body, want) {
			t.Errorf("body after retry lacks %q:\n%s", want, body)
		}
	}
	if !pulls[0].Draft {
		t.Error("the retry on a branch with a person's commit is ready for review; want a draft (draft: auto, unverified)")
	}
	head2 := e.remote.Head(t, owner, repoName, "agent/issue-1")
	if head2 == human {
		t.Fatal("the retry pushed nothing")
	}
	if parent := strings.TrimSpace(githubtest.Git(t, e.remote.Dir(owner, repoName), "rev-parse", head2+"^")); parent != human {
		t.Errorf("the retry's commit has parent %s, want the person's commit %s", parent, human)
	}
	if got := githubtest.Git(t, e.remote.Dir(owner, repoName), "show", head2+":HUMAN.md"); got != "by hand\n" {
		t.Errorf("the person's file is gone: %q", got)
	}
	if runs := e.fake.CheckRuns(owner, repoName, head2); len(runs) != 1 {
		t.Errorf("check runs on the retry's commit: %+v", runs)
	}
	if n := len(e.statusComments(1)); n != 1 {
		t.Errorf("%d status comments after the retry, want 1", n)
	}
	var sawFeedback, sawIssueContext bool
	for _, r := range e.model.Requests() {
		for _, m := range r.Messages {
			s := fmt.Sprint(m)
			if strings.Contains(s, "add a NOTES.md file") && strings.Contains(s, "Please explain the change") {
				sawFeedback = true
			}
			if strings.Contains(s, "Settled remark") {
				t.Error("the model was told a review comment from a resolved thread")
			}
			sawIssueContext = sawIssueContext || strings.Contains(s, "Issue context: keep the trailing newline.")
			if strings.Contains(s, "Drive-by") {
				t.Error("the model was told words of someone without write access")
			}
			if strings.Contains(s, "add a NOTES.md file") && (!strings.Contains(s, "Review body: keep the file short.") || !strings.Contains(s, "Conversation: thanks, nearly there.")) {
				t.Error("the model was not told the writer's review body and conversation comment")
			}
		}
	}
	if !sawFeedback {
		t.Error("the model never saw the reviewer's instructions and review comment")
	}
	if !sawIssueContext {
		t.Error("the model never saw the maintainer's comment on the issue")
	}

	// A second issue, stopped while the model is at work.
	e.gate.armed.Store(true)
	if code := e.label(2, "delivery-label-2"); code != http.StatusAccepted {
		t.Fatalf("label issue 2: %d", code)
	}
	e.waitHeld()
	if code := e.comment(2, false, "/agent stop", "delivery-stop-2"); code != http.StatusOK {
		t.Fatalf("/agent stop: %d, want 200", code)
	}
	// asynq hands a cancelled task back for a retry at once (without
	// waiting for the handler); the retry must see the recorded cancel and
	// end without running the pipeline again. Run it now rather than wait
	// for its backoff.
	info = e.waitTask("delivery-label-2", asynq.TaskStateArchived, asynq.TaskStateRetry)
	if info.State == asynq.TaskStateRetry {
		if err := e.insp.RunTask(tasks.QueueAgent, "delivery-label-2"); err != nil {
			t.Fatal(err)
		}
	}
	info = e.waitTask("delivery-label-2", asynq.TaskStateArchived, asynq.TaskStateCompleted)
	if info.State != asynq.TaskStateArchived || !strings.Contains(info.LastErr, "cancelled by Codertocat") {
		t.Errorf("stopped task is %s (%s), want archived as cancelled", info.State, info.LastErr)
	}
	st2 := e.waitComment(2, "stopped by @\u200bCodertocat")
	if len(st2) != 1 {
		t.Errorf("%d status comments on the stopped issue", len(st2))
	}
	if b := e.remote.Head(t, owner, repoName, "agent/issue-2"); b != "" {
		t.Errorf("the stopped run pushed agent/issue-2 at %s", b)
	}
	if n := len(e.fake.Pulls(owner, repoName)); n != 1 {
		t.Errorf("%d pull requests after the stop, want 1", n)
	}
	if e.model.Remaining() != 0 {
		t.Errorf("%d scripted model turns unused", e.model.Remaining())
	}
}

// workerEnv carries what the worker process of TestKilledWorkerIsRecovered
// needs to reach the parent's fakes; its presence makes TestWorkerProcess
// run.
const workerEnv = "PATCHWRIGHT_E2E_WORKER"

type workerConfig struct {
	GitHubURL string `json:"github_url"`
	ModelURL  string `json:"model_url"`
	Key       []byte `json:"key"`
}

// TestWorkerProcess is the worker that TestKilledWorkerIsRecovered starts
// as a process of its own and kills with SIGKILL; run any other way it is
// skipped.
func TestWorkerProcess(t *testing.T) {
	raw := os.Getenv(workerEnv)
	if raw == "" {
		t.Skip("the worker process of TestKilledWorkerIsRecovered")
	}
	var cfg workerConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		t.Fatal(err)
	}
	// Not redistest.Client: that would flush the parent's queue.
	rdb := redis.NewClient(&redis.Options{Addr: os.Getenv("PATCHWRIGHT_TEST_REDIS_ADDR"), DB: e2eRedisDB})
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	app, err := githubapi.NewApp(githubtest.AppID, cfg.Key, cfg.GitHubURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	queue := jobs.NewQueue(rdb)
	pipe := e2ePipeline(t, app, queue, provider.Options{
		APIKey: "test-key", BaseURL: cfg.ModelURL + "/v1", Getenv: func(string) string { return "" }, Logger: log,
	}, log)
	h := &worker.Handlers{Queue: queue, Pipeline: pipe, Commenter: app, Logger: log}
	srv := worker.NewServer(rdb, worker.Config{Concurrency: 1, Logger: log})
	if err := srv.Start(h.Mux()); err != nil {
		t.Fatal(err)
	}
	<-t.Context().Done() // the parent kills this process long before
}

// killWorkerMidRun starts a worker as a process of its own, waits until it
// is in its first model call (the gate must be armed), kills it with
// SIGKILL, and makes its task's lease look long expired. It returns the
// sandboxes the killed run left behind, removed when the test ends.
func (e *e2e) killWorkerMidRun(runID string) []container.Summary {
	t := e.t
	cfg, err := json.Marshal(workerConfig{GitHubURL: e.fake.URL, ModelURL: e.gateURL, Key: e.pemKey})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestWorkerProcess$", "-test.v", "-test.timeout=10m")
	cmd.Env = append(os.Environ(), workerEnv+"="+string(cfg))
	cmd.Stdout, cmd.Stderr = &out, &out
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("killed worker's output:\n%s", out.String())
		}
	})
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	e.waitHeld()
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	docker, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { docker.Close() })
	left, err := docker.ContainerList(context.Background(), container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", sbdocker.LabelJob+"="+runID))})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range left {
		t.Cleanup(func() {
			docker.ContainerRemove(context.Background(), c.ID, container.RemoveOptions{Force: true})
		})
	}

	// asynq takes a task back from a dead worker once its lease has been
	// expired for 30 s, and a lease lasts 30 s. Rather than wait a minute,
	// move the lease into the past; the recoverer of the next worker then
	// finds it at start-up.
	taskID, _, _ := strings.Cut(runID, ".")
	lease := "asynq:{" + tasks.QueueAgent + "}:lease"
	past := float64(time.Now().Add(-2 * time.Minute).Unix())
	if err := e.rdb.ZAddXX(context.Background(), lease, redis.Z{Score: past, Member: taskID}).Err(); err != nil {
		t.Fatal(err)
	}
	if s, err := e.rdb.ZScore(context.Background(), lease, taskID).Result(); err != nil || s != past {
		t.Fatalf("the killed task %s holds no lease to expire: %v, %v", taskID, s, err)
	}
	return left
}

// TestKilledWorkerIsRecovered kills a worker process with SIGKILL while
// its model call is in flight: no shutdown, no handing back, its sandbox
// left running. Another worker must take the job over and finish it with
// one pull request and one status comment.
func TestKilledWorkerIsRecovered(t *testing.T) {
	sandboxtest.EndToEnd(t)
	e := newE2E(t,
		call("read_file", `{"path":"greeting.txt"}`),
		call("edit", `{"edits":[{"path":"greeting.txt","old_text":"helo","new_text":"hello"}]}`),
		call("finish", `{"summary":"Fixed the spelling in greeting.txt."}`),
	)
	e.gate.armed.Store(true)
	if code := e.label(1, "delivery-kill-1"); code != http.StatusAccepted {
		t.Fatalf("label: %d, want 202", code)
	}
	if left := e.killWorkerMidRun("delivery-kill-1.0"); len(left) != 1 {
		t.Errorf("%d sandboxes of the killed attempt, want the 1 it left for the reaper", len(left))
	}

	e.startWorker()
	info := e.waitTask("delivery-kill-1", asynq.TaskStateRetry, asynq.TaskStateCompleted, asynq.TaskStateArchived)
	if info.State == asynq.TaskStateRetry {
		if err := e.insp.RunTask(tasks.QueueAgent, "delivery-kill-1"); err != nil {
			t.Fatal(err)
		}
	}
	info = e.waitTask("delivery-kill-1", asynq.TaskStateCompleted, asynq.TaskStateArchived)
	if info.State != asynq.TaskStateCompleted {
		t.Fatalf("task ended %s: %s", info.State, info.LastErr)
	}
	if info.LastErr != asynq.ErrLeaseExpired.Error() {
		t.Errorf("task's last error %q: want asynq's lease expiry, showing it was taken back from the dead worker", info.LastErr)
	}

	pulls := e.fake.Pulls(owner, repoName)
	if len(pulls) != 1 || !strings.Contains(pulls[0].Body, "**Outcome: verified**") {
		t.Fatalf("pull requests: %+v, want 1, verified", pulls)
	}
	if got := strings.TrimSpace(githubtest.Git(t, e.remote.Dir(owner, repoName), "show", "agent/issue-1:greeting.txt")); got != "hello" {
		t.Errorf("greeting.txt on the branch = %q", got)
	}
	st := e.statusComments(1)
	if len(st) != 1 || !strings.Contains(st[0].Body, "finished") {
		t.Errorf("status comments: %+v, want 1 that says finished", st)
	}
	// The run after the crash says it is one, to the issue and the reviewer.
	const rerun = "run again: the worker running the previous try stopped before it finished"
	if len(st) == 1 && !strings.Contains(st[0].Body, rerun) {
		t.Errorf("the status comment does not say the job ran again after a crash:\n%s", st[0].Body)
	}
	if !strings.Contains(pulls[0].Body, rerun) {
		t.Errorf("the body's history does not say the job ran again after a crash:\n%s", pulls[0].Body)
	}
	if id, err := e.queue.Active(context.Background(), tasks.Issue{InstallationID: e2eInst, Owner: owner, Repo: repoName, Number: 1}); err != nil || id != "" {
		t.Errorf("issue lock after the job: %q, %v", id, err)
	}
	if e.model.Remaining() != 0 {
		t.Errorf("%d scripted model turns unused", e.model.Remaining())
	}
}

// TestKilledWorkerOnLastTryIsReported kills the worker of a job that has no
// retry left. asynq archives such a task without running a handler; the
// Sweeper must say so on the issue and free the issue's lock, once.
func TestKilledWorkerOnLastTryIsReported(t *testing.T) {
	sandboxtest.EndToEnd(t)
	e := newE2E(t)
	ctx := context.Background()
	issue := tasks.Issue{InstallationID: e2eInst, Owner: owner, Repo: repoName, Number: 1}
	task, err := tasks.NewSolveIssueTask(tasks.SolveIssue{Issue: issue, DeliveryID: "delivery-last-1", Requester: owner})
	if err != nil {
		t.Fatal(err)
	}
	// As the webhook would, but with no retry left: the lock, then the task.
	lock := jobs.KeyPrefix + "active:codertocat/hello-world#1"
	if err := e.rdb.Set(ctx, lock, "delivery-last-1", time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	enq := asynq.NewClientFromRedisClient(e.rdb)
	if _, err := enq.Enqueue(task, asynq.MaxRetry(0)); err != nil {
		t.Fatal(err)
	}
	e.gate.armed.Store(true)
	e.killWorkerMidRun("delivery-last-1.0")

	e.startWorker() // its recoverer archives the task: no retry left
	info := e.waitTask("delivery-last-1", asynq.TaskStateArchived, asynq.TaskStateCompleted)
	if info.State != asynq.TaskStateArchived || info.LastErr != asynq.ErrLeaseExpired.Error() {
		t.Fatalf("task is %s (%s), want archived after its lease expired", info.State, info.LastErr)
	}
	if st := e.statusComments(1); len(st) != 1 || strings.Contains(st[0].Body, "could not finish") {
		t.Fatalf("before the sweep, the status should still say the job runs: %+v", st)
	}

	// A task archived for another reason is none of the Sweeper's business.
	other, err := tasks.NewSolveIssueTask(tasks.SolveIssue{Issue: tasks.Issue{InstallationID: e2eInst, Owner: owner, Repo: repoName, Number: 2}, DeliveryID: "delivery-other-2", Requester: owner})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := enq.Enqueue(other, asynq.ProcessIn(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := e.insp.ArchiveTask(tasks.QueueAgent, "delivery-other-2"); err != nil {
		t.Fatal(err)
	}

	// The dead run held $2 of the monthly budget (reserved here: the
	// killed worker process ran without caps); the sweep settles it.
	store := &budget.Store{Redis: e.rdb, Caps: budget.Caps{Repository: 10}}
	if err := store.Reserve(ctx, issue, "delivery-last-1", 2); err != nil {
		t.Fatal(err)
	}
	e.pipe.Budget = store

	sw := &worker.Sweeper{Inspector: e.insp, Queue: e.queue, Reporter: e.pipe, Logger: e.log}
	if n, err := sw.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("sweep: %d reported, %v; want 1", n, err)
	}
	_, held, herr := store.Reserved(ctx, issue)
	_, spent, serr := store.Spent(ctx, issue)
	if herr != nil || serr != nil || held != 0 || spent != 2 {
		t.Errorf("after the sweep: $%v held, $%v spent (%v, %v); want the dead run's hold released and counted", held, spent, herr, serr)
	}
	st := e.statusComments(1)
	if len(st) != 1 || !strings.Contains(st[0].Body, "could not finish") || !strings.Contains(st[0].Body, "crashed or was killed") {
		t.Errorf("status comments after the sweep: %+v", st)
	}
	if id, err := e.queue.Active(ctx, issue); err != nil || id != "" {
		t.Errorf("issue lock after the sweep: %q, %v", id, err)
	}
	if st := e.statusComments(2); len(st) != 0 {
		t.Errorf("the sweep wrote on issue 2, whose task was archived by hand: %+v", st)
	}
	edits := st[0].Edits
	if n, err := sw.Sweep(ctx); err != nil || n != 0 {
		t.Errorf("second sweep: %d reported, %v; want 0", n, err)
	}
	if st := e.statusComments(1); len(st) != 1 || st[0].Edits != edits {
		t.Errorf("the second sweep edited the status comment again: %+v", st)
	}
}

// TestRetryFollowsDraftSetting: under `draft: auto` an unverified change is
// opened as a draft, and the retry that verifies it makes the pull request
// ready for review (through GraphQL: REST cannot).
func TestRetryFollowsDraftSetting(t *testing.T) {
	sandboxtest.EndToEnd(t)
	e := newE2E(t,
		// Attempt 1 changes something, but not the greeting: unverified.
		call("write_file", `{"path":"NOTES.md","content":"Looked at it.\n"}`),
		call("finish", `{"summary":"Added notes."}`),
		// Attempt 2 fixes the greeting: verified.
		call("read_file", `{"path":"greeting.txt"}`),
		call("edit", `{"edits":[{"path":"greeting.txt","old_text":"helo","new_text":"hello"}]}`),
		call("finish", `{"summary":"Fixed the spelling."}`),
	)
	e.startWorker()
	if code := e.label(1, "delivery-draft-1"); code != http.StatusAccepted {
		t.Fatalf("label: %d, want 202", code)
	}
	if info := e.waitTask("delivery-draft-1", asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted {
		t.Fatalf("solve task ended %s: %s", info.State, info.LastErr)
	}
	pulls := e.fake.Pulls(owner, repoName)
	if len(pulls) != 1 || !pulls[0].Draft || !strings.Contains(pulls[0].Body, "**Outcome: unverified**") {
		t.Fatalf("after an unverified attempt: %+v, want one draft", pulls)
	}
	if code := e.comment(pulls[0].Number, true, "/agent retry fix greeting.txt itself", "delivery-draft-retry"); code != http.StatusAccepted {
		t.Fatalf("/agent retry: %d, want 202", code)
	}
	if info := e.waitTask("delivery-draft-retry", asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted {
		t.Fatalf("retry task ended %s: %s", info.State, info.LastErr)
	}
	pulls = e.fake.Pulls(owner, repoName)
	if len(pulls) != 1 || pulls[0].Draft || !strings.Contains(pulls[0].Body, "**Outcome: verified**") {
		t.Errorf("after the verified retry: %+v, want the same pull request, ready for review", pulls)
	}
}
