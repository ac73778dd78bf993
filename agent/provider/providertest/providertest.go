// Package providertest is a scripted model server for tests. It speaks
// the OpenAI Chat Completions and the Anthropic Messages wire formats,
// streamed or not, so the real SDK clients run against it. It replays a
// list of turns and records every request it received.
//
// A retried request gets the reply it was first given: a request whose
// body is the same as one already answered with a message turn, before the
// conversation went on from that reply, is answered with that turn again
// instead of taking the next one. So a reply cut on its way to the client
// (a proxy, a dropped connection) and retried by the provider costs no
// scripted turn. Error and hangup turns are never replayed: a retry after
// them takes the next turn, as scripted.
//
//	srv := providertest.New(t,
//		providertest.Calls(providertest.Call("read_file", `{"path":"go.mod"}`)),
//		providertest.Text("done"),
//	)
//	p := srv.OpenAI(t) // or srv.Anthropic(t)
//	... run the loop with p ...
//	reqs := srv.Requests() // reqs[1].Messages holds the tool result
package providertest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/patchwright/patchwright/agent/provider"
)

// Models the providers built by Server.OpenAI and Server.Anthropic ask for.
const (
	OpenAIModel    = "gpt-4.1"
	AnthropicModel = "claude-sonnet-4-5"
)

// Turn is one scripted reply: a message (Text and/or ToolCalls), or,
// when Status is set, an error response, or, with Hangup, a dropped
// connection.
type Turn struct {
	Text      string
	ToolCalls []ToolCall
	// StopReason is "end_turn", "tool_use" or "max_tokens", written in each
	// wire's own words; empty means "tool_use" when there are tool calls and
	// "end_turn" otherwise.
	StopReason string
	// Usage is reported as is; InputTokens includes the cached ones, as in
	// provider.Usage.
	Usage provider.Usage

	// Status, when non-zero, answers with this HTTP status and Body (a
	// generic error body in the wire's format when empty) and Header (e.g.
	// Retry-After).
	Status int
	Body   string
	Header http.Header

	// Hangup closes the connection without answering.
	Hangup bool
}

// ToolCall is a scripted tool call. Args is sent exactly as given, even
// when it is not JSON. An empty ID is filled in ("call_N" or "toolu_N").
type ToolCall struct {
	ID   string
	Name string
	Args string
}

// Text is a turn answering with text only.
func Text(s string) Turn { return Turn{Text: s} }

// Call is a tool call with raw argument text.
func Call(name, args string) ToolCall { return ToolCall{Name: name, Args: args} }

// Calls is a turn asking for one or more tool calls in parallel.
func Calls(calls ...ToolCall) Turn { return Turn{ToolCalls: calls} }

// Status is a turn answering with an HTTP error; body "" means a generic
// body for the status. headers are name, value pairs.
func Status(code int, body string, headers ...string) Turn {
	h := http.Header{}
	for i := 0; i+1 < len(headers); i += 2 {
		h.Set(headers[i], headers[i+1])
	}
	return Turn{Status: code, Body: body, Header: h}
}

// Hangup is a turn that drops the connection.
func Hangup() Turn { return Turn{Hangup: true} }

// Request is one request the server received, decoded.
type Request struct {
	Wire      string // provider.NameOpenAI or provider.NameAnthropic
	Path      string
	Header    http.Header
	Body      []byte // raw JSON as sent
	Model     string
	Stream    bool
	MaxTokens int
	System    string
	Tools     []string // names, in order
	// Messages are decoded back into the provider's types, so a test can
	// look for a tool result or an error text the model was shown.
	Messages []provider.Message
}

// Server is the scripted model server.
type Server struct {
	URL string

	t        testing.TB
	mu       sync.Mutex
	turns    []Turn
	next     int
	requests []Request
	waits    []time.Duration
	ids      int
	// unconfirmed holds, by requestKey, the message turns whose replies
	// the client has not yet shown it received (no later request went on
	// from them): a repeat of one of those requests is a retry.
	unconfirmed map[string]answered
	replays     int
}

// answered is a message turn as it was sent (call IDs filled in) and the
// conversation of the request it answered.
type answered struct {
	turn     Turn
	messages []provider.Message
}

