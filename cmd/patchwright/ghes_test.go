//go:build e2e

package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/jobs/githubtest"
	"github.com/patchwright/patchwright/jobs/redistest"
	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
	"github.com/patchwright/patchwright/webhook/setup"
)

// The repository and issue of the GHES test, as the webhook fixtures name
// them.
const (
	ghesOwner = "Codertocat"
	ghesRepo  = "Hello-World"
	ghesOrg   = "platform"
	ghesInst  = 11
)

// ghesActionsLog is an Actions job log whose failing step names what is
// missing.
const ghesActionsLog = "2026-01-01T00:00:03.0000000Z ##[group]Run ./check-changelog.sh\n" +
	"2026-01-01T00:00:03.1000000Z ##[endgroup]\n" +
	"2026-01-01T00:00:03.2000000Z CHANGELOG.md is missing an entry for the greeting fix\n" +
	"2026-01-01T00:00:03.3000000Z ##[error]Process completed with exit code 1.\n"

// offHost is http.DefaultTransport while a test runs: it refuses, and
// lists, every request to a host other than this machine's, so a call
// that would have gone to api.github.com (or anywhere outside the fakes)
// fails the test instead of failing quietly for want of internet.
type offHost struct {
	base http.RoundTripper
	mu   sync.Mutex
	hit  []string
}

func (o *offHost) RoundTrip(r *http.Request) (*http.Response, error) {
	if ip := net.ParseIP(r.URL.Hostname()); r.URL.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
		o.mu.Lock()
		o.hit = append(o.hit, r.Method+" "+r.URL.String())
		o.mu.Unlock()
		return nil, fmt.Errorf("test: %s is not on this machine", r.URL.Host)
	}
	return o.base.RoundTrip(r)
}

func (o *offHost) hits() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.hit...)
}

func guardOffHost(t *testing.T) *offHost {
	o := &offHost{base: http.DefaultTransport}
	http.DefaultTransport = o
	t.Cleanup(func() { http.DefaultTransport = o.base })
	return o
}

// ghesPayload is a webhook fixture as GHES sends it: its API and web
// addresses on the GHES host, installation ghesInst, changed by edit.
func ghesPayload(t *testing.T, g *githubtest.GHES, fixture string, edit func(m map[string]any)) []byte {
	t.Helper()
	raw := string(githubtest.Fixture(t, "github-webhooks", fixture))
	raw = strings.ReplaceAll(raw, "https://api.github.com/", g.URL)
	raw = strings.ReplaceAll(raw, "https://github.com/", g.Web+"/")
	var m map[string]any
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		t.Fatal(err)
	}
	m["installation"] = map[string]any{"id": ghesInst}
	edit(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// runCommand runs `patchwright command` in this process, with the
// environment the test set, until ctx ends; the returned function waits
// for its exit status.
func runCommand(ctx context.Context, cancel context.CancelFunc, t *testing.T, command string) func() int {
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{command}, io.Discard, testLog{t, command}) }()
	wait := sync.OnceValue(func() int { return <-done })
	// A test that stops early still waits for the command, which logs to it.
	t.Cleanup(func() { cancel(); wait() })
	return wait
}

// testLog writes a command's log lines to the test's log.
type testLog struct {
	t    *testing.T
	name string
}

