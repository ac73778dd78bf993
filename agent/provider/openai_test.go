package provider_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/patchwright/patchwright/agent/provider"
	"github.com/patchwright/patchwright/jobs/githubtest"
)

// fixtureTool turns the request fixture's function tool into a ToolDef.
func fixtureTool(t *testing.T) (provider.ToolDef, map[string]any) {
	t.Helper()
	req := mustJSON(t, fixture(t, "openai.chat.completion.tool_calls.request.json"))
	fn := req["tools"].([]any)[0].(map[string]any)["function"].(map[string]any)
	schema, err := json.Marshal(fn["parameters"])
	if err != nil {
		t.Fatal(err)
	}
	return provider.ToolDef{Name: fn["name"].(string), Description: fn["description"].(string), Schema: schema}, req
}

func TestOpenAIToolCallRoundTrip(t *testing.T) {
	srv := newWireServer(t,
		sseReply(fixture(t, "openai.chat.completion.stream.tool_call.single.sse")),
		sseReply(fixture(t, "openai.chat.completion.stream.finish_length.sse")),
	)
	p := newProvider(t, "openai:gpt-4o", srv, &githubtest.Sleeps{})
	tool, fixtureReq := fixtureTool(t)
	req := provider.Request{System: "Be brief.", Tools: []provider.ToolDef{tool},
		Messages: []provider.Message{{Role: provider.RoleUser, Text: "What is the weather like in Boston today?"}}}

	resp, err := p.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := provider.ToolCall{ID: "call_4XzlGBLtUe9dy3GVNV4jhq7h", Name: "get_weather", Arguments: `{"city":"New York City"}`}
	if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0] != want {
		t.Fatalf("tool calls = %+v, want %+v", resp.Message.ToolCalls, want)
	}
	if resp.StopReason != "tool_use" {
		t.Errorf("stop reason = %q", resp.StopReason)
	}
	if resp.Usage != (provider.Usage{InputTokens: 44, OutputTokens: 16}) {
		t.Errorf("usage = %+v", resp.Usage)
	}

	// The first request carries the tools exactly as the reference example
	// shapes them, streamed with usage.
	first := srv.body(0)
	if !jsonEqual(t, first["tools"], fixtureReq["tools"]) {
		t.Errorf("tools sent = %v\nwant %v", first["tools"], fixtureReq["tools"])
	}
	if first["stream"] != true || first["model"] != "gpt-4o" {
		t.Errorf("stream/model = %v/%v", first["stream"], first["model"])
	}
	if !jsonEqual(t, first["stream_options"], map[string]any{"include_usage": true}) {
		t.Errorf("stream_options = %v", first["stream_options"])
	}
	wantMsgs := []any{
		map[string]any{"role": "system", "content": "Be brief."},
		fixtureReq["messages"].([]any)[0],
	}
	if !jsonEqual(t, first["messages"], wantMsgs) {
		t.Errorf("messages = %v\nwant %v", first["messages"], wantMsgs)
	}

	req.Messages = append(req.Messages, resp.Message, provider.Message{Role: provider.RoleUser,
		ToolResults: []provider.ToolResult{{CallID: want.ID, Content: "22 C, sunny"}}})
	resp, err = p.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != "max_tokens" || resp.Message.Text != `{"` {
		t.Errorf("second reply = %+v", resp)
	}
	msgs := srv.body(1)["messages"].([]any)
	wantTail := []any{
		map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{
			"id": want.ID, "type": "function", "function": map[string]any{"name": "get_weather", "arguments": want.Arguments}}}},
		map[string]any{"role": "tool", "tool_call_id": want.ID, "content": "22 C, sunny"},
	}
	if len(msgs) != 4 || !jsonEqual(t, msgs[2:], wantTail) {
		t.Errorf("conversation sent = %v\nwant tail %v", msgs, wantTail)
	}
}

func TestOpenAIParallelToolCallsAndCachedUsage(t *testing.T) {
	sse := fixture(t, "openai.chat.completion.stream.tool_calls.parallel.sse")
	// The recorded stream predates prompt_tokens_details; add cached tokens.
	sse = strings.Replace(sse, `"total_tokens":209,`, `"total_tokens":209,"prompt_tokens_details":{"cached_tokens":128},`, 1)
	srv := newWireServer(t, sseReply(sse))
	resp, err := newProvider(t, "openai:gpt-4o", srv, &githubtest.Sleeps{}).Complete(context.Background(), userTurn("weather and stock"))
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.ToolCall{
		{ID: "call_JMW1whyEaYG438VE1OIflxA2", Name: "GetWeatherArgs", Arguments: `{"city": "Edinburgh", "country": "GB", "units": "c"}`},
		{ID: "call_DNYTawLBoN8fj3KN6qU9N1Ou", Name: "get_stock_price", Arguments: `{"ticker": "AAPL", "exchange": "NASDAQ"}`},
	}
	if len(resp.Message.ToolCalls) != 2 || resp.Message.ToolCalls[0] != want[0] || resp.Message.ToolCalls[1].Name != want[1].Name ||
		resp.Message.ToolCalls[1].Arguments != want[1].Arguments || resp.Message.ToolCalls[1].ID == "" {
		t.Errorf("tool calls = %+v\nwant %+v", resp.Message.ToolCalls, want)
	}
	if resp.Usage != (provider.Usage{InputTokens: 149, OutputTokens: 60, CachedInputTokens: 128}) {
		t.Errorf("usage = %+v", resp.Usage)
	}
}

