package provider

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

// DefaultAnthropicMaxTokens is the output cap sent when Request.MaxTokens
// is zero; the Messages API requires one.
const DefaultAnthropicMaxTokens = 8192

// anthropicProvider speaks the Messages API, streamed, through the
// official SDK, with prompt caching on the stable prefix.
type anthropicProvider struct {
	client anthropic.Client
	model  string
	retry  Retry
	log    *slog.Logger
}

func newAnthropic(model, key, base string, opts Options) *anthropicProvider {
	// Without environment defaults the SDK would otherwise also look for
	// profiles and federation settings; we resolve key and URL ourselves.
	ro := []option.RequestOption{option.WithoutEnvironmentDefaults(), option.WithMaxRetries(0)}
	if key != "" {
		ro = append(ro, option.WithAPIKey(key))
	}
	if base != "" {
		ro = append(ro, option.WithBaseURL(base))
	}
	if opts.HTTPClient != nil {
		ro = append(ro, option.WithHTTPClient(opts.HTTPClient))
	}
	return &anthropicProvider{
		client: anthropic.NewClient(ro...),
		model:  model,
		retry:  opts.Retry,
		log:    opts.logger(),
	}
}

func (p *anthropicProvider) Model() string { return NameAnthropic + ":" + p.model }

func (p *anthropicProvider) Complete(ctx context.Context, req Request) (*Response, error) {
	params, err := p.params(req)
	if err != nil {
		return nil, fmt.Errorf("anthropic: build request: %w", err)
	}
	return p.retry.do(ctx, p.log, func(ctx context.Context) (*Response, error) {
		return p.stream(ctx, params)
	})
}

func (p *anthropicProvider) stream(ctx context.Context, params anthropic.MessageNewParams) (*Response, error) {
	s := p.client.Messages.NewStreaming(ctx, params)
	defer s.Close()
	var msg anthropic.Message
	// The SDK's accumulator replaces tool input that is not valid JSON
	// with {}; the loop must see what the model really sent, so the raw
	// fragments are collected here too.
	rawInput := map[int64]*strings.Builder{}
	stopped := false
	for s.Next() {
		ev := s.Current()
		if err := msg.Accumulate(ev); err != nil {
			return nil, &Error{Kind: KindTransient, Provider: NameAnthropic, Code: "bad_stream",
				Reason: "the stream was malformed: " + oneLine(err.Error()), Err: err}
		}
		switch {
		case ev.Type == "content_block_delta" && ev.Delta.Type == "input_json_delta":
			b := rawInput[ev.Index]
			if b == nil {
				b = &strings.Builder{}
				rawInput[ev.Index] = b
			}
			b.WriteString(ev.Delta.PartialJSON)
		case ev.Type == "message_stop":
			stopped = true
		}
	}
	if err := s.Err(); err != nil {
		return nil, anthropicError(ctx, err)
	}
	if !stopped {
		// A connection cut after the headers ends the stream without error.
		return nil, &Error{Kind: KindTransient, Provider: NameAnthropic, Code: "stream_incomplete",
			Reason: "the stream ended before the model finished"}
	}
	return anthropicResponse(msg, rawInput), nil
}

func anthropicResponse(m anthropic.Message, rawInput map[int64]*strings.Builder) *Response {
	out := Message{Role: RoleAssistant}
	var text []string
	for i, b := range m.Content {
		switch b.Type {
		case "text":
			text = append(text, b.Text)
		case "tool_use":
			args := string(b.Input)
			if raw, ok := rawInput[int64(i)]; ok && raw.Len() > 0 {
				args = raw.String()
			}
			out.ToolCalls = append(out.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Arguments: args})
		}
	}
	out.Text = strings.Join(text, "\n")
	u := m.Usage
	return &Response{
		Message:    out,
		StopReason: string(m.StopReason), // already "end_turn", "tool_use", "max_tokens", …
		Usage: Usage{
			// Anthropic counts cache reads and writes apart from input_tokens;
			// our InputTokens includes them, as OpenAI's prompt_tokens does.
			InputTokens:       u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens,
			OutputTokens:      u.OutputTokens,
			CachedInputTokens: u.CacheReadInputTokens,
			CacheWriteTokens:  u.CacheCreationInputTokens,
		},
	}
}

