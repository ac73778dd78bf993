package provider

import (
	"strings"
	"testing"
)

func TestWindowsTable(t *testing.T) {
	// Every priced model has a window: the two tables stand together.
	for model := range DefaultPrices() {
		w, ok := DefaultWindows().For(model)
		if !ok || w.Check() != nil || w.Context == 0 || w.Output == 0 {
			t.Errorf("%s: window %+v, %v", model, w, ok)
		}
	}
	if w, ok := DefaultWindows().For("anthropic:claude-sonnet-4-5-20250929"); !ok || w.Context != 200_000 {
		t.Errorf("dated snapshot: %+v %v", w, ok)
	}
	if _, ok := DefaultWindows().For("openai:qwen2.5-coder:7b"); ok {
		t.Errorf("an unknown model has a window")
	}
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestWindowFromEnv(t *testing.T) {
	file := writeFile(t, `{
		"openai:qwen2.5-coder:7b": {"context_window": 16384, "max_output_tokens": 2048},
		"openai:gpt-4o": {"input": 2.5, "output": 10, "context_window": 64000},
		"openai:priced-only": {"input": 1, "output": 1}
	}`)
	tests := map[string]struct {
		model string
		env   map[string]string
		want  Window
	}{
		"built-in":                   {"openai:gpt-4o", nil, Window{128_000, 16_384}},
		"unknown":                    {"openai:qwen2.5-coder:7b", nil, Window{}},
		"from the prices file":       {"openai:qwen2.5-coder:7b", map[string]string{EnvPrices: file}, Window{16_384, 2048}},
		"file over the table":        {"openai:gpt-4o", map[string]string{EnvPrices: file}, Window{64_000, 16_384}},
		"env over everything":        {"openai:qwen2.5-coder:7b", map[string]string{EnvPrices: file, EnvContextWindow: "8192"}, Window{8192, 2048}},
		"env drops a larger limit":   {"openai:gpt-4o", map[string]string{EnvContextWindow: "16384"}, Window{16_384, 0}},
		"a fallback list's smallest": {"openai:gpt-4.1, anthropic:claude-sonnet-4-5", nil, Window{200_000, 32_768}},
		"a list with an unknown":     {"openai:qwen2.5-coder:7b,openai:gpt-4o", nil, Window{128_000, 16_384}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := WindowFromEnv(tc.model, env(tc.env))
			if err != nil || got != tc.want {
				t.Errorf("WindowFromEnv = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
	// A window-only entry sets no price, and prices still load beside it.
	prices, err := LoadPrices(file)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := prices["openai:qwen2.5-coder:7b"]; ok {
		t.Errorf("a window-only entry made a price")
	}
	if prices["openai:gpt-4o"].Input != 2.5 {
		t.Errorf("price beside a window lost: %+v", prices["openai:gpt-4o"])
	}
}

func TestWindowBadInput(t *testing.T) {
	tests := map[string]struct {
		file, env string
		wantErr   string
	}{
		"env not a number":     {"", "16k", EnvContextWindow},
		"env too small":        {"", "100", "at least 1024"},
		"env negative":         {"", "-5", EnvContextWindow},
		"file window small":    {`{"openai:x": {"context_window": 10}}`, "", "under 1024"},
		"file output too big":  {`{"openai:x": {"context_window": 4096, "max_output_tokens": 4096}}`, "", "not smaller"},
		"file output negative": {`{"openai:x": {"max_output_tokens": -1}}`, "", "negative"},
		"file wrong type":      {`{"openai:x": {"context_window": "big"}}`, "", "cannot unmarshal"},
		"file not JSON":        {`{`, "", EnvPrices},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m := map[string]string{EnvContextWindow: tc.env}
			if tc.file != "" {
				m[EnvPrices] = writeFile(t, tc.file)
			}
			_, err := WindowFromEnv("openai:x", env(m))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
}
