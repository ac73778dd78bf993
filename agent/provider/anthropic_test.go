package provider_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent/provider"
	"github.com/patchwright/patchwright/jobs/githubtest"
)

// messageSSE replays a recorded non-streamed Message as the event stream
// the API sends for it, so recorded bodies exercise the streaming client.
func messageSSE(t *testing.T, body string) string {
	t.Helper()
	msg := mustJSON(t, body)
	var b strings.Builder
	send := func(event string, v any) {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", event, data)
	}
	usage := msg["usage"].(map[string]any)
	start := map[string]any{}
	for k, v := range msg {
		start[k] = v
	}
	start["content"], start["stop_reason"] = []any{}, nil
	send("message_start", map[string]any{"type": "message_start", "message": start})
	for i, raw := range msg["content"].([]any) {
		block := raw.(map[string]any)
		switch block["type"] {
		case "text":
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": block["text"]}})
		case "tool_use":
			input, _ := json.Marshal(block["input"])
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": block["id"], "name": block["name"], "input": map[string]any{}}})
			send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
		}
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": msg["stop_reason"], "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": usage["output_tokens"]}})
	send("message_stop", map[string]any{"type": "message_stop"})
	return b.String()
}

// stripCacheControl removes cache_control everywhere, to compare a request
// with a fixture recorded without caching.
func stripCacheControl(v any) any {
	switch x := v.(type) {
	case map[string]any:
		delete(x, "cache_control")
		for _, e := range x {
			stripCacheControl(e)
		}
	case []any:
		for _, e := range x {
			stripCacheControl(e)
		}
	}
	return v
}

// weatherTool is the tool of the recorded request fixtures.
func weatherTool(t *testing.T) provider.ToolDef {
	req := mustJSON(t, fixture(t, "anthropic.messages.request.tools.json"))
	tool := req["tools"].([]any)[0].(map[string]any)
	schema, _ := json.Marshal(tool["input_schema"])
	return provider.ToolDef{Name: tool["name"].(string), Description: tool["description"].(string), Schema: schema}
}

func TestAnthropicToolUseRoundTrip(t *testing.T) {
	srv := newWireServer(t,
		sseReply(messageSSE(t, fixture(t, "anthropic.messages.tool_use.json"))),
		sseReply(messageSSE(t, fixture(t, "anthropic.messages.end_turn.after_tool_result.json"))),
	)
	p := newProvider(t, "anthropic:claude-3-7-sonnet-latest", srv, &githubtest.Sleeps{})
	req := provider.Request{MaxTokens: 512, Tools: []provider.ToolDef{weatherTool(t)},
		Messages: []provider.Message{{Role: provider.RoleUser, Text: "What's the weather in San Francisco? Use fahrenheit."}}}
	resp, err := p.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	wantCall := provider.ToolCall{ID: "toolu_01TZR6ZrLHdpAWdmhVPuDfjQ", Name: "get_weather", Arguments: `{"city":"San Francisco","units":"fahrenheit"}`}
	if resp.StopReason != "tool_use" || len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0] != wantCall ||
		resp.Message.Text != "I'll get the current weather in San Francisco for you in Fahrenheit." {
		t.Fatalf("reply = %+v", resp)
	}
	if resp.Usage != (provider.Usage{InputTokens: 402, OutputTokens: 89}) {
		t.Errorf("usage = %+v", resp.Usage)
	}
	// Apart from streaming and cache_control, the request is the recorded one.
	first := stripCacheControl(srv.body(0)).(map[string]any)
	if first["stream"] != true {
		t.Errorf("not streamed: %v", first["stream"])
	}
	delete(first, "stream")
	if want := mustJSON(t, fixture(t, "anthropic.messages.request.tools.json")); !jsonEqual(t, first, want) {
		t.Errorf("request = %v\nwant %v", first, want)
	}

	req.Messages = append(req.Messages, resp.Message, provider.Message{Role: provider.RoleUser,
		ToolResults: []provider.ToolResult{{CallID: wantCall.ID, Content: "The weather in San Francisco is 68 degrees fahrenheit."}}})
	resp, err = p.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != "end_turn" || resp.Message.Text != "The current temperature in San Francisco is 68 degrees Fahrenheit." {
		t.Errorf("second reply = %+v", resp)
	}
	second := stripCacheControl(srv.body(1)).(map[string]any)
	want := mustJSON(t, fixture(t, "anthropic.messages.request.with_tool_result.json"))
	// Our tool_result carries is_error:false and string content; the
	// fixture has a text block list and no is_error. Both are valid wire
	// forms; normalise ours to the fixture's before comparing.
	res := second["messages"].([]any)[2].(map[string]any)["content"].([]any)[0].(map[string]any)
	if res["is_error"] != false {
		t.Errorf("is_error = %v", res["is_error"])
	}
	delete(res, "is_error")
	if s, ok := res["content"].(string); ok {
		res["content"] = []any{map[string]any{"type": "text", "text": s}}
	} else if blocks, ok := res["content"].([]any); ok {
		res["content"] = blocks
	}
	if !jsonEqual(t, second["messages"], want["messages"]) {
		t.Errorf("messages = %v\nwant %v", second["messages"], want["messages"])
	}
}