// New starts a server that replays turns in order, one per request,
// whichever wire format the request uses. It closes when the test ends.
// A request after the last turn fails the test and gets a 400.
func New(t testing.TB, turns ...Turn) *Server {
	t.Helper()
	s := &Server{t: t, turns: turns, unconfirmed: map[string]answered{}}
	hs := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(hs.Close)
	s.URL = hs.URL
	return s
}

// Add appends turns to the script.
func (s *Server) Add(turns ...Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.turns = append(s.turns, turns...)
}

// Requests returns a copy of the requests received so far, in order. A
// retry answered by replaying its turn is not listed again (Replays counts
// those): the list is the conversation the script saw.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Replays is how many retried requests were answered with the turn their
// first attempt had been given.
func (s *Server) Replays() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.replays
}

// Remaining is how many scripted turns have not been served.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.turns) - s.next
}

// Waits returns the backoff waits providers built by this server asked
// for between retries (they do not really sleep).
func (s *Server) Waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

// Fallback is a fallback of two models for a test: first's server on
// the Anthropic wire, then second's on the OpenAI wire, each with one
// retry, so a failing first model gives way quickly.
func Fallback(t testing.TB, first, second *Server) provider.Provider {
	t.Helper()
	a, b := first.Options(provider.NameAnthropic), second.Options(provider.NameOpenAI)
	a.Retry.MaxRetries, b.Retry.MaxRetries = 1, 1
	pa, err := provider.New(provider.NameAnthropic+":"+AnthropicModel, a)
	if err != nil {
		t.Fatal(err)
	}
	pb, err := provider.New(provider.NameOpenAI+":"+OpenAIModel, b)
	if err != nil {
		t.Fatal(err)
	}
	f, err := provider.NewFallback(pa, pb)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// Options returns provider options pointed at this server for a wire
// (provider.NameOpenAI or provider.NameAnthropic), with a test key and a
// retry sleep that records the wait and returns at once.
func (s *Server) Options(wire string) provider.Options {
	base := s.URL
	if wire == provider.NameOpenAI {
		base += "/v1"
	}
	return provider.Options{
		APIKey:  "test-key",
		BaseURL: base,
		Getenv:  func(string) string { return "" },
		Logger:  slog.New(slog.DiscardHandler),
		Retry: provider.Retry{Sleep: func(ctx context.Context, d time.Duration) error {
			s.mu.Lock()
			s.waits = append(s.waits, d)
			s.mu.Unlock()
			return ctx.Err()
		}},
	}
}

// OpenAI returns an "openai:gpt-4.1" provider talking to this server.
func (s *Server) OpenAI(t testing.TB) provider.Provider {
	t.Helper()
	return s.provider(t, provider.NameOpenAI+":"+OpenAIModel, provider.NameOpenAI)
}

// Anthropic returns an "anthropic:claude-sonnet-4-5" provider talking to
// this server.
func (s *Server) Anthropic(t testing.TB) provider.Provider {
	t.Helper()
	return s.provider(t, provider.NameAnthropic+":"+AnthropicModel, provider.NameAnthropic)
}

func (s *Server) provider(t testing.TB, spec, wire string) provider.Provider {
	t.Helper()
	p, err := provider.New(spec, s.Options(wire))
	if err != nil {
		t.Fatalf("providertest: %v", err)
	}
	return p
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	wire, req, body, ok := readRequest(s.t, w, r)
	if !ok {
		return
	}

	s.mu.Lock()
	s.confirm(req.Messages)
	key := requestKey(req.Path, body)
	if a, ok := s.unconfirmed[key]; ok {
		s.replays++
		s.mu.Unlock()
		s.t.Logf("providertest: %s: a retry of a request whose reply did not arrive: its turn is sent again", r.URL.Path)
		s.write(w, wire, req, a.turn)
		return
	}
	s.requests = append(s.requests, req)
	if s.next >= len(s.turns) {
		n := len(s.turns)
		s.mu.Unlock()
		s.t.Errorf("providertest: request %d arrived but the script has only %d turns", len(s.Requests()), n)
		writeError(w, wire, Turn{Status: http.StatusBadRequest,
			Body: errorBody(wire, http.StatusBadRequest, fmt.Sprintf("providertest: script exhausted after %d turns", n))})
		return
	}
	turn := s.turns[s.next]
	s.next++
	turn.ToolCalls = s.fillIDs(wire, turn.ToolCalls)
	if !turn.Hangup && turn.Status == 0 {
		s.unconfirmed[key] = answered{turn: turn, messages: req.Messages}
	}
	s.mu.Unlock()
	s.write(w, wire, req, turn)
}

// readRequest reads and decodes a request of either wire; on a bad one it
// has answered it (and failed the test when the client is at fault).
func readRequest(t testing.TB, w http.ResponseWriter, r *http.Request) (string, Request, []byte, bool) {
	var wire string
	switch r.URL.Path {
	case "/v1/chat/completions", "/chat/completions":
		wire = provider.NameOpenAI
	case "/v1/messages":
		wire = provider.NameAnthropic
	default:
		t.Errorf("providertest: unexpected request %s %s", r.Method, r.URL.Path)
		http.Error(w, "providertest: no such endpoint", http.StatusNotFound)
		return "", Request{}, nil, false
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "read body", http.StatusBadRequest)
		return "", Request{}, nil, false
	}
	req, err := decodeRequest(wire, body)
	if err != nil {
		t.Errorf("providertest: %s request does not decode: %v\n%s", wire, err, body)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return "", Request{}, nil, false
	}
	req.Path, req.Header = r.URL.Path, r.Header.Clone()
	return wire, req, body, true
}

