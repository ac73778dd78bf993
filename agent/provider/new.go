package provider

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
)

// Names of the providers New accepts before the colon of a spec.
const (
	NameOpenAI    = "openai"
	NameAnthropic = "anthropic"
)

// Environment variables read by New when Options leave a field empty.
// They are the SDKs' own names (docs/design.md §4.2).
const (
	EnvOpenAIKey        = "OPENAI_API_KEY"
	EnvOpenAIBaseURL    = "OPENAI_BASE_URL"
	EnvAnthropicKey     = "ANTHROPIC_API_KEY"
	EnvAnthropicBaseURL = "ANTHROPIC_BASE_URL"
)

// Options configure New. The zero value reads keys and base URLs from the
// environment and uses the default retry policy.
type Options struct {
	// APIKey overrides OPENAI_API_KEY or ANTHROPIC_API_KEY.
	APIKey string
	// BaseURL overrides OPENAI_BASE_URL or ANTHROPIC_BASE_URL. An OpenAI
	// base URL ends in /v1 (e.g. http://localhost:11434/v1 for Ollama);
	// an Anthropic one does not (the client adds /v1/messages).
	BaseURL string
	// HTTPClient sends the requests; nil means the SDK's default client.
	HTTPClient *http.Client
	// Retry is the policy for transient failures; see Retry for defaults.
	Retry Retry
	// Logger receives a warning per retry; nil means slog.Default().
	Logger *slog.Logger
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
}

func (o Options) getenv(k string) string {
	if o.Getenv != nil {
		return o.Getenv(k)
	}
	return os.Getenv(k)
}

func (o Options) logger() *slog.Logger {
	if o.Logger != nil {
		return o.Logger
	}
	return slog.Default()
}

// New builds the provider a spec names: "openai:gpt-4.1",
// "anthropic:claude-sonnet-4-5". Only the first colon separates, so
// "openai:qwen2.5-coder:7b" asks an OpenAI-compatible server for
// "qwen2.5-coder:7b". "replay:FILE" calls no model: it replays the model
// turns recorded in the ledger FILE (see Replay). A comma-separated list
// ("openai:gpt-4.1,anthropic:claude-sonnet-4-5") is a Fallback in that
// order.
//
// A key is required for the vendors' own endpoints. With a base URL that
// points elsewhere (a local vLLM, Ollama or LiteLLM server) the key may be
// empty and no credential is sent.
func New(spec string, opts Options) (Provider, error) {
	if strings.Contains(spec, ",") {
		return newList(spec, opts)
	}
	name, model, ok := strings.Cut(strings.TrimSpace(spec), ":")
	name = strings.ToLower(name)
	if !ok || model == "" {
		return nil, fmt.Errorf("model %q: want PROVIDER:MODEL, e.g. openai:gpt-4.1 or anthropic:claude-sonnet-4-5", spec)
	}
	switch name {
	case NameReplay:
		return NewReplay(model)
	case NameOpenAI:
		key, base, err := credentials(opts, EnvOpenAIKey, EnvOpenAIBaseURL, "api.openai.com")
		if err != nil {
			return nil, fmt.Errorf("model %q: %w", spec, err)
		}
		return newOpenAI(model, key, base, opts), nil
	case NameAnthropic:
		key, base, err := credentials(opts, EnvAnthropicKey, EnvAnthropicBaseURL, "api.anthropic.com")
		if err != nil {
			return nil, fmt.Errorf("model %q: %w", spec, err)
		}
		return newAnthropic(model, key, base, opts), nil
	}
	return nil, fmt.Errorf("model %q: unknown provider %q (known: %s, %s)", spec, name, NameOpenAI, NameAnthropic)
}

// credentials resolves key and base URL, options first, then environment.
func credentials(opts Options, keyVar, baseVar, vendorHost string) (key, base string, err error) {
	key = firstNonEmpty(opts.APIKey, opts.getenv(keyVar))
	base = firstNonEmpty(opts.BaseURL, opts.getenv(baseVar))
	if base != "" {
		u, perr := url.Parse(base)
		if perr != nil || u.Scheme == "" || u.Host == "" {
			return "", "", fmt.Errorf("%s %q is not an absolute URL", baseVar, base)
		}
		if key == "" && !strings.EqualFold(u.Hostname(), vendorHost) {
			return "", base, nil // a self-hosted compatible server may need no key
		}
	}
	if key == "" {
		return "", "", errors.New(keyVar + " is not set")
	}
	return key, base, nil
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}
