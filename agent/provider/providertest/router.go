package providertest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/patchwright/patchwright/agent/provider"
)

// Router is a scripted model server for many conversations at once, as
// several workers hold them: Server hands out turns in one order, so two
// conversations in flight would take each other's. Router picks the script
// by the conversation (Route, from the request: an issue's title in the
// first user message, say) and the turn by how many assistant messages the
// request already carries. So each conversation gets its own script in its
// own order whatever runs beside it, and a request sent again (a retry, or
// a job run again from the start after its worker died) gets the same turn
// it got before.
//
// Its turns are message turns only: an error or hangup turn would be
// answered to every retry of that request, forever.
type Router struct {
	URL string

	t       testing.TB
	route   func(Request) string
	scripts map[string][]Turn
	latency time.Duration

	mu       sync.Mutex
	requests map[string][]Request
	hwm      map[string]int // by script: the highest turn served, plus one
}

// RouterConfig configures NewRouter.
type RouterConfig struct {
	// Route names the script a request belongs to; "" or a name not in
	// Scripts fails the test and answers 400.
	Route func(Request) string
	// Scripts are the conversations' turns, by name.
	Scripts map[string][]Turn
	// Latency is how long each reply waits before it is sent, as a real
	// model's time to answer; the wait ends early when the client goes.
	Latency time.Duration
}

// NewRouter starts a Router; it closes when the test ends. It fails the
// test at once on a script with an error or hangup turn.
func NewRouter(t testing.TB, cfg RouterConfig) *Router {
	t.Helper()
	if cfg.Route == nil {
		t.Fatal("providertest: NewRouter without Route")
		return nil
	}
	for name, turns := range cfg.Scripts {
		for i, turn := range turns {
			if turn.Status != 0 || turn.Hangup {
				t.Fatalf("providertest: script %q turn %d: a Router serves message turns only", name, i)
				return nil
			}
		}
	}
	r := &Router{t: t, route: cfg.Route, scripts: cfg.Scripts, latency: cfg.Latency,
		requests: map[string][]Request{}, hwm: map[string]int{}}
	hs := httptest.NewServer(r)
	t.Cleanup(hs.Close)
	r.URL = hs.URL
	return r
}

// ServeHTTP answers one request; a test may mount the Router behind its
// own handler (one that marks which client sent what, or holds a request).
func (r *Router) ServeHTTP(w http.ResponseWriter, hr *http.Request) {
	wire, req, _, ok := readRequest(r.t, w, hr)
	if !ok {
		return
	}
	name := r.route(req)
	turns, known := r.scripts[name]
	n := assistantTurns(req.Messages)
	r.mu.Lock()
	r.requests[name] = append(r.requests[name], req)
	if known && n < len(turns) {
		r.hwm[name] = max(r.hwm[name], n+1)
	}
	r.mu.Unlock()
	var msg string
	switch {
	case !known:
		msg = fmt.Sprintf("providertest: no script for conversation %q", name)
	case n >= len(turns):
		msg = fmt.Sprintf("providertest: conversation %q asks for turn %d of a script of %d", name, n+1, len(turns))
	}
	if msg != "" {
		r.t.Errorf("%s", msg)
		writeError(w, wire, Turn{Status: http.StatusBadRequest, Body: errorBody(wire, http.StatusBadRequest, msg)})
		return
	}
	if r.latency > 0 {
		select {
		case <-time.After(r.latency):
		case <-hr.Context().Done():
			return
		}
	}
	writeTurn(w, wire, req, withCallIDs(turns[n], wire, name, n))
}

// withCallIDs is turn n of script name with its calls named after the
// script and the turn, so that a retry sees the same IDs.
func withCallIDs(turn Turn, wire, name string, n int) Turn {
	turn.ToolCalls = append([]ToolCall(nil), turn.ToolCalls...)
	prefix := "call_"
	if wire == provider.NameAnthropic {
		prefix = "toolu_"
	}
	for i := range turn.ToolCalls {
		if turn.ToolCalls[i].ID == "" {
			turn.ToolCalls[i].ID = fmt.Sprintf("%s%x_%d_%d", prefix, fnv32(name), n, i)
		}
	}
	return turn
}

// writeTurn sends turn in the wire format of wire.
func writeTurn(w http.ResponseWriter, wire string, req Request, turn Turn) {
	if wire == provider.NameOpenAI {
		writeOpenAI(w, req, turn)
	} else {
		writeAnthropic(w, req, turn)
	}
}

// Requests returns the requests of one conversation so far, in order,
// retries included.
func (r *Router) Requests(name string) []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Request(nil), r.requests[name]...)
}

// Served is how far a conversation got: the number of its script's turns
// that were served at least once.
func (r *Router) Served(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.hwm[name]
}

// assistantTurns counts the model's replies a conversation holds.
func assistantTurns(ms []provider.Message) int {
	n := 0
	for _, m := range ms {
		if m.Role == provider.RoleAssistant {
			n++
		}
	}
	return n
}

// FirstUser is the text of a request's first user message ("" for none),
// where a conversation says what it is about.
func FirstUser(req Request) string {
	for _, m := range req.Messages {
		if m.Role == provider.RoleUser {
			return m.Text
		}
	}
	return ""
}

// fnv32 is FNV-1a: a short stable tag of a script's name for call IDs.
func fnv32(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}