func TestAnthropicStreamFixture(t *testing.T) {
	srv := newWireServer(t, sseReply(sseFixture(t, "anthropic.messages.stream.tool_use.sse")))
	resp, err := newProvider(t, "anthropic:claude-sonnet-4-20250514", srv, &githubtest.Sleeps{}).Complete(context.Background(), userTurn("weather in Paris?"))
	if err != nil {
		t.Fatal(err)
	}
	want := provider.ToolCall{ID: "toolu_01NRLabsLyVHZPKxbKvkfSMn", Name: "get_weather", Arguments: `{"location": "Paris"}`}
	if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0] != want {
		t.Errorf("tool calls = %+v", resp.Message.ToolCalls)
	}
	if resp.Message.Text != "I'll check the current weather in Paris for you." || resp.StopReason != "tool_use" {
		t.Errorf("reply = %+v", resp)
	}
	if resp.Usage != (provider.Usage{InputTokens: 377, OutputTokens: 65}) {
		t.Errorf("usage = %+v", resp.Usage)
	}
}

func TestAnthropicArgumentsNotJSONPassThrough(t *testing.T) {
	sse := dropEvents(sseFixture(t, "anthropic.messages.stream.tool_use.sse"), `"partial_json":"is\"}"`)
	srv := newWireServer(t, sseReply(sse), sseReply(messageSSE(t, fixture(t, "anthropic.messages.end_turn.after_tool_result.json"))))
	p := newProvider(t, "anthropic:claude-sonnet-4-5", srv, &githubtest.Sleeps{})
	resp, err := p.Complete(context.Background(), userTurn("weather in Paris?"))
	if err != nil {
		t.Fatal(err)
	}
	call := resp.Message.ToolCalls[0]
	if call.Arguments != `{"location": "Par` {
		t.Fatalf("arguments = %q", call.Arguments)
	}
	req := userTurn("weather in Paris?")
	req.Messages = append(req.Messages, resp.Message, provider.Message{Role: provider.RoleUser,
		ToolResults: []provider.ToolResult{{CallID: call.ID, Content: "error: invalid_arguments", IsError: true}}})
	if _, err := p.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	// The API only takes an object as tool input: the broken one is echoed as {}.
	blocks := srv.body(1)["messages"].([]any)[1].(map[string]any)["content"].([]any)
	use := blocks[len(blocks)-1].(map[string]any)
	if use["type"] != "tool_use" || !jsonEqual(t, use["input"], map[string]any{}) {
		t.Errorf("echoed tool_use = %v", use)
	}
	result := srv.body(1)["messages"].([]any)[2].(map[string]any)["content"].([]any)[0].(map[string]any)
	if result["is_error"] != true || result["tool_use_id"] != call.ID {
		t.Errorf("tool_result = %v", result)
	}
}