func TestOpenAIArgumentsNotJSONPassThrough(t *testing.T) {
	// Drop the last argument fragment: the model's JSON is cut short.
	sse := dropEvents(fixture(t, "openai.chat.completion.stream.tool_call.single.sse"), `"arguments":"\"}"`)
	srv := newWireServer(t, sseReply(sse), sseReply(fixture(t, "openai.chat.completion.stream.finish_length.sse")))
	p := newProvider(t, "openai:gpt-4o", srv, &githubtest.Sleeps{})
	resp, err := p.Complete(context.Background(), userTurn("weather?"))
	if err != nil {
		t.Fatal(err)
	}
	call := resp.Message.ToolCalls[0]
	if call.Arguments != `{"city":"New York City` {
		t.Fatalf("arguments = %q", call.Arguments)
	}
	// Echoed back untouched, with the loop's error result.
	req := userTurn("weather?")
	req.Messages = append(req.Messages, resp.Message, provider.Message{Role: provider.RoleUser,
		ToolResults: []provider.ToolResult{{CallID: call.ID, Content: "error: invalid_arguments", IsError: true}}})
	if _, err := p.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	echoed := srv.body(1)["messages"].([]any)[1].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)
	if got := echoed["function"].(map[string]any)["arguments"]; got != call.Arguments {
		t.Errorf("echoed arguments = %q", got)
	}
}

