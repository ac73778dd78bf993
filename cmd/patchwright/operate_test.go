package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/patchwright/patchwright/jobs/runstore"
	"github.com/patchwright/patchwright/webhook"
	"github.com/patchwright/patchwright/webhook/runpage"
	"github.com/patchwright/patchwright/webhook/setup"
)

// fakeApp is GitHub as serve sees it: the app, its deliveries, tokens,
// permissions, and the manifest conversion that hands out key and secret.
func fakeApp(t *testing.T, keyPEM []byte, secret string) *httptest.Server {
	t.Helper()
	gh := http.NewServeMux()
	gh.HandleFunc("GET /app", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"slug":"pw"}`) })
	gh.HandleFunc("GET /app/hook/deliveries", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `[]`) })
	gh.HandleFunc("POST /app/installations/{id}/access_tokens", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, `{"token":"t","expires_at":"2099-01-01T00:00:00Z"}`)
	})
	gh.HandleFunc("GET /repos/{o}/{r}/collaborators/{u}/permission", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"permission":"admin","role_name":"admin"}`)
	})
	gh.HandleFunc("POST /app-manifests/{code}/conversions", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("code") != "c0de" {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"message":"Not Found"}`)
			return
		}
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(map[string]any{
			"id": 1, "slug": "pw", "html_url": "https://github.com/apps/pw",
			"webhook_secret": secret, "pem": string(keyPEM),
		})
	})
	srv := httptest.NewServer(gh)
	t.Cleanup(srv.Close)
	return srv
}

func testKey(t *testing.T) []byte {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
}

func get(t *testing.T, target string) (int, string) {
	t.Helper()
	resp, err := http.Get(target)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func deliver(t *testing.T, base, secret, id string) int {
	t.Helper()
	body := []byte(`{"action":"labeled","label":{"name":"agent"},"issue":{"number":3},"repository":{"name":"r","owner":{"login":"o"}},"sender":{"login":"u","type":"User"},"installation":{"id":5}}`)
	req, _ := http.NewRequest(http.MethodPost, base+"/webhook", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", "issues")
	req.Header.Set("X-GitHub-Delivery", id)
	req.Header.Set("X-Hub-Signature-256", webhook.Signature([]byte(secret), body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// startServe runs serve on a loopback port until the test ends.
func startServe(t *testing.T, cfg config) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cfg, slog.New(slog.NewTextHandler(t.Output(), nil)), ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

// waitReady polls /readyz until it answers 200: the move out of setup mode
// happens after the callback's page is written. It is a wait for a state,
// bounded so a broken server fails the test rather than hanging it.
func waitReady(t *testing.T, base string) {
	t.Helper()
	for range 500 {
		if code, _ := get(t, base+"/readyz"); code == http.StatusOK {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("serve never became ready after setup")
}

var actionRE = regexp.MustCompile(`<form method="post" action="([^"]+)">`)

