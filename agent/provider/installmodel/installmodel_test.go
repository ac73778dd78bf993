package installmodel

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent/provider"
)

const secretKey = "sk-installation-secret-0123456789"

// write puts text in dir/name with mode, and returns its path.
func write(t *testing.T, dir, name, text string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil { // past the umask
		t.Fatal(err)
	}
	return p
}

func TestLoadFile(t *testing.T) {
	p := write(t, t.TempDir(), "models.yaml", `installations:
  7:
    model: openai:gpt-4.1
    fallback: [anthropic:claude-sonnet-4-5]
    summary_model: openai:gpt-4.1-mini
    openai: {api_key: `+secretKey+`}
    anthropic: {api_key: sk-ant-installation-7-key}
  8:
    model: openai:gpt-4.1-mini
    openai: {base_url: "http://llm.corp.example/v1"}
`, 0o600)
	set, err := Load(p, provider.DefaultPrices())
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(set.IDs()); got != "[7 8]" {
		t.Fatalf("IDs = %s", got)
	}
	e := set[7]
	if e.Spec() != "openai:gpt-4.1,anthropic:claude-sonnet-4-5" {
		t.Errorf("Spec = %q", e.Spec())
	}
	keys := e.Keys(7)
	if keys["installation 7's openai key"] != secretKey || keys["installation 7's anthropic key"] != "sk-ant-installation-7-key" || len(keys) != 2 {
		t.Errorf("Keys = %v", keys)
	}
	if set[8].Keys(8) != nil {
		t.Errorf("an entry without keys has Keys %v", set[8].Keys(8))
	}
	// Printing an entry, as a careless log line would, shows no key.
	for _, s := range []string{fmt.Sprint(e), fmt.Sprintf("%+v", e), fmt.Sprintf("%#v", e)} {
		if strings.Contains(s, secretKey) {
			t.Errorf("printed entry holds the key: %s", s)
		}
	}
	var log strings.Builder
	slog.New(slog.NewTextHandler(&log, nil)).Info("entry", "openai", e.OpenAI)
	if strings.Contains(log.String(), secretKey) {
		t.Errorf("logged credentials hold the key: %s", log.String())
	}
}

func TestLoadDirectory(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "7.yaml", "model: openai:gpt-4.1\nopenai: {api_key: "+secretKey+"}\n", 0o440)
	write(t, dir, "8", "model: anthropic:claude-haiku-4-5\nanthropic: {api_key: sk-ant-eight-key}\n", 0o400)
	// A Kubernetes Secret volume's own entries are skipped.
	if err := os.Mkdir(filepath.Join(dir, "..data"), 0o755); err != nil {
		t.Fatal(err)
	}
	set, err := Load(dir, provider.DefaultPrices())
	if err != nil {
		t.Fatal(err)
	}
	if set[7].Model != "openai:gpt-4.1" || set[8].Anthropic.APIKey != "sk-ant-eight-key" || len(set) != 2 {
		t.Errorf("set = %v", set)
	}
}

