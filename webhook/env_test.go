package webhook

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/githubtest"
	"github.com/patchwright/patchwright/jobs/redistest"
	"github.com/patchwright/patchwright/report/marker"
)

const (
	testSecret   = "test secret"
	testBot      = "patchwright-test[bot]"
	testInstall  = 4242
	testRedisDB  = 3 // each package its own DB (jobs 1, worker 2, e2e 5): packages' tests run in parallel
	writerLogin  = "maintainer"
	readerLogin  = "LizzHale"
	fixtureHooks = "github-webhooks"
	fixtureAPI   = "github-api"
)

// fixture reads a file of testdata/fixtures.
func fixture(t testing.TB, dir, name string) []byte {
	return githubtest.Fixture(t, dir, name)
}

// fixturePayload loads a webhook fixture as a map and applies edits to a copy.
func fixturePayload(t testing.TB, name string, edit func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(fixture(t, fixtureHooks, name), &m); err != nil {
		t.Fatal(err)
	}
	m["installation"] = map[string]any{"id": testInstall}
	if edit != nil {
		edit(m)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func obj(m map[string]any, key string) map[string]any { return m[key].(map[string]any) }

// testRedis returns a flushed client on this package's test Redis DB.
func testRedis(t testing.TB) *redis.Client { return redistest.Client(t, testRedisDB) }

var (
	keyOnce sync.Once
	keyPEM  []byte
)

// testKey is an RSA key for ghinstallation's JWTs, made once per run.
func testKey(t testing.TB) []byte {
	keyOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		keyPEM = pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
	})
	return keyPEM
}

// fakeGitHub implements, at the HTTP level, the endpoints Patchwright calls.
type fakeGitHub struct {
	t testing.TB

	mu          sync.Mutex
	perms       map[string][]byte // login → permission response body
	heads       map[int]string    // pull request → head branch
	closed      map[int]bool      // pull request → closed
	openPRs     map[string]int    // head branch → open pull request
	pushed      map[string]string // head branch → the head the app pushed (the body's marker)
	headSHA     map[string]string // head branch → its head when someone else pushed since
	mergeable   map[int]string    // pull request → its mergeable_state
	comments    []string
	permHits    int
	deliveries  []map[string]any // GET /app/hook/deliveries
	redelivered []int64
	onRedeliver func(id int64)
}