// TestServeSetupMode starts serve without credentials, registers the app
// through /setup against the fake GitHub, and checks that the same
// process then takes a delivery signed with the new secret and counts it
// on /metrics.
func TestServeSetupMode(t *testing.T) {
	key := testKey(t)
	gh := fakeApp(t, key, "fresh-secret")
	dataDir := t.TempDir()
	base := startServe(t, config{setupMode: true, dataDir: dataDir, githubAPIURL: gh.URL, triggerLabel: "agent"})

	if code := deliver(t, base, "fresh-secret", "d-0"); code != http.StatusServiceUnavailable {
		t.Fatalf("webhook in setup mode = %d, want 503", code)
	}
	if code, _ := get(t, base+"/readyz"); code != http.StatusServiceUnavailable {
		t.Fatalf("readyz in setup mode = %d, want 503", code)
	}
	// /setup asks for the one-time code serve wrote to the data directory.
	code, page := get(t, base+"/setup")
	if code != http.StatusOK || !strings.Contains(page, `name="code"`) {
		t.Fatalf("GET /setup = %d, want the code form\n%s", code, page)
	}
	otp, err := os.ReadFile(setup.CodePath(dataDir))
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.PostForm(base+"/setup", url.Values{"code": {strings.TrimSpace(string(otp))}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	code, page = res.StatusCode, string(b)
	m := actionRE.FindStringSubmatch(page)
	if code != http.StatusOK || m == nil {
		t.Fatalf("POST /setup with the code = %d\n%s", code, page)
	}
	action, err := url.Parse(html.UnescapeString(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	if action.Host != strings.TrimPrefix(gh.URL, "http://") {
		t.Errorf("the form posts to %s, want the configured GitHub host", action)
	}
	if !strings.Contains(page, html.EscapeString(`"url":"`+base+`/webhook"`)) {
		t.Errorf("the manifest does not carry this server's webhook URL %s/webhook", base)
	}
	code, page = get(t, base+"/setup/callback?code=c0de&state="+url.QueryEscape(action.Query().Get("state")))
	if code != http.StatusOK {
		t.Fatalf("callback = %d\n%s", code, page)
	}
	waitReady(t, base)

	if code := deliver(t, base, "fresh-secret", "d-1"); code != http.StatusAccepted {
		t.Fatalf("webhook after setup = %d, want 202", code)
	}
	if code, _ := get(t, base+"/setup"); code != http.StatusNotFound {
		t.Errorf("/setup after setup = %d, want 404", code)
	}
	if _, body := get(t, base+"/metrics"); !strings.Contains(body, `patchwright_webhook_deliveries_total{event="issues",status="202"} 1`) ||
		!strings.Contains(body, `patchwright_enqueue_duration_seconds_count{result="enqueued",type="issue:solve"} 1`) ||
		!strings.Contains(body, `patchwright_queue_tasks{queue="agent",state=`) ||
		!strings.Contains(body, "patchwright_outcomes_up 1\n") {
		t.Errorf("metrics after a delivery:\n%s", body)
	}
	if code, _ := get(t, base+"/queue/"); code != http.StatusNotFound {
		t.Errorf("/queue/ without a password = %d, want 404 (no dashboard)", code)
	}

	// The next start reads the stored credentials: no setup mode.
	t.Setenv("PATCHWRIGHT_DATA_DIR", dataDir)
	for _, command := range []string{"serve", "worker"} {
		args := []string{"--redis-url", "redis://127.0.0.1:1/0", "--model", "openai:gpt-4.1"}
		cfg, err := parseConfig(command, args, io.Discard)
		if err != nil {
			t.Fatalf("%s after setup: %v", command, err)
		}
		if cfg.setupMode || cfg.appID != 1 || !bytes.Equal(cfg.privateKey, key) {
			t.Errorf("%s after setup: setup mode %v, app %d, key loaded %v", command, cfg.setupMode, cfg.appID, bytes.Equal(cfg.privateKey, key))
		}
		if command == "serve" && cfg.webhookSecret != "fresh-secret" {
			t.Errorf("serve after setup: webhook secret %q", cfg.webhookSecret)
		}
	}
}

func TestQueueDashboardNeedsThePassword(t *testing.T) {
	gh := fakeApp(t, nil, "")
	base := startServe(t, config{
		webhookSecret: "s", appID: 1, githubAPIURL: gh.URL, triggerLabel: "agent",
		privateKey: testKey(t), queuePassword: "a long operator password",
	})
	if code, _ := get(t, base+"/queue/"); code != http.StatusUnauthorized {
		t.Fatalf("/queue/ without credentials = %d, want 401", code)
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/queue/api/queues", nil)
	req.SetBasicAuth("operator", "a long operator password")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/queue/api/queues with the password = %d", resp.StatusCode)
	}
}

func TestSetupModeConfig(t *testing.T) {
	for _, k := range []string{"PATCHWRIGHT_WEBHOOK_SECRET", "PATCHWRIGHT_APP_ID", "PATCHWRIGHT_PRIVATE_KEY", "PATCHWRIGHT_PRIVATE_KEY_FILE", "PATCHWRIGHT_REDIS_URL", "PATCHWRIGHT_LISTEN"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	dir := t.TempDir()
	t.Setenv("PATCHWRIGHT_DATA_DIR", dir)
	cfg, err := parseConfig("serve", nil, io.Discard)
	if err != nil || !cfg.setupMode {
		t.Fatalf("serve with a data directory and no credentials: setup mode %v, %v", cfg.setupMode, err)
	}
	// Half an identity is a mistake, not setup mode.
	if _, err := parseConfig("serve", []string{"--app-id", "3"}, io.Discard); err == nil || !strings.Contains(err.Error(), "PATCHWRIGHT_WEBHOOK_SECRET") {
		t.Fatalf("serve with only an app ID: %v", err)
	}
	// A worker has no setup mode.
	if _, err := parseConfig("worker", []string{"--redis-url", "redis://x:1/0", "--model", "openai:gpt-4.1"}, io.Discard); err == nil || !strings.Contains(err.Error(), "PATCHWRIGHT_APP_ID") {
		t.Fatalf("worker without credentials: %v", err)
	}
	// A broken store is an error, never setup mode.
	os.MkdirAll(filepath.Join(dir, setup.Dir), 0o700)
	os.WriteFile(filepath.Join(dir, setup.Dir, setup.AppFile), []byte("{"), 0o600)
	if _, err := parseConfig("serve", nil, io.Discard); err == nil {
		t.Fatal("serve took a corrupt credentials store for setup mode")
	}
}

func TestOperateSettings(t *testing.T) {
	t.Setenv("PATCHWRIGHT_LISTEN", "")
	os.Unsetenv("PATCHWRIGHT_LISTEN")
	base := []string{"--webhook-secret", "s", "--app-id", "7", "--private-key", "k"}
	cfg, err := parseConfig("serve", append(base, "--worker-concurrency", "5", "--sandbox-image", "img:1"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.workerConcurrency != 5 || cfg.sandbox.image != "img:1" || cfg.listenSet || cfg.runRetention != 0 {
		t.Fatalf("config = %+v", cfg)
	}
	if cfg, _ := parseConfig("serve", append(base, "--listen", ":9"), io.Discard); !cfg.listenSet {
		t.Error("--listen given, listenSet false")
	}
	for name, args := range map[string][]string{
		"zero concurrency": {"--worker-concurrency", "0"},
		"word concurrency": {"--worker-concurrency", "many"},
		"short queue pass": {"--queue-password", "short"},
		"bad retention":    {"--run-retention", "30d"},
	} {
		if _, err := parseConfig("serve", append(base, args...), io.Discard); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestRunWrittenByWorkerShownByServe: a worker's run directory reaches
// Redis through the worker's runstore.Mirror, and serve, sharing nothing but Redis and
// the app's key, shows it on a signed link and on no other.
func TestRunWrittenByWorkerShownByServe(t *testing.T) {
	mr := miniredis.RunT(t)
	key := testKey(t)
	gh := fakeApp(t, nil, "")

	// The worker's side: a run directory as the pipeline writes it.
	dataDir := t.TempDir()
	run := filepath.Join(runsDir(dataDir), "20261201-120000-abc")
	os.MkdirAll(run, 0o755)
	os.WriteFile(filepath.Join(run, "ledger.jsonl"), []byte(`{"seq":1,"time":"2026-12-01T12:00:00Z","type":"command","step":1,"call_id":"c1","tool":"run","command":"go test ./...","exit_code":1,"duration_ns":1000000000,"output":"FAIL <b>x</b>","output_bytes":12}`+"\n"), 0o644)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	mirror := &runstore.Mirror{Dir: runsDir(dataDir), Store: &runstore.Store{Redis: rdb}}
	// A run past the retention, left on disk: a (restarted) mirror does
	// not bring it back.
	old := filepath.Join(runsDir(dataDir), "20251001-120000-old")
	os.MkdirAll(old, 0o755)
	os.WriteFile(filepath.Join(old, "ledger.jsonl"), []byte(`{"seq":1,"time":"2025-10-01T12:00:00Z","type":"run_stop","reason":"finished"}`+"\n"), 0o644)
	long := time.Now().Add(-runstore.DefaultRetention - time.Hour)
	os.Chtimes(filepath.Join(old, "ledger.jsonl"), long, long)
	mirror.Sync(context.Background())
	if n, err := rdb.DBSize(context.Background()).Result(); err != nil || n != 1 {
		t.Fatalf("Redis holds %d keys (%v) after one fresh and one expired run, want 1", n, err)
	}

	// serve's side, on another data directory.
	base := startServe(t, config{
		webhookSecret: "s", appID: 1, githubAPIURL: gh.URL, triggerLabel: "agent", privateKey: key,
		redisURL: "redis://" + mr.Addr() + "/0", dataDir: t.TempDir(),
	})
	signer, err := runpage.NewSigner(key, 0)
	if err != nil {
		t.Fatal(err)
	}
	code, body := get(t, signer.Link(base+"/runs", "20261201-120000-abc"))
	if code != http.StatusOK || !strings.Contains(body, "$ go test ./...") || !strings.Contains(body, "FAIL &lt;b&gt;x&lt;/b&gt;") || !strings.Contains(body, "<strong>running</strong>") {
		t.Fatalf("run page = %d\n%s", code, body)
	}
	if code, _ := get(t, base+"/runs/20261201-120000-abc"); code != http.StatusNotFound {
		t.Fatalf("unsigned link = %d, want 404", code)
	}

	// The run ends: the next sync carries the result, and the page says so.
	os.WriteFile(filepath.Join(run, "result.json"), []byte(`{"outcome":"failed","reason":"r","checks":[],"steps":1,"usage":{}}`), 0o644)
	future := time.Now().Add(time.Minute)
	os.Chtimes(filepath.Join(run, "result.json"), future, future)
	mirror.Sync(context.Background())
	if _, body := get(t, signer.Link(base+"/runs", "20261201-120000-abc")); !strings.Contains(body, "<strong>failed</strong>") {
		t.Fatalf("after the run ended:\n%s", body)
	}
}
