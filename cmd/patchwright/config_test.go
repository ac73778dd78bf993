package main

import (
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/patchwright/patchwright/agent/provider"
	"github.com/patchwright/patchwright/sandbox"
)

func TestSandboxLimits(t *testing.T) {
	lim, err := sandboxLimits("4g", "1.5", "256")
	if err != nil || lim.MemoryBytes != 4<<30 || lim.CPUs != 1.5 || lim.PIDs != 256 {
		t.Fatalf("sandboxLimits = %+v, %v", lim, err)
	}
	if lim, err := sandboxLimits("", "", ""); err != nil || lim != (sandbox.Limits{}) {
		t.Fatalf("empty settings = %+v, %v; want the defaults", lim, err)
	}
	for name, in := range map[string][3]string{"memory": {"lots", "", ""}, "tiny memory": {"1k", "", ""},
		"cpus": {"", "-1", ""}, "pids": {"", "", "3"}} {
		if _, err := sandboxLimits(in[0], in[1], in[2]); err == nil {
			t.Errorf("%s %q: no error", name, in)
		}
	}
}

func TestWorkerBounds(t *testing.T) {
	var cfg config
	if err := parseWorkerBounds("0", "3", "5m", &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.installationConcurrency != -1 || cfg.repoConcurrency != 3 || cfg.shutdownGrace != 5*time.Minute {
		t.Fatalf("0, 3, 5m = %+v; want none, 3, 5m", cfg)
	}
	cfg = config{}
	if err := parseWorkerBounds("", "", "", &cfg); err != nil || cfg.installationConcurrency != 0 || cfg.repoConcurrency != 0 || cfg.shutdownGrace != 0 {
		t.Fatalf("unset = %+v, %v; want the defaults (0)", cfg, err)
	}
}

// PATCHWRIGHT_SUMMARY_MODEL is off by default, read like the model (env,
// then flag), and built with the model's keys and base URLs; a replay is
// refused.
func TestSummaryModelSetting(t *testing.T) {
	base := []string{"--webhook-secret", "s", "--app-id", "7", "--private-key", "k"}
	os.Unsetenv("PATCHWRIGHT_SUMMARY_MODEL")
	if cfg, err := parseConfig("serve", base, io.Discard); err != nil || cfg.summaryModel != "" {
		t.Fatalf("default summary model %q, %v; want none", cfg.summaryModel, err)
	}
	t.Setenv("PATCHWRIGHT_SUMMARY_MODEL", "openai:gpt-4.1-nano")
	cfg, err := parseConfig("serve", append(base, "--summary-model", " anthropic:claude-haiku-4-5 "), io.Discard)
	if err != nil || cfg.summaryModel != "anthropic:claude-haiku-4-5" {
		t.Fatalf("summary model %q, %v; want the flag's", cfg.summaryModel, err)
	}
	if p, err := summaryProvider("", nil); p != nil || err != nil {
		t.Errorf("unset: %v, %v", p, err)
	}
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	p, err := summaryProvider(cfg.summaryModel, slog.New(slog.DiscardHandler))
	if err != nil || p.Model() != "anthropic:claude-haiku-4-5" {
		t.Errorf("built %v, %v", p, err)
	}
	t.Setenv("ANTHROPIC_BASE_URL", "")
	for spec, want := range map[string]string{
		"anthropic:claude-haiku-4-5": "ANTHROPIC_API_KEY is not set",
		"replay:ledger.jsonl":        "a replay cannot summarise",
		"gpt-4.1-mini":               "want PROVIDER:MODEL",
	} {
		if _, err := summaryProvider(spec, nil); err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "PATCHWRIGHT_SUMMARY_MODEL: ") {
			t.Errorf("%s: %v, want %q", spec, err, want)
		}
	}
}

// PATCHWRIGHT_REVIEW_MODEL defaults to the model, is built like it, and
// a replay is refused; PATCHWRIGHT_REVIEW_MAX_COST_USD must be dollars.
func TestReviewSettings(t *testing.T) {
	base := []string{"--webhook-secret", "s", "--app-id", "7", "--private-key", "k"}
	os.Unsetenv("PATCHWRIGHT_REVIEW_MODEL")
	os.Unsetenv("PATCHWRIGHT_REVIEW_MAX_COST_USD")
	cfg, err := parseConfig("serve", append(base, "--review-model", "openai:gpt-4.1-mini", "--review-max-cost-usd", "0.2"), io.Discard)
	if err != nil || cfg.reviewModel != "openai:gpt-4.1-mini" || cfg.reviewMaxCostUSD != 0.2 {
		t.Fatalf("review settings %q %v, %v", cfg.reviewModel, cfg.reviewMaxCostUSD, err)
	}
	for _, bad := range []string{"-1", "free", "0", "Inf"} {
		if _, err := parseConfig("serve", append(base, "--review-max-cost-usd", bad), io.Discard); err == nil || !strings.Contains(err.Error(), "PATCHWRIGHT_REVIEW_MAX_COST_USD") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	t.Setenv("OPENAI_API_KEY", "k")
	model, err := provider.New("openai:gpt-4.1", provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := reviewProvider("", model, nil); p != model || err != nil {
		t.Errorf("unset: %v, %v; want the model", p, err)
	}
	if _, err := reviewProvider("replay:ledger.jsonl", model, nil); err == nil || !strings.Contains(err.Error(), "a replay cannot review") {
		t.Errorf("replay: %v", err)
	}
}