func TestAnthropicCacheControlOnStablePrefix(t *testing.T) {
	srv := newWireServer(t, sseReply(messageSSE(t, fixture(t, "anthropic.messages.tool_use.cache_creation.recorded.json"))))
	other := weatherTool(t)
	other.Name = "get_time"
	req := provider.Request{System: "You fix bugs.", Tools: []provider.ToolDef{weatherTool(t), other},
		Messages: []provider.Message{{Role: provider.RoleUser, Text: "first"}, {Role: provider.RoleAssistant, Text: "ok"}, {Role: provider.RoleUser, Text: "last"}}}
	resp, err := newProvider(t, "anthropic:claude-sonnet-4-5", srv, &githubtest.Sleeps{}).Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	// input_tokens 7 + cache_creation 1069: InputTokens counts both.
	if resp.Usage != (provider.Usage{InputTokens: 1076, OutputTokens: 60, CacheWriteTokens: 1069}) {
		t.Errorf("usage = %+v", resp.Usage)
	}
	body := srv.body(0)
	ephemeral := map[string]any{"type": "ephemeral"}
	tools := body["tools"].([]any)
	if _, ok := tools[0].(map[string]any)["cache_control"]; ok {
		t.Errorf("first tool has cache_control; only the last should")
	}
	if !jsonEqual(t, tools[1].(map[string]any)["cache_control"], ephemeral) {
		t.Errorf("last tool = %v, want cache_control ephemeral", tools[1])
	}
	system := body["system"].([]any)[0].(map[string]any)
	if system["text"] != "You fix bugs." || !jsonEqual(t, system["cache_control"], ephemeral) {
		t.Errorf("system = %v", system)
	}
	msgs := body["messages"].([]any)
	last := msgs[2].(map[string]any)["content"].([]any)[0].(map[string]any)
	if !jsonEqual(t, last["cache_control"], ephemeral) {
		t.Errorf("last message block = %v, want cache_control", last)
	}
	if _, ok := msgs[0].(map[string]any)["content"].([]any)[0].(map[string]any)["cache_control"]; ok {
		t.Errorf("first message is marked too: at most 4 breakpoints are allowed")
	}
}

func TestAnthropicCacheReadUsage(t *testing.T) {
	srv := newWireServer(t, sseReply(messageSSE(t, fixture(t, "anthropic.messages.end_turn.cache_read.recorded.json"))))
	resp, err := newProvider(t, "anthropic:claude-sonnet-4-5", srv, &githubtest.Sleeps{}).Complete(context.Background(), userTurn("python?"))
	if err != nil {
		t.Fatal(err)
	}
	// input 3 + cache read 1111 + cache write 418.
	want := provider.Usage{InputTokens: 1532, OutputTokens: 33, CachedInputTokens: 1111, CacheWriteTokens: 418}
	if resp.Usage != want {
		t.Errorf("usage = %+v, want %+v", resp.Usage, want)
	}
	usd, known := provider.Cost("anthropic:claude-sonnet-4-5-20250929", resp.Usage)
	// 3*3 + 1111*0.3 + 418*3.75 + 33*15, per million.
	if wantUSD := (3*3 + 1111*0.3 + 418*3.75 + 33*15) / 1e6; !known || fmt.Sprintf("%.9f", usd) != fmt.Sprintf("%.9f", wantUSD) {
		t.Errorf("cost = %v %v, want %v", usd, known, wantUSD)
	}
}

