package providertest

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/patchwright/patchwright/agent/provider"
)

// halves splits s in two so streamed replies arrive in fragments, as real
// ones do.
func halves(s string) []string {
	if len(s) < 2 {
		return []string{s}
	}
	return []string{s[:len(s)/2], s[len(s)/2:]}
}

func stopReason(t Turn) string {
	switch {
	case t.StopReason != "":
		return t.StopReason
	case len(t.ToolCalls) > 0:
		return "tool_use"
	}
	return "end_turn"
}

type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func newSSE(w http.ResponseWriter) sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return sse{w: w, f: f}
}

// send writes one event; event "" writes a data-only event (OpenAI).
func (s sse) send(event string, v any) {
	data, ok := v.(string)
	if !ok {
		b, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		data = string(b)
	}
	if event != "" {
		fmt.Fprintf(s.w, "event: %s\n", event)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", data)
	if s.f != nil {
		s.f.Flush()
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// --- OpenAI Chat Completions ---

func openAIFinish(t Turn) string {
	switch stopReason(t) {
	case "tool_use":
		return "tool_calls"
	case "max_tokens":
		return "length"
	case "end_turn":
		return "stop"
	}
	return t.StopReason
}

func openAIUsage(u provider.Usage) map[string]any {
	details := map[string]any{"cached_tokens": u.CachedInputTokens}
	if u.CacheWriteTokens != 0 {
		details["cache_write_tokens"] = u.CacheWriteTokens
	}
	return map[string]any{
		"prompt_tokens":         u.InputTokens,
		"completion_tokens":     u.OutputTokens,
		"total_tokens":          u.InputTokens + u.OutputTokens,
		"prompt_tokens_details": details,
	}
}

func writeOpenAI(w http.ResponseWriter, req Request, t Turn) {
	const id, created = "chatcmpl-providertest", 1727346178
	if !req.Stream {
		msg := map[string]any{"role": "assistant", "content": nilIfEmpty(t.Text), "refusal": nil}
		var calls []map[string]any
		for _, c := range t.ToolCalls {
			calls = append(calls, map[string]any{"id": c.ID, "type": "function",
				"function": map[string]any{"name": c.Name, "arguments": c.Args}})
		}
		if calls != nil {
			msg["tool_calls"] = calls
		}
		writeJSON(w, map[string]any{"id": id, "object": "chat.completion", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": openAIFinish(t)}},
			"usage":   openAIUsage(t.Usage)})
		return
	}
	s := newSSE(w)
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}}
	}
	s.send("", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	if t.Text != "" {
		for _, part := range halves(t.Text) {
			s.send("", chunk(map[string]any{"content": part}, nil))
		}
	}
	for i, c := range t.ToolCalls {
		s.send("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""}}}}, nil))
		for _, part := range halves(c.Args) {
			s.send("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i,
				"function": map[string]any{"arguments": part}}}}, nil))
		}
	}
	s.send("", chunk(map[string]any{}, openAIFinish(t)))
	s.send("", map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": req.Model,
		"choices": []any{}, "usage": openAIUsage(t.Usage)})
	s.send("", "[DONE]")
}

// --- Anthropic Messages ---

func anthropicUsage(u provider.Usage) map[string]any {
	return map[string]any{
		"input_tokens":                max(u.InputTokens-u.CachedInputTokens-u.CacheWriteTokens, 0),
		"cache_read_input_tokens":     u.CachedInputTokens,
		"cache_creation_input_tokens": u.CacheWriteTokens,
		"output_tokens":               u.OutputTokens,
		"service_tier":                "standard",
	}
}

// objectOrEmpty is a tool input for a non-streamed reply, which can only
// carry a JSON object; the streamed reply sends Args verbatim.
func objectOrEmpty(args string) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &obj) != nil || obj == nil {
		return json.RawMessage(`{}`)
	}
	return json.RawMessage(args)
}

func writeAnthropic(w http.ResponseWriter, req Request, t Turn) {
	const id = "msg_providertest"
	var content []any
	if t.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": t.Text})
	}
	for _, c := range t.ToolCalls {
		content = append(content, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": objectOrEmpty(c.Args)})
	}
	if !req.Stream {
		writeJSON(w, map[string]any{"id": id, "type": "message", "role": "assistant", "model": req.Model,
			"content": content, "stop_reason": stopReason(t), "stop_sequence": nil, "usage": anthropicUsage(t.Usage)})
		return
	}
	s := newSSE(w)
	start := anthropicUsage(t.Usage)
	start["output_tokens"] = 1
	s.send("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": id, "type": "message",
		"role": "assistant", "model": req.Model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": start}})
	index := 0
	if t.Text != "" {
		s.send("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "text", "text": ""}})
		s.send("ping", map[string]any{"type": "ping"})
		for _, part := range halves(t.Text) {
			s.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]any{"type": "text_delta", "text": part}})
		}
		s.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	for _, c := range t.ToolCalls {
		s.send("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}}})
		for _, part := range append([]string{""}, halves(c.Args)...) {
			s.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
		}
		s.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	s.send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stopReason(t), "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": t.Usage.OutputTokens}})
	s.send("message_stop", map[string]any{"type": "message_stop"})
}
