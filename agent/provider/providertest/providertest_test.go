package providertest_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/patchwright/patchwright/agent/provider"
	"github.com/patchwright/patchwright/agent/provider/providertest"
)

var readFile = provider.ToolDef{
	Name:        "read_file",
	Description: "Read a file",
	Schema:      []byte(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
}

func wires(srv *providertest.Server, t *testing.T) map[string]provider.Provider {
	return map[string]provider.Provider{"openai": srv.OpenAI(t), "anthropic": srv.Anthropic(t)}
}

// TestRoundTrip drives a two-turn conversation through each real SDK and
// checks what the model was shown on the second turn.
func TestRoundTrip(t *testing.T) {
	for _, wire := range []string{provider.NameOpenAI, provider.NameAnthropic} {
		t.Run(wire, func(t *testing.T) {
			srv := providertest.New(t,
				providertest.Turn{Text: "Let me look.", ToolCalls: []providertest.ToolCall{
					providertest.Call("read_file", `{"path":"go.mod"}`),
					providertest.Call("read_file", `{"path":"main.go"`), // not JSON: passed through
				}, Usage: provider.Usage{InputTokens: 1000, CachedInputTokens: 800, OutputTokens: 20}},
				providertest.Text("done"),
			)
			p := wires(srv, t)[wire]
			ctx := context.Background()
			req := provider.Request{System: "You fix bugs.", Tools: []provider.ToolDef{readFile},
				Messages: []provider.Message{{Role: provider.RoleUser, Text: "Fix issue 1"}}}

			resp, err := p.Complete(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StopReason != "tool_use" || resp.Message.Text != "Let me look." || len(resp.Message.ToolCalls) != 2 {
				t.Fatalf("first reply = %+v", resp)
			}
			if got := resp.Message.ToolCalls[1].Arguments; got != `{"path":"main.go"` {
				t.Errorf("raw arguments = %q", got)
			}
			want := provider.Usage{InputTokens: 1000, CachedInputTokens: 800, OutputTokens: 20}
			if resp.Usage != want {
				t.Errorf("usage = %+v, want %+v", resp.Usage, want)
			}

			calls := resp.Message.ToolCalls
			req.Messages = append(req.Messages, resp.Message, provider.Message{Role: provider.RoleUser,
				ToolResults: []provider.ToolResult{
					{CallID: calls[0].ID, Content: "module x"},
					{CallID: calls[1].ID, Content: "error: invalid_arguments", IsError: true},
				}})
			resp, err = p.Complete(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Text != "done" || resp.StopReason != "end_turn" {
				t.Fatalf("second reply = %+v", resp)
			}

			reqs := srv.Requests()
			if len(reqs) != 2 || srv.Remaining() != 0 {
				t.Fatalf("got %d requests, %d turns left", len(reqs), srv.Remaining())
			}
			second := reqs[1]
			if second.System != "You fix bugs." || len(second.Tools) != 1 || second.Tools[0] != "read_file" || !second.Stream {
				t.Errorf("second request = %+v", second)
			}
			if len(second.Messages) != 3 {
				t.Fatalf("second request has %d messages: %+v", len(second.Messages), second.Messages)
			}
			results := second.Messages[2].ToolResults
			if len(results) != 2 || results[0].CallID != calls[0].ID || results[0].Content != "module x" ||
				results[1].Content != "error: invalid_arguments" {
				t.Errorf("tool results seen by the model = %+v", results)
			}
			if got := second.Messages[1].ToolCalls; len(got) != 2 || got[0].ID != calls[0].ID || got[0].Name != "read_file" {
				t.Errorf("assistant tool calls echoed = %+v", got)
			}
		})
	}
}

func TestErrorTurnsAndWaits(t *testing.T) {
	for _, wire := range []string{provider.NameOpenAI, provider.NameAnthropic} {
		t.Run(wire, func(t *testing.T) {
			srv := providertest.New(t,
				providertest.Status(http.StatusTooManyRequests, "", "Retry-After", "3"),
				providertest.Hangup(),
				providertest.Text("ok"),
			)
			resp, err := wires(srv, t)[wire].Complete(context.Background(), provider.Request{
				Messages: []provider.Message{{Role: provider.RoleUser, Text: "hi"}}})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Text != "ok" {
				t.Errorf("text = %q", resp.Message.Text)
			}
			waits := srv.Waits()
			if len(waits) != 2 || waits[0] != 3*time.Second {
				t.Errorf("waits = %v, want [3s, backoff]", waits)
			}
		})
	}
}

func TestPermanentError(t *testing.T) {
	srv := providertest.New(t, providertest.Status(http.StatusUnauthorized, ""))
	_, err := srv.Anthropic(t).Complete(context.Background(), provider.Request{
		Messages: []provider.Message{{Role: provider.RoleUser, Text: "hi"}}})
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindPermanent || pe.StatusCode != 401 {
		t.Fatalf("err = %v", err)
	}
}
