package setup

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"html"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

const testPEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEtest\n-----END RSA PRIVATE KEY-----\n"

// fakeGitHub serves POST /app-manifests/{code}/conversions as GitHub
// documents it: 201 with the app's configuration for the code "good", 404
// for "expired" and 422 for "spammed" (the endpoint's two documented
// errors), 500 for anything else. calls counts the requests.
func fakeGitHub(t *testing.T, calls *atomic.Int32) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /app-manifests/{code}/conversions", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		doc := "https://docs.github.com/rest/apps/apps#create-a-github-app-from-a-manifest"
		switch r.PathValue("code") {
		case "good":
			w.WriteHeader(http.StatusCreated)
			json.NewEncoder(w).Encode(map[string]any{
				"id": 42, "slug": "patchwright-acme", "node_id": "MDM6QXBwNTk=", "name": "Patchwright (acme)",
				"owner":     map[string]any{"login": "acme", "id": 1, "type": "Organization"},
				"html_url":  "https://github.com/apps/patchwright-acme",
				"client_id": "Iv1.8a61f9b3a7aba766", "client_secret": "1726be1638095a19edd134c77bde3aa2ece1e5d8",
				"webhook_secret": "e340154128314309424b7c8e90325147d99fdafa", "pem": testPEM,
			})
		case "expired":
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"message":"Not Found","documentation_url":%q,"status":"404"}`, doc)
		case "spammed":
			w.WriteHeader(http.StatusUnprocessableEntity)
			fmt.Fprintf(w, `{"message":"Validation Failed","errors":[{"resource":"AppManifest","code":"invalid"}],"documentation_url":%q,"status":"422"}`, doc)
		default:
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `{"message":"Server Error"}`)
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

type fixture struct {
	h     *Handler
	dir   string
	calls *atomic.Int32
	now   time.Time
	done  []Credentials
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{dir: t.TempDir(), calls: new(atomic.Int32), now: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	gh := fakeGitHub(t, f.calls)
	h, err := New(Config{
		DataDir: f.dir, APIURL: gh.URL, WebURL: "https://ghe.example.com/",
		Now:          func() time.Time { return f.now },
		Logger:       slog.New(slog.DiscardHandler),
		OnConfigured: func(c Credentials) { f.done = append(f.done, c) },
	})
	if err != nil {
		t.Fatal(err)
	}
	f.h = h
	return f
}

func (f *fixture) get(t *testing.T, target string) (int, string) {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, target, nil)
	r.Host = "patchwright.example.org"
	r.Header.Set("X-Forwarded-Proto", "https")
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, r)
	return w.Code, w.Body.String()
}

var (
	actionRE   = regexp.MustCompile(`<form method="post" action="([^"]+)">`)
	manifestRE = regexp.MustCompile(`name="manifest" value="([^"]+)"`)
)

// post submits the code form.
func (f *fixture) post(t *testing.T, form url.Values) (int, string) {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/setup", strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Host = "patchwright.example.org"
	r.Header.Set("X-Forwarded-Proto", "https")
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, r)
	return w.Code, w.Body.String()
}

// code reads the one-time code from the file the operator reads.
func (f *fixture) code(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(CodePath(f.dir))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// start posts the one-time code to /setup (with query's org, if any) and
// returns the manifest form's action and the decoded manifest.
func (f *fixture) start(t *testing.T, query string) (action *url.URL, manifest map[string]any) {
	t.Helper()
	q, _ := url.ParseQuery(strings.TrimPrefix(query, "?"))
	q.Set("code", f.code(t))
	code, body := f.post(t, q)
	if code != http.StatusOK {
		t.Fatalf("POST /setup %s = %d\n%s", query, code, body)
	}
	a := actionRE.FindStringSubmatch(body)
	m := manifestRE.FindStringSubmatch(body)
	if a == nil || m == nil {
		t.Fatalf("no manifest form in\n%s", body)
	}
	action, err := url.Parse(html.UnescapeString(a[1]))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &manifest); err != nil {
		t.Fatalf("manifest field: %v", err)
	}
	return action, manifest
}