// params builds the request with up to three cache breakpoints: the last
// tool (caches all tools), the system prompt (caches tools + system), and
// the last message (so each turn reads the previous turns from cache).
func (p *anthropicProvider) params(req Request) (anthropic.MessageNewParams, error) {
	maxTokens := int64(req.MaxTokens)
	if maxTokens <= 0 {
		maxTokens = DefaultAnthropicMaxTokens
	}
	params := anthropic.MessageNewParams{Model: anthropic.Model(p.model), MaxTokens: maxTokens}
	for _, t := range req.Tools {
		tool, err := anthropicTool(t)
		if err != nil {
			return params, err
		}
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: tool})
	}
	if n := len(params.Tools); n > 0 {
		params.Tools[n-1].OfTool.CacheControl = anthropic.NewCacheControlEphemeralParam()
	}
	if req.System != "" {
		params.System = []anthropic.TextBlockParam{{Text: req.System, CacheControl: anthropic.NewCacheControlEphemeralParam()}}
	}
	for i, m := range req.Messages {
		mp, err := anthropicMessage(m)
		if err != nil {
			return params, fmt.Errorf("message %d: %w", i, err)
		}
		params.Messages = append(params.Messages, mp)
	}
	if n := len(params.Messages); n > 0 {
		blocks := params.Messages[n-1].Content
		if cc := blocks[len(blocks)-1].GetCacheControl(); cc != nil {
			*cc = anthropic.NewCacheControlEphemeralParam()
		}
	}
	return params, nil
}

func anthropicTool(t ToolDef) (*anthropic.ToolParam, error) {
	schema, err := schemaObject(t)
	if err != nil {
		return nil, err
	}
	in := anthropic.ToolInputSchemaParam{Properties: schema["properties"], ExtraFields: map[string]any{}}
	if req, ok := schema["required"].([]any); ok {
		for _, r := range req {
			s, ok := r.(string)
			if !ok {
				return nil, fmt.Errorf("tool %q: schema's required list holds a non-string", t.Name)
			}
			in.Required = append(in.Required, s)
		}
	}
	for k, v := range schema {
		if k != "properties" && k != "required" && k != "type" {
			in.ExtraFields[k] = v
		}
	}
	tool := &anthropic.ToolParam{Name: t.Name, InputSchema: in}
	if t.Description != "" {
		tool.Description = anthropic.String(t.Description)
	}
	return tool, nil
}

func anthropicMessage(m Message) (anthropic.MessageParam, error) {
	if err := checkMessage(m); err != nil {
		return anthropic.MessageParam{}, err
	}
	var blocks []anthropic.ContentBlockParamUnion
	switch m.Role {
	case RoleUser:
		// Tool results come first: the API wants them right after the
		// assistant's tool_use blocks.
		for _, r := range m.ToolResults {
			blocks = append(blocks, anthropic.NewToolResultBlock(r.CallID, r.Content, r.IsError))
		}
		if m.Text != "" {
			blocks = append(blocks, anthropic.NewTextBlock(m.Text))
		}
		for _, im := range m.Images {
			blocks = append(blocks, anthropic.NewImageBlockBase64(im.MediaType, base64.StdEncoding.EncodeToString(im.Data)))
		}
		return anthropic.NewUserMessage(blocks...), nil
	case RoleAssistant:
		if m.Text != "" {
			blocks = append(blocks, anthropic.NewTextBlock(m.Text))
		}
		for _, c := range m.ToolCalls {
			blocks = append(blocks, anthropic.NewToolUseBlock(c.ID, toolInput(c.Arguments), c.Name))
		}
		return anthropic.NewAssistantMessage(blocks...), nil
	}
	return anthropic.MessageParam{}, fmt.Errorf("unknown role %q", m.Role)
}

// toolInput echoes a tool call's arguments back. The API requires an
// object; arguments that are not one (the loop answered them with an
// invalid_arguments error) are sent as {}.
func toolInput(args string) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &obj) != nil || obj == nil {
		return json.RawMessage(`{}`)
	}
	return json.RawMessage(args)
}

// anthropicError classifies an SDK error; a cancelled context stays itself.
func anthropicError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("anthropic: %w", ctx.Err())
	}
	var apiErr *anthropic.Error
	if errors.As(err, &apiErr) {
		var body struct {
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		_ = json.Unmarshal([]byte(apiErr.RawJSON()), &body) // a non-JSON body leaves the fields empty
		f := apiFailure{provider: NameAnthropic, keyVar: EnvAnthropicKey, status: apiErr.StatusCode,
			code: body.Error.Type, message: body.Error.Message, err: err}
		if f.message == "" && !json.Valid([]byte(apiErr.RawJSON())) {
			f.message = apiErr.RawJSON()
		}
		if apiErr.Response != nil {
			f.header = apiErr.Response.Header
		}
		return classify(f)
	}
	return connectionError(NameAnthropic, err)
}
