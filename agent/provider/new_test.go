package provider_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent/provider"
	"github.com/patchwright/patchwright/jobs/githubtest"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestNew(t *testing.T) {
	tests := map[string]struct {
		spec      string
		opts      provider.Options
		wantModel string
		wantErr   string // substring; "" means success
	}{
		"openai from env":                     {spec: "openai:gpt-4.1", opts: provider.Options{Getenv: env("OPENAI_API_KEY", "sk-1")}, wantModel: "openai:gpt-4.1"},
		"anthropic from env":                  {spec: "anthropic:claude-sonnet-4-5", opts: provider.Options{Getenv: env("ANTHROPIC_API_KEY", "sk-ant")}, wantModel: "anthropic:claude-sonnet-4-5"},
		"explicit key":                        {spec: "anthropic:claude-haiku-4-5", opts: provider.Options{APIKey: "k", Getenv: env()}, wantModel: "anthropic:claude-haiku-4-5"},
		"provider name is not case sensitive": {spec: "OpenAI:gpt-4.1", opts: provider.Options{APIKey: "k", Getenv: env()}, wantModel: "openai:gpt-4.1"},
		"model name with a colon":             {spec: "openai:qwen2.5-coder:7b", opts: provider.Options{Getenv: env("OPENAI_BASE_URL", "http://localhost:11434/v1")}, wantModel: "openai:qwen2.5-coder:7b"},
		"empty":                               {spec: "", wantErr: "want PROVIDER:MODEL"},
		"no provider":                         {spec: "gpt-4.1", wantErr: "want PROVIDER:MODEL"},
		"empty model":                         {spec: "openai:", wantErr: "want PROVIDER:MODEL"},
		"unknown provider":                    {spec: "mistral:large", opts: provider.Options{APIKey: "k"}, wantErr: `unknown provider "mistral" (known: openai, anthropic)`},
		"missing openai key":                  {spec: "openai:gpt-4.1", opts: provider.Options{Getenv: env()}, wantErr: "OPENAI_API_KEY is not set"},
		"missing anthropic key":               {spec: "anthropic:claude-sonnet-4-5", opts: provider.Options{Getenv: env("OPENAI_API_KEY", "sk-1")}, wantErr: "ANTHROPIC_API_KEY is not set"},
		"vendor base URL still needs a key":   {spec: "openai:gpt-4.1", opts: provider.Options{Getenv: env("OPENAI_BASE_URL", "https://api.openai.com/v1")}, wantErr: "OPENAI_API_KEY is not set"},
		"relative base URL":                   {spec: "openai:gpt-4.1", opts: provider.Options{APIKey: "k", BaseURL: "localhost:8000"}, wantErr: "is not an absolute URL"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p, err := provider.New(tc.spec, tc.opts)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Model() != tc.wantModel {
				t.Errorf("Model() = %q, want %q", p.Model(), tc.wantModel)
			}
		})
	}
}