func TestStartPostsTheManifestWithThisServersURLs(t *testing.T) {
	f := newFixture(t)
	action, m := f.start(t, "")
	if got := action.Scheme + "://" + action.Host + action.Path; got != "https://ghe.example.com/settings/apps/new" {
		t.Errorf("form posts to %s", got)
	}
	if action.Query().Get("state") == "" {
		t.Error("no state in the form's action")
	}
	hook, _ := m["hook_attributes"].(map[string]any)
	if hook["url"] != "https://patchwright.example.org/webhook" || hook["active"] != true {
		t.Errorf("hook_attributes = %v", hook)
	}
	if m["redirect_url"] != "https://patchwright.example.org/setup/callback" {
		t.Errorf("redirect_url = %v", m["redirect_url"])
	}
	if m["name"] != "Patchwright" || m["public"] != false {
		t.Errorf("manifest lost app.yml's fields: %v", m)
	}

	orgAction, _ := f.start(t, "?org=acme-corp")
	if orgAction.Path != "/organizations/acme-corp/settings/apps/new" {
		t.Errorf("organisation form posts to %s", orgAction.Path)
	}
	if orgAction.Query().Get("state") == action.Query().Get("state") {
		t.Error("two pages got the same state")
	}
}

func TestStartRefusesABadOrganisation(t *testing.T) {
	f := newFixture(t)
	for _, org := range []string{"../../x", "a b", "-acme", strings.Repeat("a", 40), "acme--corp", "<script>"} {
		code, body := f.get(t, "/setup?org="+url.QueryEscape(org))
		if code != http.StatusBadRequest {
			t.Errorf("org %q: status %d", org, code)
		}
		if strings.Contains(body, "<script>") {
			t.Errorf("org %q echoed unescaped", org)
		}
	}
}

func TestCallbackRefusesAStateItDidNotIssue(t *testing.T) {
	f := newFixture(t)
	f.start(t, "")
	for name, q := range map[string]string{
		"unknown": "?code=good&state=forged",
		"missing": "?code=good",
	} {
		if code, _ := f.get(t, "/setup/callback"+q); code != http.StatusBadRequest {
			t.Errorf("%s state: status %d, want 400", name, code)
		}
	}
	if f.calls.Load() != 0 {
		t.Errorf("exchanged a code %d times without a valid state", f.calls.Load())
	}
	assertNotConfigured(t, f)
}

func TestCallbackRefusesAnExpiredState(t *testing.T) {
	f := newFixture(t)
	action, _ := f.start(t, "")
	f.now = f.now.Add(StateTTL)
	if code, _ := f.get(t, "/setup/callback?code=good&state="+action.Query().Get("state")); code != http.StatusBadRequest {
		t.Fatalf("status %d after the state's hour, want 400", code)
	}
	if f.calls.Load() != 0 {
		t.Error("exchanged a code for an expired state")
	}
	assertNotConfigured(t, f)
}

func TestCallbackRefusesAMalformedCode(t *testing.T) {
	f := newFixture(t)
	action, _ := f.start(t, "")
	q := url.Values{"code": {"../../user"}, "state": {action.Query().Get("state")}}
	if code, _ := f.get(t, "/setup/callback?"+q.Encode()); code != http.StatusBadRequest {
		t.Fatalf("status %d for a code with a path in it", code)
	}
	if f.calls.Load() != 0 {
		t.Error("sent a malformed code to GitHub")
	}
}

func TestCallbackSaysWhenGitHubRefusesTheCode(t *testing.T) {
	for _, code := range []string{"expired", "spammed"} {
		t.Run(code, func(t *testing.T) {
			f := newFixture(t)
			action, _ := f.start(t, "")
			state := action.Query().Get("state")
			status, body := f.get(t, "/setup/callback?code="+code+"&state="+state)
			if status != http.StatusBadRequest || !strings.Contains(body, "The code expired") || !strings.Contains(body, `href="/setup"`) {
				t.Fatalf("status %d\n%s", status, body)
			}
			if f.calls.Load() != 1 {
				t.Fatalf("%d exchanges, want 1", f.calls.Load())
			}
			assertNotConfigured(t, f)
			// The state is spent: a reload does not exchange again.
			if status, _ := f.get(t, "/setup/callback?code=good&state="+state); status != http.StatusBadRequest {
				t.Fatalf("reused state: status %d", status)
			}
			// Setup stays open for another try.
			f.start(t, "")
		})
	}
}

func TestCallbackReportsAnUnreachableGitHub(t *testing.T) {
	f := newFixture(t)
	action, _ := f.start(t, "")
	if status, _ := f.get(t, "/setup/callback?code=broken&state="+action.Query().Get("state")); status != http.StatusBadGateway {
		t.Fatalf("status %d on GitHub's 500, want 502", status)
	}
	assertNotConfigured(t, f)
}

func assertNotConfigured(t *testing.T, f *fixture) {
	t.Helper()
	if f.h.Configured() || len(f.done) > 0 {
		t.Fatal("configured")
	}
	if _, err := os.Stat(filepath.Join(f.dir, Dir)); err == nil {
		t.Fatal("credentials directory written")
	}
}

