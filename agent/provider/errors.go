package provider

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/patchwright/patchwright/internal/text"
)

// Kind says what the caller should do about an *Error.
type Kind string

// Kinds of provider errors.
const (
	// KindTransient may succeed later: rate limits, 5xx, Anthropic 529
	// overloaded, dropped connections. Complete has already retried it.
	KindTransient Kind = "transient"
	// KindContextLength means the conversation no longer fits the model's
	// window: the loop can shorten it and try again.
	KindContextLength Kind = "context_length"
	// KindPermanent will fail the same way every time: bad or missing key,
	// no quota or credit, unknown model, invalid request.
	KindPermanent Kind = "permanent"
)

// Error is a failure reported by, or on the way to, a model's service.
type Error struct {
	Kind Kind
	// Provider is "openai" or "anthropic".
	Provider string
	// StatusCode is the HTTP status; zero when no response arrived.
	StatusCode int
	// Code is the service's machine-readable reason, such as
	// "insufficient_quota", "rate_limit_exceeded", "model_not_found",
	// "context_length_exceeded", "overloaded_error"; "connection_error"
	// when no response arrived.
	Code string
	// Reason is one line for people: what happened and what to do.
	Reason string
	// RetryAfter is the wait the service asked for, zero if it did not.
	RetryAfter time.Duration
	// Attempts is how many requests were sent before giving up.
	Attempts int
	// Err is the underlying SDK or network error.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Provider)
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, ": %d", e.StatusCode)
	}
	if e.Code != "" {
		fmt.Fprintf(&b, " %s", e.Code)
	}
	fmt.Fprintf(&b, ": %s", e.Reason)
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (after %d attempts)", e.Attempts)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// apiFailure is what both providers extract from an error response before
// classifying it.
type apiFailure struct {
	provider string
	keyVar   string // environment variable that holds the key
	status   int
	code     string // provider's code, or type when there is no code
	message  string
	header   http.Header
	err      error
}

// maxReasonLen keeps Reason to one readable line.
const maxReasonLen = 300

// classify turns an error response into an *Error. The order matters:
// a 429 can be permanent (insufficient_quota) and a 400 can be a context
// overflow, so codes and messages are checked before status codes.
func classify(f apiFailure) *Error {
	e := &Error{
		Provider:   f.provider,
		StatusCode: f.status,
		Code:       f.code,
		RetryAfter: retryAfter(f.header),
		Err:        f.err,
	}
	msg := oneLine(f.message)
	lower := strings.ToLower(f.message)
	switch {
	case f.code == "context_length_exceeded" || f.code == "request_too_large" ||
		strings.Contains(lower, "maximum context length") ||
		strings.Contains(lower, "prompt is too long") ||
		strings.Contains(lower, "exceed context limit"):
		e.Kind, e.Reason = KindContextLength, "the conversation is longer than the model's context window"
	case f.code == "insufficient_quota" || strings.Contains(lower, "credit balance is too low"):
		e.Kind, e.Reason = KindPermanent, "the account has no quota or credit left; check plan and billing"
	case f.status == http.StatusUnauthorized || f.code == "invalid_api_key" || f.code == "authentication_error":
		e.Kind, e.Reason = KindPermanent, "the API key was rejected; check "+f.keyVar
	case f.status == http.StatusForbidden || f.code == "permission_error":
		e.Kind, e.Reason = KindPermanent, "the API key is not allowed to do this"
	case f.status == http.StatusNotFound || f.code == "model_not_found" || f.code == "not_found_error":
		e.Kind, e.Reason = KindPermanent, "the model does not exist or this key cannot use it"
	case f.status == http.StatusTooManyRequests || f.code == "rate_limit_error":
		e.Kind, e.Reason = KindTransient, "rate limited"
	case f.status == 529 || f.code == "overloaded_error":
		e.Kind, e.Reason = KindTransient, "the service is overloaded"
	case f.status == http.StatusRequestTimeout || f.status == http.StatusConflict ||
		f.status >= 500 || f.code == "api_error" || f.code == "server_error":
		e.Kind, e.Reason = KindTransient, "the service failed"
	case f.status < 400:
		// An error event inside a 200 stream: the service broke off mid-answer.
		e.Kind, e.Reason = KindTransient, "the stream broke off"
	default:
		e.Kind, e.Reason = KindPermanent, "the request was refused"
	}
	if msg != "" {
		e.Reason += ": " + msg
	}
	return e
}

// connectionError wraps a failure where no response arrived.
func connectionError(provider string, err error) *Error {
	return &Error{
		Kind:     KindTransient,
		Provider: provider,
		Code:     "connection_error",
		Reason:   "no response from the service: " + oneLine(err.Error()),
		Err:      err,
	}
}

// oneLine squeezes a provider message into a single bounded line.
func oneLine(s string) string {
	s = text.Line(s)
	if len(s) > maxReasonLen {
		s = text.Head(s, maxReasonLen) + "…"
	}
	return s
}