// A local OpenAI-compatible server needs no key: none is sent, and the
// model name keeps its colon.
func TestNewLocalServerWithoutKey(t *testing.T) {
	srv := newWireServer(t, sseReply(fixture(t, "openai.chat.completion.stream.finish_length.sse")))
	p, err := provider.New("openai:qwen2.5-coder:7b", provider.Options{
		Getenv: env("OPENAI_BASE_URL", srv.URL+"/v1"),
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Complete(context.Background(), userTurn("hi")); err != nil {
		t.Fatal(err)
	}
	if auth := srv.header(0).Get("Authorization"); auth != "" {
		t.Errorf("Authorization = %q, want none", auth)
	}
	if m := srv.body(0)["model"]; m != "qwen2.5-coder:7b" {
		t.Errorf("model sent = %v", m)
	}
}

func TestNewAnthropicCompatibleServerWithoutKey(t *testing.T) {
	srv := newWireServer(t, sseReply(sseFixture(t, "anthropic.messages.stream.tool_use.sse")))
	p, err := provider.New("anthropic:local-model", provider.Options{
		Getenv: env("ANTHROPIC_BASE_URL", srv.URL),
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Complete(context.Background(), userTurn("hi")); err != nil {
		t.Fatal(err)
	}
	if h := srv.header(0); h.Get("X-Api-Key") != "" || h.Get("Authorization") != "" {
		t.Errorf("credentials sent without a key: %v", h)
	}
}

func TestKeysAreSent(t *testing.T) {
	for _, spec := range []string{"openai:gpt-4.1", "anthropic:claude-sonnet-4-5"} {
		t.Run(spec, func(t *testing.T) {
			var r reply
			if strings.HasPrefix(spec, "openai") {
				r = sseReply(fixture(t, "openai.chat.completion.stream.finish_length.sse"))
			} else {
				r = sseReply(sseFixture(t, "anthropic.messages.stream.tool_use.sse"))
			}
			srv := newWireServer(t, r)
			if _, err := newProvider(t, spec, srv, &githubtest.Sleeps{}).Complete(context.Background(), userTurn("hi")); err != nil {
				t.Fatal(err)
			}
			h := srv.header(0)
			if h.Get("Authorization") != "Bearer sk-test" && h.Get("X-Api-Key") != "sk-test" {
				t.Errorf("no key sent: %v", h)
			}
		})
	}
}

// Bad requests fail before anything is sent, with a reason.
func TestBadRequests(t *testing.T) {
	tests := map[string]struct {
		req     provider.Request
		wantErr string
	}{
		"schema not JSON": {req: provider.Request{Tools: []provider.ToolDef{{Name: "x", Schema: []byte(`{`)}},
			Messages: userTurn("hi").Messages}, wantErr: `tool "x": schema is not a JSON object`},
		"schema not an object": {req: provider.Request{Tools: []provider.ToolDef{{Name: "x", Schema: []byte(`[1]`)}},
			Messages: userTurn("hi").Messages}, wantErr: `tool "x": schema is not a JSON object`},
		"tool without name": {req: provider.Request{Tools: []provider.ToolDef{{Schema: []byte(`{}`)}},
			Messages: userTurn("hi").Messages}, wantErr: "a tool has no name"},
		"unknown role": {req: provider.Request{Messages: []provider.Message{{Role: "system", Text: "x"}}},
			wantErr: `message 0: unknown role "system"`},
		"user with tool calls": {req: provider.Request{Messages: []provider.Message{{Role: provider.RoleUser,
			ToolCalls: []provider.ToolCall{{ID: "1", Name: "x"}}}}}, wantErr: "a user message cannot carry tool calls"},
		"empty message": {req: provider.Request{Messages: []provider.Message{{Role: provider.RoleUser}}},
			wantErr: "message 0: the message is empty"},
		"assistant with tool results": {req: provider.Request{Messages: []provider.Message{{Role: provider.RoleAssistant,
			ToolResults: []provider.ToolResult{{CallID: "1"}}}}}, wantErr: "an assistant message cannot carry tool results"},
	}
	for name, tc := range tests {
		for _, spec := range []string{"openai:gpt-4.1", "anthropic:claude-sonnet-4-5"} {
			t.Run(name+"/"+spec, func(t *testing.T) {
				srv := newWireServer(t)
				_, err := newProvider(t, spec, srv, &githubtest.Sleeps{}).Complete(context.Background(), tc.req)
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("err = %v, want %q", err, tc.wantErr)
				}
				var pe *provider.Error
				if errors.As(err, &pe) {
					t.Errorf("a bad request is our bug, not the service's: got *Error %v", pe)
				}
				if srv.requests() != 0 {
					t.Errorf("%d requests sent", srv.requests())
				}
			})
		}
	}
}

// A cancelled context ends the call with the context's error, unretried.
func TestCancelledContext(t *testing.T) {
	for _, spec := range []string{"openai:gpt-4.1", "anthropic:claude-sonnet-4-5"} {
		t.Run(spec, func(t *testing.T) {
			srv := newWireServer(t, jsonReply(500, `{}`))
			ctx, cancel := context.WithCancel(context.Background())
			sl := &githubtest.Sleeps{}
			p := newProvider(t, spec, srv, sl)
			cancel()
			_, err := p.Complete(ctx, userTurn("hi"))
			if !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v, want context.Canceled", err)
			}
			if len(sl.All()) != 0 {
				t.Errorf("retried after cancel: %v", sl.All())
			}
		})
	}
}
