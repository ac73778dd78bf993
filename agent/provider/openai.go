package provider

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"
)

// openAIProvider speaks Chat Completions, streamed, through the official
// SDK. It also serves OpenAI-compatible servers (vLLM, Ollama, LiteLLM).
type openAIProvider struct {
	client openai.Client
	model  string
	retry  Retry
	log    *slog.Logger
}

func newOpenAI(model, key, base string, opts Options) *openAIProvider {
	ro := []option.RequestOption{option.WithAPIKey(key), option.WithMaxRetries(0)}
	if base != "" {
		ro = append(ro, option.WithBaseURL(base))
	}
	if opts.HTTPClient != nil {
		ro = append(ro, option.WithHTTPClient(opts.HTTPClient))
	}
	return &openAIProvider{
		client: openai.NewClient(ro...),
		model:  model,
		retry:  opts.Retry,
		log:    opts.logger(),
	}
}

func (p *openAIProvider) Model() string { return NameOpenAI + ":" + p.model }

func (p *openAIProvider) Complete(ctx context.Context, req Request) (*Response, error) {
	params, err := p.params(req)
	if err != nil {
		return nil, fmt.Errorf("openai: build request: %w", err)
	}
	return p.retry.do(ctx, p.log, func(ctx context.Context) (*Response, error) {
		return p.stream(ctx, params)
	})
}

// stream sends one request and assembles the streamed chunks. Streaming
// keeps long generations from hitting idle timeouts between the client
// and the server.
func (p *openAIProvider) stream(ctx context.Context, params openai.ChatCompletionNewParams) (*Response, error) {
	s := p.client.Chat.Completions.NewStreaming(ctx, params)
	defer s.Close()
	var acc openai.ChatCompletionAccumulator
	// The accumulator drops prompt_tokens_details.cache_write_tokens, so
	// usage is read from the usage chunk itself.
	var usage *openai.CompletionUsage
	for s.Next() {
		chunk := s.Current()
		if chunk.JSON.Usage.Valid() {
			usage = &chunk.Usage
		}
		if !acc.AddChunk(chunk) {
			return nil, &Error{Kind: KindTransient, Provider: NameOpenAI, Code: "bad_stream",
				Reason: "the stream sent a chunk that does not fit the ones before it"}
		}
	}
	if err := s.Err(); err != nil {
		return nil, openAIError(ctx, err)
	}
	if len(acc.Choices) == 0 || acc.Choices[0].FinishReason == "" {
		// A connection cut after the headers ends the stream without error.
		return nil, &Error{Kind: KindTransient, Provider: NameOpenAI, Code: "stream_incomplete",
			Reason: "the stream ended before the model finished"}
	}
	if usage != nil {
		acc.Usage = *usage
	}
	return openAIResponse(acc.ChatCompletion), nil
}

func openAIResponse(c openai.ChatCompletion) *Response {
	choice := c.Choices[0]
	msg := Message{Role: RoleAssistant, Text: choice.Message.Content}
	if msg.Text == "" {
		msg.Text = choice.Message.Refusal
	}
	for _, tc := range choice.Message.ToolCalls {
		msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	return &Response{
		Message:    msg,
		StopReason: openAIStopReason(choice.FinishReason),
		Usage: Usage{
			InputTokens:       c.Usage.PromptTokens,
			OutputTokens:      c.Usage.CompletionTokens,
			CachedInputTokens: c.Usage.PromptTokensDetails.CachedTokens,
			CacheWriteTokens:  c.Usage.PromptTokensDetails.CacheWriteTokens,
		},
	}
}

func openAIStopReason(r string) string {
	switch r {
	case "stop":
		return "end_turn"
	case "tool_calls", "function_call":
		return "tool_use"
	case "length":
		return "max_tokens"
	}
	return r
}

func (p *openAIProvider) params(req Request) (openai.ChatCompletionNewParams, error) {
	params := openai.ChatCompletionNewParams{
		Model:         shared.ChatModel(p.model),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	if req.MaxTokens > 0 {
		params.MaxCompletionTokens = openai.Int(int64(req.MaxTokens))
	}
	for _, t := range req.Tools {
		schema, err := schemaObject(t)
		if err != nil {
			return params, err
		}
		fn := shared.FunctionDefinitionParam{Name: t.Name, Parameters: schema}
		if t.Description != "" {
			fn.Description = openai.String(t.Description)
		}
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(fn))
	}
	if req.System != "" {
		params.Messages = append(params.Messages, openai.SystemMessage(req.System))
	}
	for i, m := range req.Messages {
		msgs, err := openAIMessages(m)
		if err != nil {
			return params, fmt.Errorf("message %d: %w", i, err)
		}
		params.Messages = append(params.Messages, msgs...)
	}
	return params, nil
}

// openAIMessages maps one message; a user message with tool results
// becomes one "tool" message per result, followed by its text if any.
func openAIMessages(m Message) ([]openai.ChatCompletionMessageParamUnion, error) {
	if err := checkMessage(m); err != nil {
		return nil, err
	}
	switch m.Role {
	case RoleUser:
		var out []openai.ChatCompletionMessageParamUnion
		for _, r := range m.ToolResults {
			out = append(out, openai.ToolMessage(r.Content, r.CallID))
		}
		switch {
		case len(m.Images) > 0:
			out = append(out, openai.UserMessage(openAIParts(m)))
		case m.Text != "":
			out = append(out, openai.UserMessage(m.Text))
		}
		return out, nil
	case RoleAssistant:
		a := openai.ChatCompletionAssistantMessageParam{}
		if m.Text != "" {
			a.Content.OfString = openai.String(m.Text)
		}
		for _, c := range m.ToolCalls {
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID:       c.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: c.Arguments},
				},
			})
		}
		return []openai.ChatCompletionMessageParamUnion{{OfAssistant: &a}}, nil
	}
	return nil, fmt.Errorf("unknown role %q", m.Role)
}