func newFakeGitHub(t testing.TB) (*fakeGitHub, *httptest.Server) {
	f := &fakeGitHub{
		t: t, perms: map[string][]byte{}, heads: map[int]string{}, closed: map[int]bool{}, openPRs: map[string]int{},
		pushed: map[string]string{}, headSHA: map[string]string{}, mergeable: map[int]string{},
	}
	f.perms[strings.ToLower(writerLogin)] = []byte(`{"permission":"write","role_name":"write","user":{"login":"maintainer"}}`)
	f.perms[strings.ToLower(readerLogin)] = fixture(t, fixtureAPI, "collaborator-permission.get.200.legacy-2017.recorded.json")
	mux := http.NewServeMux()
	mux.HandleFunc("POST /app/installations/{id}/access_tokens", func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
			http.Error(w, "no app JWT", http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusCreated)
		// Expiry in the past would make ghinstallation refresh every call.
		var tok map[string]any
		json.Unmarshal(fixture(t, fixtureAPI, "installation-access-token.post.201.json"), &tok)
		tok["expires_at"] = "2099-01-01T00:00:00Z"
		json.NewEncoder(w).Encode(tok)
	})
	mux.HandleFunc("GET /app", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"id":1,"slug":"patchwright-test","name":"Patchwright test"}`)
	})
	mux.HandleFunc("GET /repos/{o}/{r}/collaborators/{u}/permission", func(w http.ResponseWriter, r *http.Request) {
		if !f.installationAuth(w, r) {
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		f.permHits++
		body, ok := f.perms[strings.ToLower(r.PathValue("u"))]
		if !ok {
			http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
			return
		}
		w.Write(body)
	})
	mux.HandleFunc("GET /repos/{o}/{r}/pulls/{n}", func(w http.ResponseWriter, r *http.Request) {
		if !f.installationAuth(w, r) {
			return
		}
		n, _ := strconv.Atoi(r.PathValue("n"))
		f.mu.Lock()
		defer f.mu.Unlock()
		head, ok := f.heads[n]
		if !ok {
			http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
			return
		}
		state := "open"
		if f.closed[n] {
			state = "closed"
		}
		json.NewEncoder(w).Encode(map[string]any{"number": n, "state": state, "head": map[string]any{"ref": head},
			"base": map[string]any{"ref": "master"}, "mergeable_state": cmp.Or(f.mergeable[n], "unknown")})
	})
	mux.HandleFunc("GET /repos/{o}/{r}/pulls", func(w http.ResponseWriter, r *http.Request) {
		if !f.installationAuth(w, r) {
			return
		}
		_, branch, _ := strings.Cut(r.URL.Query().Get("head"), ":")
		f.mu.Lock()
		defer f.mu.Unlock()
		list := []map[string]any{}
		for head, n := range f.openPRs {
			if (branch != "" && head != branch) || r.URL.Query().Get("state") != "open" {
				continue
			}
			// Listed by base (no head): every open one, as push does.
			pr := map[string]any{"number": n, "state": "open", "head": map[string]any{"ref": head, "label": r.PathValue("o") + ":" + head}}
			if sha, ok := f.pushed[head]; ok {
				pr["head"].(map[string]any)["sha"] = cmp.Or(f.headSHA[head], sha)
				pr["body"] = "Fixes the issue.\n\n" + marker.Pushed(sha)
			}
			list = append(list, pr)
		}
		json.NewEncoder(w).Encode(list)
	})
	mux.HandleFunc("GET /repos/{o}/{r}/issues/{n}", func(w http.ResponseWriter, r *http.Request) {
		if !f.installationAuth(w, r) {
			return
		}
		n, _ := strconv.Atoi(r.PathValue("n"))
		json.NewEncoder(w).Encode(map[string]any{"number": n, "title": "Issue title", "body": "Issue body", "state": "open"})
	})
	mux.HandleFunc("POST /repos/{o}/{r}/issues/{n}/comments", func(w http.ResponseWriter, r *http.Request) {
		if !f.installationAuth(w, r) {
			return
		}
		var c struct{ Body string }
		json.NewDecoder(r.Body).Decode(&c)
		f.mu.Lock()
		f.comments = append(f.comments, c.Body)
		f.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, `{"id":1}`)
	})
	mux.HandleFunc("GET /app/hook/deliveries", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		json.NewEncoder(w).Encode(f.deliveries)
	})
	mux.HandleFunc("POST /app/hook/deliveries/{id}/attempts", func(w http.ResponseWriter, r *http.Request) {
		id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
		f.mu.Lock()
		f.redelivered = append(f.redelivered, id)
		hook := f.onRedeliver
		f.mu.Unlock()
		if hook != nil {
			hook(id)
		}
		w.WriteHeader(http.StatusAccepted)
		fmt.Fprint(w, `{}`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return f, srv
}

// installationAuth checks the request carries the fixture's installation token.
func (f *fakeGitHub) installationAuth(w http.ResponseWriter, r *http.Request) bool {
	if r.Header.Get("Authorization") != "token ghs_16C7e42F292c6912E7710c838347Ae178B4a" {
		http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
		return false
	}
	return true
}

func (f *fakeGitHub) permissionHits() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.permHits
}

var discardLogger = slog.New(slog.DiscardHandler)

// testLogger writes to the test's output, shown only when it fails.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), nil))
}

// env is a handler on real Redis and the real GitHub adapter against the fake.
type env struct {
	t     testing.TB
	rdb   *redis.Client
	queue *jobs.Queue
	insp  *asynq.Inspector
	gh    *fakeGitHub
	app   *githubapi.App
	h     *Handler
}

func newEnv(t testing.TB) *env {
	t.Helper()
	rdb := testRedis(t)
	return newEnvOn(t, rdb)
}

func newEnvOn(t testing.TB, rdb *redis.Client) *env {
	t.Helper()
	gh, srv := newFakeGitHub(t)
	app, err := githubapi.NewApp(1, testKey(t), srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	q := jobs.NewQueue(rdb)
	insp := asynq.NewInspectorFromRedisClient(rdb)
	t.Cleanup(func() { insp.Close() })
	audit := func(ctx context.Context, e jobs.AuditEntry) error { return q.Audit(ctx, e, 0) }
	h, err := New(Config{Secret: []byte(testSecret), BotLogin: testBot, Logger: testLogger(t), Meanings: q, Audit: audit}, q, githubapi.NewPermissionCache(app, 0))
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, rdb: rdb, queue: q, insp: insp, gh: gh, app: app, h: h}
}

// deliver sends a signed JSON delivery to the handler as its own
// occurrence of the event: tests send one fixture under several delivery
// IDs to stand for several events, and GitHub's bodies of two events differ
// in the fields that identify them (payload.Identity), so deliver stamps
// those from the delivery ID. The same ID gives the same body, as GitHub's
// redelivery does; deliverExact sends the bytes as they are (a replay).
func (e *env) deliver(event, id string, body []byte) *httptest.ResponseRecorder {
	e.t.Helper()
	return e.deliverExact(event, id, occurrence(event, id, body))
}

// occurrence stamps body as the occurrence of event that delivery id
// carries; a body that is not a JSON object is left as it is.
func occurrence(event, id string, body []byte) []byte {
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var m map[string]any
	if d.Decode(&m) != nil {
		return body
	}
	stamp := func(object, field string, v any) {
		if o, ok := m[object].(map[string]any); ok {
			o[field] = v
		}
	}
	h := fnv.New32a()
	h.Write([]byte(id))
	n, at := int64(h.Sum32())+1, time.Unix(1700000000+int64(h.Sum32()), 0).UTC().Format(time.RFC3339)
	switch event {
	case "issues":
		stamp("issue", "updated_at", at)
	case "issue_comment":
		stamp("comment", "id", n)
	case "pull_request":
		stamp("pull_request", "updated_at", at)
	case "pull_request_review":
		stamp("review", "id", n)
	case "installation", "installation_repositories":
		stamp("installation", "updated_at", at)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return body
	}
	return b
}

// deliverExact sends body, signed, byte for byte.
func (e *env) deliverExact(event, id string, body []byte) *httptest.ResponseRecorder {
	e.t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/webhook", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", id)
	req.Header.Set("X-Hub-Signature-256", Signature([]byte(testSecret), body))
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	return rec
}

// tasks lists the tasks waiting in a queue (no worker runs in these tests).
func (e *env) tasks(queue string) []*asynq.TaskInfo {
	e.t.Helper()
	ts, err := e.insp.ListPendingTasks(queue)
	if err != nil && !strings.Contains(err.Error(), "queue not found") {
		e.t.Fatalf("list %s tasks: %v", queue, err)
	}
	return ts
}

func expectStatus(t testing.TB, rec *httptest.ResponseRecorder, want int) {
	t.Helper()
	if rec.Code != want {
		t.Fatalf("status = %d (%q), want %d", rec.Code, strings.TrimSpace(rec.Body.String()), want)
	}
}

// labeled is issues.labeled with the trigger label on issue n by sender.
func labeled(t testing.TB, n int, sender string) []byte {
	return fixturePayload(t, "issues.labeled.json", func(m map[string]any) {
		obj(m, "label")["name"] = "agent"
		obj(m, "issue")["number"] = n
		obj(m, "sender")["login"] = sender
	})
}