func (l testLog) Write(p []byte) (int, error) {
	l.t.Logf("%s: %s", l.name, strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// ghesRepository makes the repository on the fake's git remote and API.
func ghesRepository(t *testing.T, g *githubtest.GHES) *githubtest.GitRemote {
	remote := githubtest.NewGitRemote(t, g.ValidToken)
	g.ServeGit(remote)
	remote.Create(t, ghesOwner, ghesRepo, "main", map[string]string{
		"greeting.txt":      "helo\n",
		".github/agent.yml": "review: off\nci_fix_attempts: 1\nverify:\n  - name: greeting\n    run: grep -qx hello greeting.txt\n",
	})
	g.AddRepo(githubtest.Repo{Owner: ghesOwner, Name: ghesRepo, DefaultBranch: "main", CloneURL: g.CloneURL(ghesOwner, ghesRepo),
		Installation: ghesInst,
		Heads:        func(b string) string { return remote.Head(t, ghesOwner, ghesRepo, b) },
		Log:          func(base, head string) []githubtest.GitCommit { return remote.Log(t, ghesOwner, ghesRepo, base, head) }})
	g.AddIssue(githubtest.Issue{Owner: ghesOwner, Repo: ghesRepo, Number: 1, Title: "Greeting is misspelled",
		Body: "greeting.txt says helo; it should say hello.", Author: ghesOwner})
	g.SetPermission(ghesOwner, ghesRepo, ghesOwner, "admin")
	return remote
}

var (
	formRE     = regexp.MustCompile(`<form method="post" action="([^"]+)">\s*<input type="hidden" name="manifest" value="([^"]*)">`)
	installRE  = regexp.MustCompile(`<a href="([^"]+)">install the app`)
	noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
)

// registerOnGHES walks the manifest flow as the operator's browser does:
// the one-time code, the form that posts the manifest to the GHES host's
// organisation page, GHES's redirect back with a code, and the callback.
func registerOnGHES(t *testing.T, g *githubtest.GHES, base, dataDir string) {
	t.Helper()
	otp, err := os.ReadFile(setup.CodePath(dataDir))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.PostForm(base+"/setup", url.Values{"code": {strings.TrimSpace(string(otp))}, "org": {ghesOrg}})
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := formRE.FindStringSubmatch(string(page))
	if resp.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("POST /setup with the code = %d, no manifest form:\n%s", resp.StatusCode, page)
	}
	action := html.UnescapeString(m[1])
	if want := g.Web + "/organizations/" + ghesOrg + "/settings/apps/new?state="; !strings.HasPrefix(action, want) {
		t.Fatalf("the manifest form posts to %s, want %s…", action, want)
	}
	// GHES answers the form with a redirect to the manifest's redirect_url.
	resp, err = noRedirect.PostForm(action, url.Values{"manifest": {html.UnescapeString(m[2])}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusFound || !strings.HasPrefix(back, base+"/setup/callback?code=") {
		t.Fatalf("GHES answered the manifest with %d to %q, want a redirect to %s/setup/callback", resp.StatusCode, back, base)
	}
	resp, err = http.Get(back)
	if err != nil {
		t.Fatal(err)
	}
	page, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	inst := installRE.FindStringSubmatch(string(page))
	if resp.StatusCode != http.StatusOK || inst == nil || !strings.HasPrefix(html.UnescapeString(inst[1]), g.Web+"/github-apps/") {
		t.Fatalf("callback = %d, want the installation link on the GHES host:\n%s", resp.StatusCode, page)
	}
	ms := g.Manifests()
	if len(ms) != 1 || !ms[0].Converted || ms[0].Org != ghesOrg || ms[0].HookURL() != base+"/webhook" {
		t.Fatalf("manifests on GHES: %+v, want one for %s, converted, with hook %s/webhook", ms, ghesOrg, base)
	}
}

// waitFor polls cond; the bound only keeps a stuck run from hanging.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never happened: %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitTask waits until task id of the agent queue completes or is
// archived, and returns its state.
func waitTask(t *testing.T, insp *asynq.Inspector, id string) *asynq.TaskInfo {
	t.Helper()
	var info *asynq.TaskInfo
	waitFor(t, "task "+id+" ends", func() bool {
		var err error
		info, err = insp.GetTaskInfo(tasks.QueueAgent, id)
		return err == nil && (info.State == asynq.TaskStateCompleted || info.State == asynq.TaskStateArchived)
	})
	return info
}

// TestGHESEndToEnd runs serve and a worker, configured only with
// PATCHWRIGHT_GITHUB_API_URL=http://HOST/api/v3, against a fake shaped
// like GitHub Enterprise Server (githubtest.GHES): the app is registered
// through /setup for an organisation on the GHES host; a label becomes a
// pull request (git over HTTP on the GHES host, REST under /api/v3, the
// check run); CI fails, its Actions log is downloaded from the GHES host
// and the fix is pushed. No request leaves the GHES shape, and none goes
// to another host (api.github.com).
func TestGHESEndToEnd(t *testing.T) {
	sandboxtest.EndToEnd(t)
	if testing.Short() {
		t.Skip("end-to-end: starts redis-server and needs Docker and the sandbox test image")
	}
	image := sandboxtest.Image(t)
	guard := guardOffHost(t)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	g := githubtest.NewGHES(t, key)
	remote := ghesRepository(t, g)
	model := pt.New(t,
		pt.Calls(pt.Call("read_file", `{"path":"greeting.txt"}`)),
		pt.Calls(pt.Call("edit", `{"edits":[{"path":"greeting.txt","old_text":"helo","new_text":"hello"}]}`)),
		pt.Calls(pt.Call("finish", `{"summary":"Fixed the spelling in greeting.txt."}`)),
		// The CI fix.
		pt.Calls(pt.Call("write_file", `{"path":"CHANGELOG.md","content":"- Fixed the greeting.\n"}`)),
		pt.Calls(pt.Call("finish", `{"summary":"Added the changelog entry CI asked for."}`)),
	)
	rs := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr()})
	t.Cleanup(func() { rdb.Close() })
	insp := asynq.NewInspectorFromRedisClient(rdb)

	dataDir := t.TempDir()
	port := redistest.FreePort(t)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	for k, v := range map[string]string{
		// The one GitHub setting: everything else follows from it.
		"PATCHWRIGHT_GITHUB_API_URL": g.Web + "/api/v3",
		"PATCHWRIGHT_DATA_DIR":       dataDir, "PATCHWRIGHT_LISTEN": fmt.Sprintf("127.0.0.1:%d", port),
		"PATCHWRIGHT_REDIS_URL": "redis://" + rs.Addr() + "/0", "PATCHWRIGHT_MODEL": "openai:" + pt.OpenAIModel,
		"OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": model.URL + "/v1", "PATCHWRIGHT_SANDBOX_IMAGE": image,
		"PATCHWRIGHT_WORKER_CONCURRENCY": "1", "PATCHWRIGHT_RUN_URL": base + "/runs",
		"PATCHWRIGHT_APP_ID": "", "PATCHWRIGHT_PRIVATE_KEY": "", "PATCHWRIGHT_PRIVATE_KEY_FILE": "", "PATCHWRIGHT_WEBHOOK_SECRET": "",
	} {
		t.Setenv(k, v)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	serveExit := runCommand(ctx, cancel, t, "serve")
	waitFor(t, "serve in setup mode", func() bool {
		_, err := os.Stat(setup.CodePath(dataDir))
		return err == nil
	})
	registerOnGHES(t, g, base, dataDir)
	waitReady(t, base)
	// The worker's /metrics on a port of its own.
	t.Setenv("PATCHWRIGHT_LISTEN", fmt.Sprintf("127.0.0.1:%d", redistest.FreePort(t)))
	traces := collectTraces(t)
	workerExit := runCommand(ctx, cancel, t, "worker")

	label := ghesPayload(t, g, "issues.labeled.json", func(m map[string]any) {
		m["label"].(map[string]any)["name"] = "agent"
		is := m["issue"].(map[string]any)
		is["number"], is["title"], is["body"] = 1, "Greeting is misspelled", "greeting.txt says helo; it should say hello."
	})
	if code, err := g.Deliver("issues", "ghes-label", label); err != nil || code != http.StatusAccepted {
		t.Fatalf("label delivery: %d %v, want 202", code, err)
	}
	if info := waitTask(t, insp, "ghes-label"); info.State != asynq.TaskStateCompleted {
		t.Fatalf("solve ended %s: %s", info.State, info.LastErr)
	}
	head := remote.Head(t, ghesOwner, ghesRepo, "agent/issue-1")
	pulls := g.Pulls(ghesOwner, ghesRepo)
	if head == "" || len(pulls) != 1 || pulls[0].Head != "agent/issue-1" {
		t.Fatalf("after the label: head %q, pull requests %+v", head, pulls)
	}
	checkOwnRun(t, g, head)

	ciFix(t, g, insp, model, head)
	checkShape(t, g, guard)
	cancel()
	if code := workerExit(); code != 0 {
		t.Errorf("worker exited %d", code)
	}
	checkJobTraces(t, traces, ghesOwner+"/"+ghesRepo, 2)
	if code := serveExit(); code != 0 {
		t.Errorf("serve exited %d", code)
	}
}

// checkOwnRun: Patchwright's check run on head completed.
func checkOwnRun(t *testing.T, g *githubtest.GHES, head string) {
	t.Helper()
	for _, c := range g.CheckRuns(ghesOwner, ghesRepo, head) {
		if c.App == "" && c.Status == "completed" && c.Conclusion == "success" {
			return
		}
	}
	t.Errorf("no completed, successful check run of Patchwright's on %s: %+v", head, g.CheckRuns(ghesOwner, ghesRepo, head))
}

// ciFix fails CI on head and checks the fix: the Actions log, read from
// the GHES host, in the model's prompt; a new head pushed.
func ciFix(t *testing.T, g *githubtest.GHES, insp *asynq.Inspector, model *pt.Server, head string) {
	t.Helper()
	solved := len(model.Requests())
	g.AddForeignCheckRun(githubtest.CheckRun{Owner: ghesOwner, Repo: ghesRepo, Name: "changelog", HeadSHA: head, App: "github-actions",
		Conclusion: "failure", Title: "changelog check failed", Log: ghesActionsLog})
	suite := ghesPayload(t, g, "check_suite.completed.json", func(m map[string]any) {
		cs := m["check_suite"].(map[string]any)
		cs["head_branch"], cs["head_sha"], cs["conclusion"] = "agent/issue-1", head, "failure"
		cs["app"] = map[string]any{"id": 15368, "slug": "github-actions", "name": "GitHub Actions"}
		m["repository"].(map[string]any)["owner"].(map[string]any)["login"] = ghesOwner
		m["repository"].(map[string]any)["name"] = ghesRepo
	})
	if code, err := g.Deliver("check_suite", "ghes-ci-red", suite); err != nil || code != http.StatusAccepted {
		t.Fatalf("failed check suite: %d %v, want 202", code, err)
	}
	issue := tasks.Issue{InstallationID: ghesInst, Owner: ghesOwner, Repo: ghesRepo, Number: 1}
	if info := waitTask(t, insp, tasks.CIFixID(issue, head)); info.State != asynq.TaskStateCompleted {
		t.Fatalf("CI fix ended %s: %s", info.State, info.LastErr)
	}
	reqs := model.Requests()
	if len(reqs) != solved+2 {
		t.Fatalf("%d model requests, want %d: one CI fix of two turns", len(reqs), solved+2)
	}
	if !strings.Contains(string(reqs[solved].Body), "CHANGELOG.md is missing an entry") {
		t.Errorf("the CI fix's prompt lacks the Actions log's failing step:\n%s", reqs[solved].Body)
	}
	pulls := g.Pulls(ghesOwner, ghesRepo)
	if len(pulls) != 1 || pulls[0].HeadSHA == head {
		t.Errorf("after the fix: pull requests %+v, want one with a head past %s", pulls, head)
	}
}

// checkShape: every request landed on a GHES path, each part of GHES was
// used, and nothing went to another host.
func checkShape(t *testing.T, g *githubtest.GHES, guard *offHost) {
	t.Helper()
	if s := g.Strays(); len(s) > 0 {
		t.Errorf("requests outside GHES's shape: %+v", s)
	}
	if h := guard.hits(); len(h) > 0 {
		t.Errorf("requests to other hosts: %v", h)
	}
	repo := "/" + ghesOwner + "/" + ghesRepo
	// Commits are pushed through the git data API; git over HTTPS clones
	// and fetches.
	parts := []string{"/organizations/" + ghesOrg + "/settings/apps/new", "/api/v3/app-manifests/", "/api/v3/app/installations/",
		"/api/v3/repos" + repo + "/pulls", "/api/v3/repos" + repo + "/check-runs", "/api/v3/repos" + repo + "/git/commits",
		"/api/graphql", "/api/v3/repos" + repo + "/actions/jobs/", "/_services/pipelines/job-logs/",
		repo + ".git/info/refs", repo + ".git/git-upload-pack"}
	seen := map[string]bool{}
	for _, r := range g.Requests() {
		for _, part := range parts {
			if strings.HasPrefix(r.Path, part) && r.Status < 400 {
				seen[part] = true
			}
		}
	}
	for _, part := range parts {
		if !seen[part] {
			t.Errorf("no successful request to %s on the GHES host", part)
		}
	}
}
