// Package provider talks to language models through their official SDKs,
// behind one small interface the agent loop uses.
package provider

import (
	"context"
	"encoding/json"

	"github.com/patchwright/patchwright/agent/ledger"
)

// Provider sends one conversation turn to a model.
type Provider interface {
	// Complete returns the model's next message. Transient failures are
	// retried inside; the error returned is final and, when it comes from
	// the model's service, an *Error saying whether to give up.
	Complete(ctx context.Context, req Request) (*Response, error)
	// Model is the "provider:name" the provider was built for.
	Model() string
}

// Request is one turn. System and Tools form the stable prefix that
// providers may cache; they must not change between turns of a run.
type Request struct {
	System    string
	Tools     []ToolDef
	Messages  []Message
	MaxTokens int // output cap; zero means the provider's default
}

// ToolDef describes a tool to the model.
type ToolDef struct {
	Name        string
	Description string
	// Schema is a JSON Schema object for the tool's parameters.
	Schema json.RawMessage
}

// Role is who wrote a message.
type Role string

// Roles of a conversation. Tool results travel in a RoleUser message.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Message is one message of the conversation.
type Message struct {
	Role        Role
	Text        string
	ToolCalls   []ToolCall   // assistant only
	ToolResults []ToolResult // user only
	// Images follow Text, user only. Only a model the price table marks
	// as reading images (Prices.ReadsImages) may be sent any.
	Images []Image
}

// Image is a picture sent to the model. The caller has re-encoded it
// (agent/images), so Data holds pixels in a standard format and nothing
// else.
type Image struct {
	// MediaType is "image/png" (what agent/images produces), or
	// "image/jpeg", "image/gif" or "image/webp".
	MediaType string
	Data      []byte
}

// ToolCall is a model's request to run a tool.
type ToolCall struct {
	ID   string
	Name string
	// Arguments is exactly what the model sent; it may not be valid JSON.
	Arguments string
}

// ToolResult answers one ToolCall.
type ToolResult struct {
	CallID  string
	Content string
	IsError bool
}

// Response is the model's message and what it cost.
type Response struct {
	Message Message
	// StopReason is normalised: "end_turn", "tool_use", "max_tokens" or
	// the provider's own word for anything else.
	StopReason string
	Usage      Usage
	// FellBack says, one line each, which models of a Fallback failed
	// before this one answered; nil when none did.
	FellBack []string
}

// Usage counts tokens of one call. InputTokens includes cached ones. It is
// the ledger's type, so a count is never copied field by field.
type Usage = ledger.Usage
