package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent/provider"
	pt "github.com/patchwright/patchwright/agent/provider/providertest"
)

const (
	operatorKey = "sk-operator-global-key-0001"
	key7        = "sk-installation-seven-key-07"
	key8        = "sk-ant-installation-eight-08"
)

// workerEnv is a worker's environment whose own model is global's.
func workerEnv(t *testing.T, global *pt.Server) {
	t.Helper()
	t.Setenv("PATCHWRIGHT_APP_ID", "1")
	t.Setenv("PATCHWRIGHT_PRIVATE_KEY", "k")
	t.Setenv("PATCHWRIGHT_REDIS_URL", "redis://127.0.0.1:1/0")
	t.Setenv("PATCHWRIGHT_MODEL", "openai:gpt-4.1")
	t.Setenv("OPENAI_API_KEY", operatorKey)
	t.Setenv("OPENAI_BASE_URL", global.URL+"/v1")
	t.Setenv("ANTHROPIC_API_KEY", operatorKey)
	os.Unsetenv("PATCHWRIGHT_INSTALLATION_MODELS")
}

// TestInstallationModelsReachTheirOwnProviders: with two installations
// in the file, each one's executor sends its requests, through the real
// SDKs, to its own provider with its own key; everyone else's go to the
// operator's with the operator's key; no key reaches the log.
func TestInstallationModelsReachTheirOwnProviders(t *testing.T) {
	global := pt.New(t, pt.Text("global"))
	seven := pt.New(t, pt.Text("seven"), pt.Text("seven's review"))
	eight := pt.New(t, pt.Text("eight"))
	workerEnv(t, global)
	file := filepath.Join(t.TempDir(), "models.yaml")
	text := fmt.Sprintf(`installations:
  7:
    model: openai:gpt-4.1
    openai: {api_key: %s, base_url: "%s/v1"}
  8:
    model: anthropic:claude-sonnet-4-5
    review_model: anthropic:claude-haiku-4-5
    anthropic: {api_key: %s, base_url: "%s"}
`, key7, seven.URL, key8, eight.URL)
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := parseConfig("worker", []string{"--installation-models", file}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var logged strings.Builder
	m, _ := newMetrics()
	d := workerDeps{cfg: cfg, log: slog.New(slog.NewTextHandler(&logged, nil)), m: m}
	prov, err := provider.New(cfg.model, provider.Options{Logger: d.log})
	if err != nil {
		t.Fatal(err)
	}
	base := workerExecutor(d, nopEngine{}, meteredProvider{prov, m, cfg.sandbox.prices})
	execs, err := installationExecutors(d, base)
	if err != nil {
		t.Fatal(err)
	}
	if len(execs) != 2 || base.ModelSource != "" || base.ModelKeys != nil {
		t.Fatalf("executors %v; the operator's has source %q keys %v", execs, base.ModelSource, base.ModelKeys)
	}
	asked := 0
	ask := func(p provider.Provider) string {
		t.Helper()
		// Each question differs: the fake takes a repeated one for a retry.
		asked++
		resp, err := p.Complete(context.Background(), provider.Request{Messages: []provider.Message{{Role: provider.RoleUser, Text: fmt.Sprint("question ", asked)}}})
		if err != nil {
			t.Fatal(err)
		}
		return resp.Message.Text
	}
	if got := ask(base.Provider); got != "global" {
		t.Errorf("the operator's executor answered %q", got)
	}
	if got := ask(execs[7].Provider); got != "seven" {
		t.Errorf("installation 7 answered %q", got)
	}
	// 7 names no review model: its review is its own model, not the operator's.
	if got := ask(execs[7].ReviewProvider); got != "seven's review" {
		t.Errorf("installation 7's review answered %q", got)
	}
	if got := ask(execs[8].Provider); got != "eight" {
		t.Errorf("installation 8 answered %q", got)
	}
	if execs[8].ReviewProvider.Model() != "anthropic:claude-haiku-4-5" || execs[8].SummaryProvider != nil {
		t.Errorf("installation 8: review %s, summary %v", execs[8].ReviewProvider.Model(), execs[8].SummaryProvider)
	}
	for _, c := range []struct {
		srv          *pt.Server
		header, want string
	}{
		{global, "Authorization", "Bearer " + operatorKey},
		{seven, "Authorization", "Bearer " + key7},
		{eight, "X-Api-Key", key8},
	} {
		for _, r := range c.srv.Requests() {
			if got := r.Header.Get(c.header); got != c.want {
				t.Errorf("%s request: %s = %q, want %q", r.Model, c.header, got, c.want)
			}
		}
	}
	if execs[7].ModelSource != "installation 7" || execs[7].ModelKeys["installation 7's openai key"] != key7 {
		t.Errorf("installation 7: source %q, keys withheld %d", execs[7].ModelSource, len(execs[7].ModelKeys))
	}
	for _, k := range []string{operatorKey, key7, key8} {
		if strings.Contains(logged.String(), k) {
			t.Errorf("the log holds a key:\n%s", logged.String())
		}
	}
}

// TestInstallationModelsRefusedAtStart: a bad file stops serve and
// worker at start with PATCHWRIGHT_INSTALLATION_MODELS and what is
// wrong, never with a key in the message.
func TestInstallationModelsRefusedAtStart(t *testing.T) {
	global := pt.New(t)
	workerEnv(t, global)
	t.Setenv("PATCHWRIGHT_WEBHOOK_SECRET", "s")
	dir := t.TempDir()
	cases := map[string]struct {
		text  string
		mode  os.FileMode
		unset string
		want  string
	}{
		"world-readable": {"installations: {7: {model: openai:gpt-4.1, openai: {api_key: " + key7 + "}}}", 0o644, "", "readable by every user"},
		"unknown model":  {"installations: {7: {model: openai:gpt-9-unpriced, openai: {api_key: " + key7 + "}}}", 0o600, "", `model "openai:gpt-9-unpriced" has no price in the price table`},
		"bad entry":      {"installations: {7: {model: openai:gpt-4.1, key: " + key7 + "}}", 0o600, "", "unknown key key"},
		"no global model": {"installations: {7: {model: openai:gpt-4.1, openai: {api_key: " + key7 + "}}}", 0o600, "PATCHWRIGHT_MODEL",
			"PATCHWRIGHT_INSTALLATION_MODELS needs PATCHWRIGHT_MODEL too"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if c.unset != "" {
				t.Setenv(c.unset, "")
				os.Unsetenv(c.unset)
			}
			file := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".yaml")
			if err := os.WriteFile(file, []byte(c.text), c.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(file, c.mode); err != nil {
				t.Fatal(err)
			}
			for _, command := range []string{"serve", "worker"} {
				if command == "worker" && c.unset == "PATCHWRIGHT_MODEL" {
					continue // worker already requires the model
				}
				_, err := parseConfig(command, []string{"--installation-models", file}, io.Discard)
				if err == nil || !strings.HasPrefix(err.Error(), "PATCHWRIGHT_INSTALLATION_MODELS") || !strings.Contains(err.Error(), c.want) {
					t.Errorf("%s: %v; want PATCHWRIGHT_INSTALLATION_MODELS: …%s", command, err, c.want)
				}
				if err != nil && strings.Contains(err.Error(), key7) {
					t.Errorf("%s: the message holds the key: %v", command, err)
				}
			}
		})
	}
}
