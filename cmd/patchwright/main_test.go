package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/webhook"
)

func TestConfigErrors(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "key.pem")
	os.WriteFile(keyFile, []byte("pem"), 0o600)
	tests := map[string]struct {
		command string
		env     map[string]string
		args    []string
		want    string
	}{
		"serve without anything": {command: "serve", want: "missing PATCHWRIGHT_WEBHOOK_SECRET (--webhook-secret), PATCHWRIGHT_APP_ID (--app-id), PATCHWRIGHT_PRIVATE_KEY or PATCHWRIGHT_PRIVATE_KEY_FILE"},
		"serve without secret":   {command: "serve", env: map[string]string{"PATCHWRIGHT_APP_ID": "1", "PATCHWRIGHT_PRIVATE_KEY": "k"}, want: "missing PATCHWRIGHT_WEBHOOK_SECRET (--webhook-secret)\n"},
		"worker without redis":   {command: "worker", env: map[string]string{"PATCHWRIGHT_APP_ID": "1", "PATCHWRIGHT_PRIVATE_KEY": "k"}, want: "missing PATCHWRIGHT_REDIS_URL"},
		"worker without model":   {command: "worker", env: map[string]string{"PATCHWRIGHT_APP_ID": "1", "PATCHWRIGHT_PRIVATE_KEY": "k", "PATCHWRIGHT_REDIS_URL": "redis://127.0.0.1:1/0"}, want: "missing PATCHWRIGHT_MODEL (--model"},
		"bad app id":             {command: "serve", args: []string{"--webhook-secret", "s", "--app-id", "x", "--private-key", "k"}, want: `PATCHWRIGHT_APP_ID: "x" is not a positive number`},
		"both keys":              {command: "serve", args: []string{"--webhook-secret", "s", "--app-id", "1", "--private-key", "k", "--private-key-file", keyFile}, want: "not both"},
		"key file missing":       {command: "serve", args: []string{"--webhook-secret", "s", "--app-id", "1", "--private-key-file", "/nonexistent/key"}, want: "PATCHWRIGHT_PRIVATE_KEY_FILE: open /nonexistent/key"},
		"bad key":                {command: "serve", args: []string{"--webhook-secret", "s", "--app-id", "1", "--private-key-file", keyFile, "--listen", "127.0.0.1:0"}, want: "private key"},
		"stray argument":         {command: "serve", args: []string{"extra"}, want: "takes no arguments"},
		"unknown flag":           {command: "worker", args: []string{"--nope"}, want: "flag provided but not defined"},
		"bad installation limit": {command: "worker", args: []string{"--installation-concurrency", "-2"}, want: `PATCHWRIGHT_INSTALLATION_CONCURRENCY: "-2" is not a number of jobs`},
		"bad repo limit":         {command: "worker", args: []string{"--repo-concurrency", "many"}, want: `PATCHWRIGHT_REPO_CONCURRENCY: "many" is not a number of jobs`},
		"bad grace":              {command: "worker", args: []string{"--shutdown-grace", "0s"}, want: `PATCHWRIGHT_SHUTDOWN_GRACE: "0s" is not a positive duration`},
		"redis CA missing":       {command: "worker", args: []string{"--redis-ca-file", "/nonexistent/ca.pem"}, want: "PATCHWRIGHT_REDIS_CA_FILE: open /nonexistent/ca.pem"},
		"bad OTLP endpoint":      {command: "worker", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "otel-collector:4318"}, want: "OTEL_EXPORTER_OTLP_ENDPOINT: not an http:// or https:// URL"},
		"bad traces endpoint":    {command: "serve", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "grpc://otel:4317"}, want: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: not an http:// or https:// URL"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			for _, k := range []string{"PATCHWRIGHT_WEBHOOK_SECRET", "PATCHWRIGHT_APP_ID", "PATCHWRIGHT_PRIVATE_KEY", "PATCHWRIGHT_PRIVATE_KEY_FILE", "PATCHWRIGHT_REDIS_URL",
				"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} {
				t.Setenv(k, tc.env[k])
				if tc.env[k] == "" {
					os.Unsetenv(k)
				}
			}
			var stderr bytes.Buffer
			code := run(context.Background(), append([]string{tc.command}, tc.args...), io.Discard, &stderr)
			if code != 1 || !strings.Contains(stderr.String(), tc.want) {
				t.Fatalf("exit %d, stderr %q; want 1 and %q", code, stderr.String(), tc.want)
			}
		})
	}
}

func TestFlagOverridesEnv(t *testing.T) {
	t.Setenv("PATCHWRIGHT_TRIGGER_LABEL", "from-env")
	t.Setenv("PATCHWRIGHT_LISTEN", "127.0.0.1:1")
	cfg, err := parseConfig("serve", []string{"--webhook-secret", "s", "--app-id", "7", "--private-key", "k", "--trigger-label", "from-flag"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.triggerLabel != "from-flag" || cfg.listen != "127.0.0.1:1" || cfg.appID != 7 || cfg.githubAPIURL != "https://api.github.com/" {
		t.Fatalf("config = %+v", cfg)
	}
}

// TestServeEmbedded starts serve with the embedded queue against a fake
// GitHub and checks the probes and one delivery.
func TestServeEmbedded(t *testing.T) {
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
	ghSrv := httptest.NewServer(gh)
	defer ghSrv.Close()
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	cfg := config{
		webhookSecret: "s", appID: 1, githubAPIURL: ghSrv.URL, triggerLabel: "agent",
		privateKey: pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cfg, slog.New(slog.NewTextHandler(t.Output(), nil)), ln) }()
	base := "http://" + ln.Addr().String()
	for _, path := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s = %d, want 200", path, resp.StatusCode)
		}
	}
	body := []byte(`{"action":"labeled","label":{"name":"agent"},"issue":{"number":3},"repository":{"name":"r","owner":{"login":"o"}},"sender":{"login":"u","type":"User"},"installation":{"id":5}}`)
	req, _ := http.NewRequest(http.MethodPost, base+"/webhook", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", "issues")
	req.Header.Set("X-GitHub-Delivery", "x-1")
	req.Header.Set("X-Hub-Signature-256", webhook.Signature([]byte("s"), body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("webhook = %d, want 202", resp.StatusCode)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
}