// TestLoadRefuses: every bad file is refused with a message that names
// the file and what is wrong, and never holds a key.
func TestLoadRefuses(t *testing.T) {
	t.Setenv(provider.EnvOpenAIKey, "sk-operators-own-key-000") // never borrowed
	cases := map[string]struct {
		name, text string
		mode       os.FileMode
		want       string
	}{
		"world-readable": {"m.yaml", "installations:\n  7: {model: openai:gpt-4.1, openai: {api_key: " + secretKey + "}}\n", 0o644, "readable by every user (mode 0644)"},
		"unknown key":    {"m.yaml", "installations:\n  7:\n    model: openai:gpt-4.1\n    api_key: " + secretKey + "\n", 0o600, "line 4: unknown key api_key"},
		"not a mapping":  {"m.yaml", "installations:\n  7: [" + secretKey + "]\n", 0o600, "line 2: not the expected shape"},
		"bad ID":         {"m.yaml", "installations:\n  seven: {model: openai:gpt-4.1}\n", 0o600, "line 2: not the expected shape"},
		"negative ID":    {"m.yaml", "installations:\n  -3: {model: openai:gpt-4.1}\n", 0o600, "installation -3: not an installation ID"},
		"no model":       {"m.yaml", "installations:\n  7: {openai: {api_key: " + secretKey + "}}\n", 0o600, "installation 7: model: required"},
		"unknown model":  {"m.yaml", "installations:\n  7: {model: openai:gpt-unpriced, openai: {api_key: " + secretKey + "}}\n", 0o600, `model "openai:gpt-unpriced" has no price in the price table`},
		"unpriced summary": {"m.yaml", "installations:\n  7: {model: openai:gpt-4.1, summary_model: openai:tiny, openai: {api_key: " + secretKey + "}}\n", 0o600,
			`model "openai:tiny" has no price`},
		"replay":        {"m.yaml", "installations:\n  7: {model: replay:/tmp/ledger.jsonl}\n", 0o600, `want openai:NAME or anthropic:NAME`},
		"list in model": {"m.yaml", "installations:\n  7: {model: 'openai:gpt-4.1,openai:gpt-4o', openai: {api_key: " + secretKey + "}}\n", 0o600, "list the others under fallback"},
		"no key":        {"m.yaml", "installations:\n  7: {model: openai:gpt-4.1}\n", 0o600, "openai.api_key is not set"},
		"other provider's key": {"m.yaml", "installations:\n  7: {model: anthropic:claude-sonnet-4-5, openai: {api_key: " + secretKey + "}}\n", 0o600,
			"anthropic.api_key is not set"},
		"short key":           {"m.yaml", "installations:\n  7: {model: openai:gpt-4.1, openai: {api_key: sk-1}}\n", 0o600, "an api_key is shorter than 8 characters"},
		"bad base URL":        {"m.yaml", "installations:\n  7: {model: openai:gpt-4.1, openai: {api_key: " + secretKey + ", base_url: llm.local}}\n", 0o600, `openai.base_url "llm.local" is not an absolute URL`},
		"dir: bad name":       {"dir/models.yaml", "model: openai:gpt-4.1\nopenai: {api_key: " + secretKey + "}\n", 0o600, "name the file by its installation ID"},
		"dir: world-readable": {"dir/7", "model: openai:gpt-4.1\nopenai: {api_key: " + secretKey + "}\n", 0o604, "readable by every user"},
		"dir: wrapped":        {"dir/7.yaml", "installations:\n  7: {model: openai:gpt-4.1}\n", 0o600, "line 1: unknown key installations"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, c.name)
			if strings.HasPrefix(c.name, "dir/") {
				if err := os.Mkdir(filepath.Join(dir, "dir"), 0o700); err != nil {
					t.Fatal(err)
				}
				path = filepath.Join(dir, "dir")
			}
			write(t, dir, c.name, c.text, c.mode)
			_, err := Load(path, provider.DefaultPrices())
			if err == nil {
				t.Fatalf("loaded; want %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), dir) {
				t.Errorf("error %q; want it to name the file and say %q", err, c.want)
			}
			if strings.Contains(err.Error(), secretKey) || strings.Contains(err.Error(), "sk-operators-own-key") {
				t.Errorf("error holds a key: %q", err)
			}
		})
	}
}

// TestOptionsReadOnlyTheEntry: an installation's providers see its own
// keys and base URLs only, never the operator's environment.
func TestOptionsReadOnlyTheEntry(t *testing.T) {
	t.Setenv(provider.EnvAnthropicKey, "sk-ant-operators-own-key")
	t.Setenv(provider.EnvOpenAIBaseURL, "http://operator.example/v1")
	e := Entry{Model: "openai:gpt-4.1", OpenAI: Credentials{APIKey: secretKey}}
	o := e.Options(nil)
	if o.Getenv(provider.EnvOpenAIKey) != secretKey || o.Getenv(provider.EnvAnthropicKey) != "" || o.Getenv(provider.EnvOpenAIBaseURL) != "" {
		t.Errorf("Options read the environment")
	}
}
