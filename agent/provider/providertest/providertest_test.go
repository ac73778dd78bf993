package providertest_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/patchwright/patchwright/agent/provider"
	"github.com/patchwright/patchwright/agent/provider/providertest"
)

var readFile = provider.ToolDef{
	Name:        "read_file",
	Description: "Read a file",
	Schema:      []byte(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
}

func wires(srv *providertest.Server, t *testing.T) map[string]provider.Provider {
	return map[string]provider.Provider{"openai": srv.OpenAI(t), "anthropic": srv.Anthropic(t)}
}

// TestRoundTrip drives a two-turn conversation through each real SDK and
// checks what the model was shown on the second turn.
func TestRoundTrip(t *testing.T) {
	for _, wire := range []string{provider.NameOpenAI, provider.NameAnthropic} {
		t.Run(wire, func(t *testing.T) {
			srv := providertest.New(t,
				providertest.Turn{Text: "Let me look.", ToolCalls: []providertest.ToolCall{
					providertest.Call("read_file", `{"path":"go.mod"}`),
					providertest.Call("read_file", `{"path":"main.go"`), // not JSON: passed through
				}, Usage: provider.Usage{InputTokens: 1000, CachedInputTokens: 800, OutputTokens: 20}},
				providertest.Text("done"),
			)
			p := wires(srv, t)[wire]
			ctx := context.Background()
			req := provider.Request{System: "You fix bugs.", Tools: []provider.ToolDef{readFile},
				Messages: []provider.Message{{Role: provider.RoleUser, Text: "Fix issue 1"}}}

			resp, err := p.Complete(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StopReason != "tool_use" || resp.Message.Text != "Let me look." || len(resp.Message.ToolCalls) != 2 {
				t.Fatalf("first reply = %+v", resp)
			}
			if got := resp.Message.ToolCalls[1].Arguments; got != `{"path":"main.go"` {
				t.Errorf("raw arguments = %q", got)
			}
			want := provider.Usage{InputTokens: 1000, CachedInputTokens: 800, OutputTokens: 20}
			if resp.Usage != want {
				t.Errorf("usage = %+v, want %+v", resp.Usage, want)
			}

			calls := resp.Message.ToolCalls
			req.Messages = append(req.Messages, resp.Message, provider.Message{Role: provider.RoleUser,
				ToolResults: []provider.ToolResult{
					{CallID: calls[0].ID, Content: "module x"},
					{CallID: calls[1].ID, Content: "error: invalid_arguments", IsError: true},
				}})
			resp, err = p.Complete(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Text != "done" || resp.StopReason != "end_turn" {
				t.Fatalf("second reply = %+v", resp)
			}

			reqs := srv.Requests()
			if len(reqs) != 2 || srv.Remaining() != 0 {
				t.Fatalf("got %d requests, %d turns left", len(reqs), srv.Remaining())
			}
			second := reqs[1]
			if second.System != "You fix bugs." || len(second.Tools) != 1 || second.Tools[0] != "read_file" || !second.Stream {
				t.Errorf("second request = %+v", second)
			}
			if len(second.Messages) != 3 {
				t.Fatalf("second request has %d messages: %+v", len(second.Messages), second.Messages)
			}
			results := second.Messages[2].ToolResults
			if len(results) != 2 || results[0].CallID != calls[0].ID || results[0].Content != "module x" ||
				results[1].Content != "error: invalid_arguments" {
				t.Errorf("tool results seen by the model = %+v", results)
			}
			if got := second.Messages[1].ToolCalls; len(got) != 2 || got[0].ID != calls[0].ID || got[0].Name != "read_file" {
				t.Errorf("assistant tool calls echoed = %+v", got)
			}
		})
	}
}

func TestErrorTurnsAndWaits(t *testing.T) {
	for _, wire := range []string{provider.NameOpenAI, provider.NameAnthropic} {
		t.Run(wire, func(t *testing.T) {
			srv := providertest.New(t,
				providertest.Status(http.StatusTooManyRequests, "", "Retry-After", "3"),
				providertest.Hangup(),
				providertest.Text("ok"),
			)
			resp, err := wires(srv, t)[wire].Complete(context.Background(), provider.Request{
				Messages: []provider.Message{{Role: provider.RoleUser, Text: "hi"}}})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Text != "ok" {
				t.Errorf("text = %q", resp.Message.Text)
			}
			waits := srv.Waits()
			if len(waits) != 2 || waits[0] != 3*time.Second {
				t.Errorf("waits = %v, want [3s, backoff]", waits)
			}
		})
	}
}

func TestPermanentError(t *testing.T) {
	srv := providertest.New(t, providertest.Status(http.StatusUnauthorized, ""))
	_, err := srv.Anthropic(t).Complete(context.Background(), provider.Request{
		Messages: []provider.Message{{Role: provider.RoleUser, Text: "hi"}}})
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindPermanent || pe.StatusCode != 401 {
		t.Fatalf("err = %v", err)
	}
}

// cutProxy forwards TCP connections to the server at target (a URL) and
// cuts the first reply in the middle of its body: it passes the response
// headers and the first streamed event, then closes both connections, as
// a proxy or a network dropping a stream does. It returns its own URL.
func cutProxy(t *testing.T, target string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		first atomic.Bool
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn // closed at the end: the client keeps its connections alive
	)
	first.Store(true)
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	addr := strings.TrimPrefix(target, "http://")
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", addr)
			if err != nil {
				client.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, client, server)
			mu.Unlock()
			wg.Add(2)
			go func() { defer wg.Done(); _, _ = io.Copy(server, client) }()
			go func() {
				defer wg.Done()
				defer client.Close()
				defer server.Close()
				if first.CompareAndSwap(true, false) {
					_, _ = client.Write(headersAndFirstEvent(server))
					return
				}
				_, _ = io.Copy(client, server)
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// headersAndFirstEvent reads a response from r up to the end of its first
// server-sent event (or to the end of what r sends).
func headersAndFirstEvent(r io.Reader) []byte {
	var got []byte
	buf := make([]byte, 4096)
	for {
		if h := bytes.Index(got, []byte("\r\n\r\n")); h >= 0 {
			if e := bytes.Index(got[h+4:], []byte("\n\n")); e >= 0 {
				return got[:h+4+e+2]
			}
		}
		n, err := r.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			return got
		}
	}
}

// viaCutProxy is a provider for wire talking to srv through cutProxy.
func viaCutProxy(t *testing.T, srv *providertest.Server, wire string) provider.Provider {
	t.Helper()
	opts := srv.Options(wire)
	opts.BaseURL = strings.Replace(opts.BaseURL, srv.URL, cutProxy(t, srv.URL), 1)
	model := providertest.OpenAIModel
	if wire == provider.NameAnthropic {
		model = providertest.AnthropicModel
	}
	p, err := provider.New(wire+":"+model, opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCutReplyIsReplayed: a reply cut mid-stream is retried by the
// provider, and the retry gets the same turn (the same call IDs), not the
// next one; the conversation then goes on with the next turn, none skipped.
func TestCutReplyIsReplayed(t *testing.T) {
	for _, wire := range []string{provider.NameOpenAI, provider.NameAnthropic} {
		t.Run(wire, func(t *testing.T) {
			srv := providertest.New(t,
				providertest.Calls(providertest.Call("read_file", `{"path":"go.mod"}`)),
				providertest.Text("done"),
			)
			p := viaCutProxy(t, srv, wire)
			ctx := context.Background()
			req := provider.Request{Tools: []provider.ToolDef{readFile},
				Messages: []provider.Message{{Role: provider.RoleUser, Text: "Fix issue 1"}}}
			resp, err := p.Complete(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			calls := resp.Message.ToolCalls
			if len(calls) != 1 || calls[0].Name != "read_file" || calls[0].Arguments != `{"path":"go.mod"}` {
				t.Fatalf("the retry of the cut reply got %+v, want the first turn again", resp.Message)
			}
			if srv.Replays() != 1 || len(srv.Waits()) != 1 {
				t.Fatalf("%d replays after %d retries: the proxy did not cut the first reply, or it was not retried", srv.Replays(), len(srv.Waits()))
			}
			req.Messages = append(req.Messages, resp.Message, provider.Message{Role: provider.RoleUser,
				ToolResults: []provider.ToolResult{{CallID: calls[0].ID, Content: "module x"}}})
			resp, err = p.Complete(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Text != "done" {
				t.Errorf("second reply %+v, want the second turn", resp.Message)
			}
			if n := len(srv.Requests()); n != 2 || srv.Remaining() != 0 {
				t.Errorf("%d requests listed, %d turns left: want the conversation of 2, all turns used", n, srv.Remaining())
			}
			if got := srv.Requests()[1].Messages[1].ToolCalls; len(got) != 1 || got[0].ID != calls[0].ID {
				t.Errorf("the conversation went on from calls %+v, want %+v", got, calls)
			}
		})
	}
}

// TestRepeatAfterItWentOnTakesNextTurn: the same request again, once its
// conversation has gone on from the reply, is a new conversation (a second
// run of the same task), not a retry: it takes the next turn.
func TestRepeatAfterItWentOnTakesNextTurn(t *testing.T) {
	srv := providertest.New(t,
		providertest.Calls(providertest.Call("read_file", `{"path":"go.mod"}`)),
		providertest.Text("first run done"),
		providertest.Text("second run"),
	)
	p := srv.OpenAI(t)
	ctx := context.Background()
	open := provider.Request{Tools: []provider.ToolDef{readFile},
		Messages: []provider.Message{{Role: provider.RoleUser, Text: "Fix issue 1"}}}
	resp, err := p.Complete(ctx, open)
	if err != nil {
		t.Fatal(err)
	}
	next := open
	next.Messages = append(append([]provider.Message(nil), open.Messages...), resp.Message, provider.Message{Role: provider.RoleUser,
		ToolResults: []provider.ToolResult{{CallID: resp.Message.ToolCalls[0].ID, Content: "module x"}}})
	if _, err := p.Complete(ctx, next); err != nil {
		t.Fatal(err)
	}
	resp, err = p.Complete(ctx, open)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Text != "second run" || srv.Replays() != 0 || srv.Remaining() != 0 {
		t.Errorf("the opening request again got %+v (%d replays, %d turns left), want the third turn", resp.Message, srv.Replays(), srv.Remaining())
	}
}