func TestCallbackStoresTheCredentialsAndCloses(t *testing.T) {
	f := newFixture(t)
	action, _ := f.start(t, "")
	status, body := f.get(t, "/setup/callback?code=good&state="+action.Query().Get("state"))
	if status != http.StatusOK {
		t.Fatalf("status %d\n%s", status, body)
	}
	if !strings.Contains(body, `href="https://github.com/apps/patchwright-acme/installations/new"`) {
		t.Errorf("no install link in\n%s", body)
	}
	if strings.Contains(body, "e340154128314309424b7c8e90325147d99fdafa") || strings.Contains(body, "MIIEtest") {
		t.Error("the page shows a credential")
	}

	dir := filepath.Join(f.dir, Dir)
	info, err := os.Stat(dir)
	if err != nil || info.Mode().Perm() != 0o700 {
		t.Fatalf("credentials directory: %v, mode %v", err, info.Mode())
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", e.Name(), info.Mode().Perm())
		}
	}
	if !slices.Equal(names, []string{AppFile, KeyFile}) {
		t.Errorf("files %q, want %s and %s only (no temporary leftovers)", names, AppFile, KeyFile)
	}

	c, ok, err := Load(f.dir)
	if err != nil || !ok {
		t.Fatalf("Load: %v, %v", ok, err)
	}
	want := Credentials{AppID: 42, Slug: "patchwright-acme", HTMLURL: "https://github.com/apps/patchwright-acme",
		WebhookSecret: "e340154128314309424b7c8e90325147d99fdafa", PrivateKey: []byte(testPEM)}
	if c.AppID != want.AppID || c.Slug != want.Slug || c.HTMLURL != want.HTMLURL || c.WebhookSecret != want.WebhookSecret || !bytes.Equal(c.PrivateKey, want.PrivateKey) {
		t.Errorf("Load = %+v, want %+v", c, want)
	}
	if len(f.done) != 1 || f.done[0].AppID != 42 {
		t.Errorf("OnConfigured calls: %+v", f.done)
	}

	// Closed: neither page works any more, in this process or the next.
	for _, target := range []string{"/setup", "/setup/callback?code=good&state=x"} {
		if status, _ := f.get(t, target); status != http.StatusNotFound {
			t.Errorf("GET %s after setup: %d, want 404", target, status)
		}
	}
	again, err := New(Config{DataDir: f.dir})
	if err != nil {
		t.Fatal(err)
	}
	if !again.Configured() {
		t.Error("a new handler on the same data directory is not configured")
	}
	if f.calls.Load() != 1 {
		t.Errorf("%d exchanges, want 1", f.calls.Load())
	}
}

