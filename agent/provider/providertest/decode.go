package providertest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/patchwright/patchwright/agent/provider"
)

func decodeRequest(wire string, body []byte) (Request, error) {
	if wire == provider.NameOpenAI {
		return decodeOpenAI(body)
	}
	return decodeAnthropic(body)
}

type openAIRequest struct {
	Model               string                      `json:"model"`
	Stream              bool                        `json:"stream"`
	MaxTokens           int                         `json:"max_tokens"`
	MaxCompletionTokens int                         `json:"max_completion_tokens"`
	StreamOptions       struct{ IncludeUsage bool } `json:"stream_options"`
	Tools               []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
}

func decodeOpenAI(body []byte) (Request, error) {
	var in openAIRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return Request{}, err
	}
	req := Request{Wire: provider.NameOpenAI, Body: body, Model: in.Model, Stream: in.Stream,
		MaxTokens: max(in.MaxTokens, in.MaxCompletionTokens)}
	for _, t := range in.Tools {
		req.Tools = append(req.Tools, t.Function.Name)
	}
	// Consecutive tool messages and the user text after them form one
	// provider.Message, mirroring how the provider encodes them.
	var pending *provider.Message
	flush := func() {
		if pending != nil {
			req.Messages = append(req.Messages, *pending)
			pending = nil
		}
	}
	for i, m := range in.Messages {
		text, err := openAIText(m.Content)
		if err != nil {
			return Request{}, fmt.Errorf("message %d: %w", i, err)
		}
		switch m.Role {
		case "system", "developer":
			req.System = joinText(req.System, text)
		case "tool":
			if pending == nil {
				pending = &provider.Message{Role: provider.RoleUser}
			}
			pending.ToolResults = append(pending.ToolResults, provider.ToolResult{CallID: m.ToolCallID, Content: text})
		case "user":
			if pending == nil {
				pending = &provider.Message{Role: provider.RoleUser}
			}
			pending.Text = joinText(pending.Text, text)
			flush()
		case "assistant":
			flush()
			msg := provider.Message{Role: provider.RoleAssistant, Text: text}
			for _, c := range m.ToolCalls {
				msg.ToolCalls = append(msg.ToolCalls, provider.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
			}
			req.Messages = append(req.Messages, msg)
		default:
			return Request{}, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
	}
	flush()
	return req, nil
}

// openAIText reads content that is a string, null, or a list of parts.
func openAIText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("content is neither text nor parts: %w", err)
	}
	var out string
	for _, p := range parts {
		out = joinText(out, p.Text)
	}
	return out, nil
}

type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

type anthropicRequest struct {
	Model     string          `json:"model"`
	Stream    bool            `json:"stream"`
	MaxTokens int             `json:"max_tokens"`
	System    json.RawMessage `json:"system"`
	Tools     []struct {
		Name string `json:"name"`
	} `json:"tools"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

func decodeAnthropic(body []byte) (Request, error) {
	var in anthropicRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return Request{}, err
	}
	req := Request{Wire: provider.NameAnthropic, Body: body, Model: in.Model, Stream: in.Stream, MaxTokens: in.MaxTokens}
	for _, t := range in.Tools {
		req.Tools = append(req.Tools, t.Name)
	}
	sys, err := anthropicBlocks(in.System)
	if err != nil {
		return Request{}, fmt.Errorf("system: %w", err)
	}
	for _, b := range sys {
		req.System = joinText(req.System, b.Text)
	}
	for i, m := range in.Messages {
		blocks, err := anthropicBlocks(m.Content)
		if err != nil {
			return Request{}, fmt.Errorf("message %d: %w", i, err)
		}
		msg := provider.Message{Role: provider.Role(m.Role)}
		for _, b := range blocks {
			switch b.Type {
			case "text":
				msg.Text = joinText(msg.Text, b.Text)
			case "tool_use":
				msg.ToolCalls = append(msg.ToolCalls, provider.ToolCall{ID: b.ID, Name: b.Name, Arguments: string(b.Input)})
			case "tool_result":
				content, err := anthropicBlocks(b.Content)
				if err != nil {
					return Request{}, fmt.Errorf("message %d tool result: %w", i, err)
				}
				var text string
				for _, c := range content {
					text = joinText(text, c.Text)
				}
				msg.ToolResults = append(msg.ToolResults, provider.ToolResult{CallID: b.ToolUseID, Content: text, IsError: b.IsError})
			}
		}
		req.Messages = append(req.Messages, msg)
	}
	return req, nil
}

// anthropicBlocks reads content that is a string or a list of blocks.
func anthropicBlocks(raw json.RawMessage) ([]anthropicBlock, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []anthropicBlock{{Type: "text", Text: s}}, nil
	}
	var blocks []anthropicBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, fmt.Errorf("content is neither text nor blocks: %w", err)
	}
	return blocks, nil
}

func joinText(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return strings.Join([]string{a, b}, "\n")
}
