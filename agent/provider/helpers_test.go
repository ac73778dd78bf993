package provider_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/patchwright/patchwright/agent/provider"
	"github.com/patchwright/patchwright/jobs/githubtest"
)

// fixture reads a file of testdata/fixtures/llm.
func fixture(t *testing.T, name string) string {
	return string(githubtest.Fixture(t, "llm", name))
}

// reply is one canned HTTP answer.
type reply struct {
	status int
	header map[string]string
	body   string
	hangup bool
}

func sseReply(body string) reply {
	return reply{status: 200, header: map[string]string{"Content-Type": "text/event-stream"}, body: body}
}

func jsonReply(status int, body string, header ...string) reply {
	h := map[string]string{"Content-Type": "application/json"}
	for i := 0; i+1 < len(header); i += 2 {
		h[header[i]] = header[i+1]
	}
	return reply{status: status, header: h, body: body}
}

// wireServer answers requests with canned replies, in order, and keeps
// what it received.
type wireServer struct {
	*httptest.Server
	mu      sync.Mutex
	replies []reply
	bodies  [][]byte
	headers []http.Header
	t       *testing.T
}

func newWireServer(t *testing.T, replies ...reply) *wireServer {
	s := &wireServer{replies: replies, t: t}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.bodies = append(s.bodies, body)
		s.headers = append(s.headers, r.Header.Clone())
		n := len(s.bodies)
		s.mu.Unlock()
		if n > len(s.replies) {
			t.Errorf("request %d: only %d replies scripted", n, len(s.replies))
			http.Error(w, "no more replies", http.StatusTeapot)
			return
		}
		rep := s.replies[n-1]
		if rep.hangup {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		for k, v := range rep.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(rep.status)
		io.WriteString(w, rep.body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *wireServer) requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.bodies)
}

// header returns the headers of request i (0-based).
func (s *wireServer) header(i int) http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.headers[i]
}

// body decodes request i (0-based) as generic JSON.
func (s *wireServer) body(i int) map[string]any {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var m map[string]any
	if err := json.Unmarshal(s.bodies[i], &m); err != nil {
		s.t.Fatalf("request %d is not JSON: %v", i, err)
	}
	return m
}

// newProvider builds a provider against srv with a recorded sleep.
func newProvider(t *testing.T, spec string, srv *wireServer, sl *githubtest.Sleeps) provider.Provider {
	t.Helper()
	base := srv.URL
	if strings.HasPrefix(spec, "openai:") {
		base += "/v1"
	}
	p, err := provider.New(spec, provider.Options{
		APIKey:  "sk-test",
		BaseURL: base,
		Getenv:  func(string) string { return "" },
		Retry:   provider.Retry{MaxRetries: 3, Sleep: sl.Sleep},
		Logger:  slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func userTurn(text string) provider.Request {
	return provider.Request{Messages: []provider.Message{{Role: provider.RoleUser, Text: text}}}
}

// jsonEqual compares two JSON values semantically.
func jsonEqual(t *testing.T, got, want any) bool {
	t.Helper()
	norm := func(v any) any {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var out any
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	return reflect.DeepEqual(norm(got), norm(want))
}

func mustJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// dropEvents removes the events of an SSE body that contain substr.
func dropEvents(sse, substr string) string {
	var kept []string
	for _, ev := range strings.Split(sse, "\n\n") {
		if !strings.Contains(ev, substr) {
			kept = append(kept, ev)
		}
	}
	return strings.Join(kept, "\n\n")
}

// sseFixture reads an SSE fixture and ends it with the blank line that
// dispatches the last event. The stored Anthropic stream lacks it (its
// source kept lines, not the final separator); per the SSE rules a client
// discards an event cut off at end of stream, and the real API sends it.
func sseFixture(t *testing.T, name string) string {
	t.Helper()
	s := fixture(t, name)
	return strings.TrimRight(s, "\n") + "\n\n"
}