func TestSaveNeverReplacesCredentials(t *testing.T) {
	dir := t.TempDir()
	c := Credentials{AppID: 1, Slug: "a", WebhookSecret: "s", PrivateKey: []byte("k")}
	if err := save(dir, c); err != nil {
		t.Fatal(err)
	}
	c.AppID = 2
	if err := save(dir, c); err != ErrConfigured {
		t.Fatalf("second save: %v, want ErrConfigured", err)
	}
	got, _, err := Load(dir)
	if err != nil || got.AppID != 1 {
		t.Fatalf("Load after a refused save: %+v, %v", got, err)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	if _, ok, err := Load(dir); ok || err != nil {
		t.Fatalf("empty data directory: ok=%v err=%v", ok, err)
	}
	write := func(name, content string) {
		t.Helper()
		os.MkdirAll(filepath.Join(dir, Dir), 0o700)
		if err := os.WriteFile(filepath.Join(dir, Dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(AppFile, "{not json")
	if _, _, err := Load(dir); err == nil {
		t.Error("corrupt app.json loaded")
	}
	write(AppFile, `{"app_id": 7}`)
	if _, _, err := Load(dir); err == nil {
		t.Error("app.json without a webhook secret loaded")
	}
	write(AppFile, `{"app_id": 7, "webhook_secret": "s"}`)
	if _, _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "private key") {
		t.Errorf("app.json without a key file: %v", err)
	}
	write(KeyFile, testPEM)
	if c, ok, err := Load(dir); err != nil || !ok || c.AppID != 7 {
		t.Errorf("Load = %+v, %v, %v", c, ok, err)
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	for name, cfg := range map[string]Config{
		"no data dir": {},
		"bad API URL": {DataDir: t.TempDir(), APIURL: "ftp://x"},
		"bad web URL": {DataDir: t.TempDir(), WebURL: "github.com"},
		"bad public":  {DataDir: t.TempDir(), PublicURL: "patchwright.example.com"},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestOnlyGET(t *testing.T) {
	f := newFixture(t)
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/setup/callback?code=good&state=x", nil))
	if w.Code != http.StatusMethodNotAllowed {
		t.Fatalf("POST: %d", w.Code)
	}
}

func TestUnfinishedPagesCostBoundedMemory(t *testing.T) {
	f := newFixture(t)
	first, _ := f.start(t, "")
	for range maxStates + 10 {
		f.now = f.now.Add(time.Second)
		if _, err := f.h.issueState(); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(f.h.states); n > maxStates {
		t.Fatalf("%d states kept, cap %d", n, maxStates)
	}
	if f.h.takeState(first.Query().Get("state")) {
		t.Error("the oldest state survived the cap")
	}
}

func TestNotConfiguredWebhook(t *testing.T) {
	w := httptest.NewRecorder()
	NotConfigured().ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/webhook", nil))
	if w.Code != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503", w.Code)
	}
}

// TestManifestCopyIsAppYML: the binary embeds webhook/setup/app.yml; the
// repository's app.yml is what people read and register by hand.
func TestManifestCopyIsAppYML(t *testing.T) {
	root, err := os.ReadFile("../../app.yml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(root, Manifest()) {
		t.Fatal("webhook/setup/app.yml differs from app.yml: cp app.yml webhook/setup/app.yml")
	}
}

// dispatchedEvents reads the event names webhook/handler.go's dispatch
// switches on, from its source, so this test follows the handler.
func dispatchedEvents(t *testing.T) []string {
	t.Helper()
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "../handler.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	ast.Inspect(file, func(n ast.Node) bool {
		fn, ok := n.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "dispatch" {
			return true
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			sw, ok := n.(*ast.SwitchStmt)
			if !ok || !isEventField(sw.Tag) {
				return true
			}
			for _, stmt := range sw.Body.List {
				for _, e := range stmt.(*ast.CaseClause).List {
					if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						s, _ := strconv.Unquote(lit.Value)
						events = append(events, s)
					}
				}
			}
			return true
		})
		return false
	})
	if len(events) == 0 {
		t.Fatal("found no `switch d.event` cases in webhook/handler.go's dispatch")
	}
	slices.Sort(events)
	return events
}

func isEventField(e ast.Expr) bool {
	sel, ok := e.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "event"
}

func TestAppYMLSubscribesToTheHandledEvents(t *testing.T) {
	var m struct {
		Events      []string          `yaml:"default_events"`
		Permissions map[string]string `yaml:"default_permissions"`
	}
	if err := yaml.Unmarshal(Manifest(), &m); err != nil {
		t.Fatal(err)
	}
	got := slices.Sorted(slices.Values(m.Events))
	if want := dispatchedEvents(t); !slices.Equal(got, want) {
		t.Fatalf("app.yml subscribes to %q; webhook/handler.go handles %q", got, want)
	}
	// The least that works: each permission here is used (app.yml says
	// where); a new one needs a reason there and here.
	// actions: read is for the failed job's log of a CI fix (issue 25).
	want := map[string]string{"metadata": "read", "contents": "write", "issues": "write", "pull_requests": "write", "checks": "write", "actions": "read"}
	if fmt.Sprint(m.Permissions) != fmt.Sprint(want) {
		t.Fatalf("permissions %v, want %v", m.Permissions, want)
	}
}

// The store's files are never readable by others, whatever the umask.
func TestWritePrivateIgnoresUmask(t *testing.T) {
	dir := t.TempDir()
	if err := writePrivate(dir, "f", []byte("x")); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(filepath.Join(dir, "f"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm()&fs.FileMode(0o077) != 0 {
		t.Fatalf("mode %v", info.Mode())
	}
}

func TestWebURLFor(t *testing.T) {
	for api, want := range map[string]string{
		"https://api.github.com/":         "https://github.com",
		"https://ghe.example.com/api/v3/": "https://ghe.example.com",
		"http://127.0.0.1:8080/":          "http://127.0.0.1:8080",
	} {
		if got, err := WebURLFor(api); err != nil || got != want {
			t.Errorf("WebURLFor(%q) = %q, %v; want %q", api, got, err, want)
		}
	}
	for _, bad := range []string{"", "api.github.com", "ftp://x/"} {
		if _, err := WebURLFor(bad); err == nil {
			t.Errorf("WebURLFor(%q) accepted", bad)
		}
	}
}