// openAIParts is a user message's text and images as content parts,
// each image a data URL.
func openAIParts(m Message) []openai.ChatCompletionContentPartUnionParam {
	var parts []openai.ChatCompletionContentPartUnionParam
	if m.Text != "" {
		parts = append(parts, openai.TextContentPart(m.Text))
	}
	for _, im := range m.Images {
		url := "data:" + im.MediaType + ";base64," + base64.StdEncoding.EncodeToString(im.Data)
		parts = append(parts, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: url}))
	}
	return parts
}

// checkMessage rejects what neither API accepts: empty messages and
// tool traffic on the wrong side.
func checkMessage(m Message) error {
	switch {
	case m.Role == RoleUser && len(m.ToolCalls) > 0:
		return errors.New("a user message cannot carry tool calls")
	case m.Role == RoleAssistant && len(m.ToolResults) > 0:
		return errors.New("an assistant message cannot carry tool results")
	case m.Role == RoleAssistant && len(m.Images) > 0:
		return errors.New("an assistant message cannot carry images")
	case m.Text == "" && len(m.ToolCalls) == 0 && len(m.ToolResults) == 0 && len(m.Images) == 0:
		return errors.New("the message is empty")
	}
	for i, im := range m.Images {
		switch {
		case !slices.Contains(imageTypes, im.MediaType):
			return fmt.Errorf("image %d: media type %q is not one of %s", i, im.MediaType, strings.Join(imageTypes, ", "))
		case len(im.Data) == 0:
			return fmt.Errorf("image %d is empty", i)
		}
	}
	return nil
}

// imageTypes are the media types both APIs accept.
var imageTypes = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}

// schemaObject decodes a tool's schema; an empty one means no parameters.
func schemaObject(t ToolDef) (map[string]any, error) {
	if t.Name == "" {
		return nil, errors.New("a tool has no name")
	}
	if len(t.Schema) == 0 {
		return map[string]any{"type": "object", "properties": map[string]any{}}, nil
	}
	var m map[string]any
	if err := json.Unmarshal(t.Schema, &m); err != nil || m == nil {
		return nil, fmt.Errorf("tool %q: schema is not a JSON object", t.Name)
	}
	return m, nil
}

// openAIError classifies an SDK error; a cancelled context stays itself.
func openAIError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("openai: %w", ctx.Err())
	}
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		f := apiFailure{provider: NameOpenAI, keyVar: EnvOpenAIKey, status: apiErr.StatusCode,
			code: firstNonEmpty(apiErr.Code, apiErr.Type), message: apiErr.Message, err: err}
		if apiErr.Response != nil {
			f.header = apiErr.Response.Header
		}
		return classify(f)
	}
	var streamErr *ssestream.StreamError
	if errors.As(err, &streamErr) {
		return classify(openAIStreamFailure(streamErr))
	}
	return connectionError(NameOpenAI, err)
}

// openAIStreamFailure reads an error event sent inside a 200 stream:
// {"error": {"message", "type", "code"}}. Compatible servers (vLLM) send
// a numeric code, so code is read as raw JSON.
func openAIStreamFailure(se *ssestream.StreamError) apiFailure {
	var ev struct {
		Error struct {
			Message string          `json:"message"`
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(se.Event.Data, &ev) // unreadable: classified as a broken stream
	code := strings.Trim(string(ev.Error.Code), `"`)
	if code == "null" {
		code = ""
	}
	return apiFailure{provider: NameOpenAI, keyVar: EnvOpenAIKey, status: http.StatusOK,
		code: firstNonEmpty(code, ev.Error.Type), message: ev.Error.Message, err: se}
}