func TestOpenAITextAndCacheWrite(t *testing.T) {
	// A server that does not stream when asked to still answers with JSON;
	// the real ones stream, so build the stream from the text fixture.
	text := mustJSON(t, fixture(t, "openai.chat.completion.text.json"))
	usage := text["usage"].(map[string]any)
	usage["prompt_tokens_details"].(map[string]any)["cached_tokens"] = 12
	usage["prompt_tokens_details"].(map[string]any)["cache_write_tokens"] = 5
	chunk := func(v map[string]any) string {
		b, _ := json.Marshal(v)
		return "data: " + string(b) + "\n\n"
	}
	base := map[string]any{"id": text["id"], "object": "chat.completion.chunk", "created": text["created"], "model": text["model"]}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for kk, vv := range base {
			m[kk] = vv
		}
		m[k] = v
		return m
	}
	content := text["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"].(string)
	sse := chunk(with("choices", []any{map[string]any{"index": 0, "delta": map[string]any{"role": "assistant", "content": content}, "finish_reason": nil}})) +
		chunk(with("choices", []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": "stop"}})) +
		chunk(with("usage", usage)) + "data: [DONE]\n\n"
	// the usage chunk needs an empty choices list
	sse = strings.Replace(sse, `"usage":`, `"choices":[],"usage":`, 1)
	srv := newWireServer(t, sseReply(sse))
	resp, err := newProvider(t, "openai:gpt-5.4", srv, &githubtest.Sleeps{}).Complete(context.Background(), userTurn("Hello!"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Text != "Hello! How can I assist you today?" || resp.StopReason != "end_turn" {
		t.Errorf("reply = %+v", resp)
	}
	if resp.Usage != (provider.Usage{InputTokens: 19, OutputTokens: 10, CachedInputTokens: 12, CacheWriteTokens: 5}) {
		t.Errorf("usage = %+v", resp.Usage)
	}
}

func TestOpenAIErrors(t *testing.T) {
	ok := func(t *testing.T) reply {
		return sseReply(fixture(t, "openai.chat.completion.stream.tool_call.single.sse"))
	}
	cut := func(t *testing.T) reply {
		s := fixture(t, "openai.chat.completion.stream.tool_call.single.sse")
		return sseReply(s[:len(s)/2]) // the connection ends mid-stream
	}
	tests := map[string]struct {
		replies   func(t *testing.T) []reply
		wantKind  provider.Kind // "" means success
		wantCode  string
		wantCalls int
		wantWaits []time.Duration // nil: not checked beyond count
		nWaits    int
	}{
		"429 twice then success, Retry-After honoured": {
			replies: func(t *testing.T) []reply {
				body := fixture(t, "openai.error.429.rate_limit_exceeded.json")
				return []reply{jsonReply(429, body, "Retry-After", "2"), jsonReply(429, body, "Retry-After-Ms", "1500"), ok(t)}
			},
			wantCalls: 3, wantWaits: []time.Duration{2 * time.Second, 1500 * time.Millisecond}, nWaits: 2,
		},
		"insufficient_quota 429 is not retried": {
			replies: func(t *testing.T) []reply {
				return []reply{jsonReply(429, fixture(t, "openai.error.429.insufficient_quota.json"), "Retry-After", "1")}
			},
			wantKind: provider.KindPermanent, wantCode: "insufficient_quota", wantCalls: 1,
		},
		"model not found": {
			replies: func(t *testing.T) []reply {
				return []reply{jsonReply(404, fixture(t, "openai.error.404.model_not_found.recorded.json"))}
			},
			wantKind: provider.KindPermanent, wantCode: "model_not_found", wantCalls: 1,
		},
		"context length exceeded": {
			replies: func(t *testing.T) []reply {
				return []reply{jsonReply(400, fixture(t, "openai.error.400.context_length_exceeded.json"))}
			},
			wantKind: provider.KindContextLength, wantCode: "context_length_exceeded", wantCalls: 1,
		},
		"bad key": {
			replies: func(t *testing.T) []reply {
				return []reply{jsonReply(401, `{"error":{"message":"Incorrect API key provided: sk-test. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`)}
			},
			wantKind: provider.KindPermanent, wantCode: "invalid_api_key", wantCalls: 1,
		},
		"500 then success": {
			replies: func(t *testing.T) []reply {
				return []reply{jsonReply(500, `{"error":{"message":"The server had an error","type":"server_error","param":null,"code":null}}`), ok(t)}
			},
			wantCalls: 2, nWaits: 1,
		},
		"connection reset then success": {
			replies:   func(t *testing.T) []reply { return []reply{{hangup: true}, ok(t)} },
			wantCalls: 2, nWaits: 1,
		},
		"stream cut short then success": {
			replies:   func(t *testing.T) []reply { return []reply{cut(t), ok(t)} },
			wantCalls: 2, nWaits: 1,
		},
		"error event inside a 200 stream then success": {
			replies: func(t *testing.T) []reply {
				return []reply{sseReply(`data: {"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}` + "\n\n"), ok(t)}
			},
			wantCalls: 2, nWaits: 1,
		},
		"context length error event from a compatible server": {
			replies: func(t *testing.T) []reply {
				body := mustJSON(t, fixture(t, "openai.error.400.context_length_exceeded.json"))
				b, _ := json.Marshal(body)
				return []reply{sseReply("data: " + string(b) + "\n\n")}
			},
			wantKind: provider.KindContextLength, wantCode: "context_length_exceeded", wantCalls: 1,
		},
		"retries used up": {
			replies: func(t *testing.T) []reply {
				r := jsonReply(503, `{"error":{"message":"overloaded","type":"server_error","param":null,"code":null}}`)
				return []reply{r, r, r, r}
			},
			wantKind: provider.KindTransient, wantCode: "server_error", wantCalls: 4, nWaits: 3,
		},
		"Retry-After beyond the cap ends retries": {
			replies: func(t *testing.T) []reply {
				return []reply{jsonReply(429, fixture(t, "openai.error.429.rate_limit_exceeded.json"), "Retry-After", "3600")}
			},
			wantKind: provider.KindTransient, wantCode: "rate_limit_exceeded", wantCalls: 1,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			srv := newWireServer(t, tc.replies(t)...)
			sl := &githubtest.Sleeps{}
			resp, err := newProvider(t, "openai:gpt-4o", srv, sl).Complete(context.Background(), userTurn("hi"))
			if tc.wantKind == "" {
				if err != nil || len(resp.Message.ToolCalls) != 1 {
					t.Fatalf("got %+v, %v; want the tool call", resp, err)
				}
			} else {
				var pe *provider.Error
				if !errors.As(err, &pe) {
					t.Fatalf("err = %v, want *provider.Error", err)
				}
				if pe.Kind != tc.wantKind || pe.Code != tc.wantCode || pe.Provider != "openai" || pe.Reason == "" {
					t.Errorf("error = %+v, want kind %s code %s", pe, tc.wantKind, tc.wantCode)
				}
				if pe.Attempts != tc.wantCalls {
					t.Errorf("attempts = %d, want %d", pe.Attempts, tc.wantCalls)
				}
				if strings.Contains(pe.Reason, "\n") {
					t.Errorf("reason spans lines: %q", pe.Reason)
				}
			}
			if srv.requests() != tc.wantCalls {
				t.Errorf("server saw %d requests, want %d", srv.requests(), tc.wantCalls)
			}
			waits := sl.All()
			if len(waits) != tc.nWaits {
				t.Errorf("waits = %v, want %d of them", waits, tc.nWaits)
			}
			for i, w := range tc.wantWaits {
				if i < len(waits) && waits[i] != w {
					t.Errorf("wait %d = %v, want %v", i, waits[i], w)
				}
			}
		})
	}
}

func TestOpenAIReasonNamesTheKeyVariable(t *testing.T) {
	srv := newWireServer(t, jsonReply(401, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`))
	_, err := newProvider(t, "openai:gpt-4o", srv, &githubtest.Sleeps{}).Complete(context.Background(), userTurn("hi"))
	if err == nil || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Errorf("err = %v, want it to name OPENAI_API_KEY", err)
	}
}