func TestAnthropicErrors(t *testing.T) {
	ok := func(t *testing.T) reply { return sseReply(sseFixture(t, "anthropic.messages.stream.tool_use.sse")) }
	overloaded := func(t *testing.T) reply {
		return jsonReply(529, fixture(t, "anthropic.error.529.overloaded_error.json"))
	}
	tests := map[string]struct {
		replies   func(t *testing.T) []reply
		wantKind  provider.Kind
		wantCode  string
		wantCalls int
		nWaits    int
	}{
		"529 overloaded twice then success": {
			replies:   func(t *testing.T) []reply { return []reply{overloaded(t), overloaded(t), ok(t)} },
			wantCalls: 3, nWaits: 2,
		},
		"overloaded error event inside a 200 stream": {
			replies: func(t *testing.T) []reply {
				return []reply{sseReply("event: error\ndata: " + fixture(t, "anthropic.error.529.overloaded_error.json") + "\n\n"), ok(t)}
			},
			wantCalls: 2, nWaits: 1,
		},
		"invalid request": {
			replies: func(t *testing.T) []reply {
				return []reply{jsonReply(400, fixture(t, "anthropic.error.400.invalid_request_error.recorded.json"))}
			},
			wantKind: provider.KindPermanent, wantCode: "invalid_request_error", wantCalls: 1,
		},
		"prompt too long": {
			replies: func(t *testing.T) []reply {
				return []reply{jsonReply(400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 211234 tokens > 200000 maximum"},"request_id":"req_1"}`)}
			},
			wantKind: provider.KindContextLength, wantCode: "invalid_request_error", wantCalls: 1,
		},
		"bad key": {
			replies: func(t *testing.T) []reply {
				return []reply{jsonReply(401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},"request_id":"req_2"}`)}
			},
			wantKind: provider.KindPermanent, wantCode: "authentication_error", wantCalls: 1,
		},
		"model not found": {
			replies: func(t *testing.T) []reply {
				return []reply{jsonReply(404, `{"type":"error","error":{"type":"not_found_error","message":"model: claude-nope"},"request_id":"req_3"}`)}
			},
			wantKind: provider.KindPermanent, wantCode: "not_found_error", wantCalls: 1,
		},
		"rate limited with retry-after": {
			replies: func(t *testing.T) []reply {
				return []reply{jsonReply(429, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`, "retry-after", "7"), ok(t)}
			},
			wantCalls: 2, nWaits: 1,
		},
		"connection reset then success": {
			replies:   func(t *testing.T) []reply { return []reply{{hangup: true}, ok(t)} },
			wantCalls: 2, nWaits: 1,
		},
		"stream cut before message_stop then success": {
			replies: func(t *testing.T) []reply {
				return []reply{sseReply(dropEvents(sseFixture(t, "anthropic.messages.stream.tool_use.sse"), "message_stop")), ok(t)}
			},
			wantCalls: 2, nWaits: 1,
		},
		"overloaded until retries run out": {
			replies: func(t *testing.T) []reply {
				return []reply{overloaded(t), overloaded(t), overloaded(t), overloaded(t)}
			},
			wantKind: provider.KindTransient, wantCode: "overloaded_error", wantCalls: 4, nWaits: 3,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			srv := newWireServer(t, tc.replies(t)...)
			sl := &githubtest.Sleeps{}
			resp, err := newProvider(t, "anthropic:claude-sonnet-4-5", srv, sl).Complete(context.Background(), userTurn("hi"))
			if tc.wantKind == "" {
				if err != nil || len(resp.Message.ToolCalls) != 1 {
					t.Fatalf("got %+v, %v; want the tool call", resp, err)
				}
			} else {
				var pe *provider.Error
				if !errors.As(err, &pe) {
					t.Fatalf("err = %v, want *provider.Error", err)
				}
				if pe.Kind != tc.wantKind || pe.Code != tc.wantCode || pe.Provider != "anthropic" || pe.Attempts != tc.wantCalls {
					t.Errorf("error = %+v, want kind %s code %s after %d attempts", pe, tc.wantKind, tc.wantCode, tc.wantCalls)
				}
			}
			if srv.requests() != tc.wantCalls {
				t.Errorf("server saw %d requests, want %d", srv.requests(), tc.wantCalls)
			}
			if waits := sl.All(); len(waits) != tc.nWaits {
				t.Errorf("waits = %v, want %d", waits, tc.nWaits)
			}
			if name == "rate limited with retry-after" && sl.All()[0].Seconds() != 7 {
				t.Errorf("wait = %v, want the server's 7s", sl.All()[0])
			}
		})
	}
}