// requestKey names a request by its path and exact body: a retry sends
// the same bytes.
func requestKey(path string, body []byte) string {
	sum := sha256.Sum256(body)
	return path + " " + hex.EncodeToString(sum[:])
}

// confirm forgets the replies that a request shows were received: those
// whose conversation it continues (its messages begin with theirs and go
// on). Called with s.mu held.
func (s *Server) confirm(messages []provider.Message) {
	for key, a := range s.unconfirmed {
		if len(messages) > len(a.messages) && reflect.DeepEqual(messages[:len(a.messages)], a.messages) {
			delete(s.unconfirmed, key)
		}
	}
}

// write sends turn as the answer to req.
func (s *Server) write(w http.ResponseWriter, wire string, req Request, turn Turn) {
	switch {
	case turn.Hangup:
		hangup(w)
	case turn.Status != 0:
		writeError(w, wire, turn)
	case wire == provider.NameOpenAI:
		writeOpenAI(w, req, turn)
	default:
		writeAnthropic(w, req, turn)
	}
}

// fillIDs gives unnamed calls unique IDs; called with s.mu held.
func (s *Server) fillIDs(wire string, calls []ToolCall) []ToolCall {
	out := append([]ToolCall(nil), calls...)
	prefix := "call_"
	if wire == provider.NameAnthropic {
		prefix = "toolu_"
	}
	for i := range out {
		if out[i].ID == "" {
			s.ids++
			out[i].ID = fmt.Sprintf("%s%d", prefix, s.ids)
		}
	}
	return out
}

func hangup(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("providertest: the server cannot hijack connections")
	}
	conn, _, err := hj.Hijack()
	if err == nil {
		_ = conn.Close()
	}
}

func writeError(w http.ResponseWriter, wire string, turn Turn) {
	for k, vs := range turn.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	body := turn.Body
	if body == "" {
		body = errorBody(wire, turn.Status, http.StatusText(turn.Status))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(turn.Status)
	_, _ = io.WriteString(w, body)
}

// errorBody is a generic error in each wire's envelope.
func errorBody(wire string, status int, message string) string {
	var v any
	if wire == provider.NameOpenAI {
		typ := map[int]string{400: "invalid_request_error", 401: "invalid_request_error", 404: "invalid_request_error", 429: "requests"}[status]
		code := map[int]string{401: "invalid_api_key", 404: "model_not_found", 429: "rate_limit_exceeded"}[status]
		if typ == "" {
			typ = "server_error"
		}
		v = map[string]any{"error": map[string]any{"message": message, "type": typ, "param": nil, "code": nilIfEmpty(code)}}
	} else {
		typ := map[int]string{400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
			404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error", 529: "overloaded_error"}[status]
		if typ == "" {
			typ = "api_error"
		}
		v = map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": message}}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
