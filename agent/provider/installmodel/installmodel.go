// Package installmodel reads the operator's per-installation models and
// keys (bring your own key, docs/models.md): the file or directory
// PATCHWRIGHT_INSTALLATION_MODELS names, beside the app's own secrets and
// never in a repository. An installation with an entry runs on its own
// model list with its own provider keys and base URLs; one without runs
// on the operator's PATCHWRIGHT_MODEL.
package installmodel

import (
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"

	"github.com/patchwright/patchwright/agent/provider"
	"github.com/patchwright/patchwright/agent/secrets"
)

// Credentials are one provider's key and base URL for an installation.
// They replace the operator's OPENAI_* or ANTHROPIC_* variables for its
// jobs; they never fall back to them, so an installation is never billed
// to the operator's key. Printing them never shows the key.
type Credentials struct {
	// APIKey is sent only to the provider; "" is allowed with a BaseURL
	// that is not the vendor's own (a self-hosted server).
	APIKey string `yaml:"api_key"`
	// BaseURL is the provider's endpoint, as OPENAI_BASE_URL or
	// ANTHROPIC_BASE_URL; "" is the vendor's.
	BaseURL string `yaml:"base_url"`
}

// String shows the base URL and whether a key is set, never the key.
func (c Credentials) String() string {
	key := "none"
	if c.APIKey != "" {
		key = "withheld"
	}
	return fmt.Sprintf("{api_key: %s, base_url: %q}", key, c.BaseURL)
}

// GoString is String, so %#v does not print the key either.
func (c Credentials) GoString() string { return c.String() }

// LogValue keeps the key out of structured logs.
func (c Credentials) LogValue() slog.Value { return slog.StringValue(c.String()) }

// Entry is one installation's models and keys.
type Entry struct {
	// Model is the model as PROVIDER:NAME, like PATCHWRIGHT_MODEL;
	// required.
	Model string `yaml:"model"`
	// Fallback are models tried in order after Model fails with an
	// outage (provider.Fallback); nil is none.
	Fallback []string `yaml:"fallback"`
	// SummaryModel summarises what compaction removes, like
	// PATCHWRIGHT_SUMMARY_MODEL; "" is none.
	SummaryModel string `yaml:"summary_model"`
	// ReviewModel reviews before publishing, like PATCHWRIGHT_REVIEW_MODEL;
	// "" is Model itself.
	ReviewModel string `yaml:"review_model"`
	// OpenAI and Anthropic are the keys and base URLs of each provider
	// the models above name; a provider left out has none.
	OpenAI    Credentials `yaml:"openai"`
	Anthropic Credentials `yaml:"anthropic"`
}

// Spec is the entry's model list as provider.New reads it: Model, then
// each Fallback, comma-separated.
func (e Entry) Spec() string {
	return strings.Join(append([]string{e.Model}, e.Fallback...), ",")
}

// Options are provider.Options whose keys and base URLs are the entry's
// and nothing else: the operator's environment is not read.
func (e Entry) Options(log *slog.Logger) provider.Options {
	vars := map[string]string{
		provider.EnvOpenAIKey: e.OpenAI.APIKey, provider.EnvOpenAIBaseURL: e.OpenAI.BaseURL,
		provider.EnvAnthropicKey: e.Anthropic.APIKey, provider.EnvAnthropicBaseURL: e.Anthropic.BaseURL,
	}
	return provider.Options{Logger: log, Getenv: func(k string) string { return vars[k] }}
}

// Keys are the entry's API keys by a name that says whose they are
// ("installation 7's openai key"), for the secret scanner
// (secrets.Scanner.WithKeys): every output of its runs is searched for
// them. Nil when it has none.
func (e Entry) Keys(installation int64) map[string]string {
	var out map[string]string
	for _, c := range []struct{ name, key string }{{provider.NameOpenAI, e.OpenAI.APIKey}, {provider.NameAnthropic, e.Anthropic.APIKey}} {
		if c.key == "" {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[fmt.Sprintf("installation %d's %s key", installation, c.name)] = c.key
	}
	return out
}

// Models are every model the entry names, one spec each: its model,
// fallbacks, summary and review models.
func (e Entry) Models() []string {
	out := append([]string{e.Model}, e.Fallback...)
	for _, m := range []string{e.SummaryModel, e.ReviewModel} {
		if m != "" {
			out = append(out, m)
		}
	}
	return out
}

// check says what is wrong with the entry, or nil: each model a
// PROVIDER:NAME of a real provider with a price in prices, each key long
// enough to be searched for, and each provider it names with a key or a
// base URL of its own. The error never holds a key.
func (e Entry) check(prices provider.Prices) error {
	if strings.TrimSpace(e.Model) == "" {
		return fmt.Errorf("model: required, as PROVIDER:NAME, e.g. %s:gpt-4.1", provider.NameOpenAI)
	}
	for _, c := range []Credentials{e.OpenAI, e.Anthropic} {
		if c.APIKey != "" && len(c.APIKey) < secrets.MinSetupSecret {
			return fmt.Errorf("an api_key is shorter than %d characters", secrets.MinSetupSecret)
		}
	}
	for _, m := range e.Models() {
		if strings.Contains(m, ",") {
			return fmt.Errorf("model %q: one model per field; list the others under fallback", m)
		}
		name, _, _ := strings.Cut(strings.TrimSpace(m), ":")
		if n := strings.ToLower(name); n != provider.NameOpenAI && n != provider.NameAnthropic {
			return fmt.Errorf("model %q: want %s:NAME or %s:NAME", m, provider.NameOpenAI, provider.NameAnthropic)
		}
		if _, err := provider.New(m, e.Options(slog.New(slog.DiscardHandler))); err != nil {
			return withoutVars(err)
		}
		if _, known := prices.Cost(m, provider.Usage{}); !known {
			return fmt.Errorf("model %q has no price in the price table, so its cost and caps cannot be kept: add it to %s", m, provider.EnvPrices)
		}
	}
	return nil
}

// withoutVars words provider.New's errors for the file: a key or base
// URL missing is the entry's, not an environment variable's.
func withoutVars(err error) error {
	msg := err.Error()
	for _, r := range []struct{ env, key string }{
		{provider.EnvOpenAIKey, "openai.api_key"}, {provider.EnvOpenAIBaseURL, "openai.base_url"},
		{provider.EnvAnthropicKey, "anthropic.api_key"}, {provider.EnvAnthropicBaseURL, "anthropic.base_url"},
	} {
		msg = strings.ReplaceAll(msg, r.env, r.key)
	}
	return fmt.Errorf("%s", msg)
}

// Set is every installation's entry by installation ID. The zero Set has
// none: every job runs on the operator's model.
type Set map[int64]Entry

// IDs are the installations with an entry, in order.
func (s Set) IDs() []int64 {
	out := make([]int64, 0, len(s))
	for id := range s {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// Source is how the body names whose model a run used.
func Source(installation int64) string {
	return "installation " + strconv.FormatInt(installation, 10)
}
