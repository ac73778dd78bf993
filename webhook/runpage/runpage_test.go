package runpage

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/jobs/runstore"
)

// writeLedger records events through the real ledger writer, as a run does.
func writeLedger(t *testing.T, events ...ledger.Payload) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := ledger.New(&buf, ledger.Options{})
	for _, e := range events {
		if _, err := w.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

const hostile = "<script>alert(1)</script><img src=x onerror=alert(2)>[click](javascript:alert(3))\x1b[31mred\x1b[0m\x1b]8;;https://evil.example\x07link\x1b]8;;\x07\u202etxt.exe\x00"

func hostileLedger(t *testing.T) []byte {
	return writeLedger(t,
		&ledger.RunStart{Model: "openai:m", Prompt: "Issue #7: " + hostile},
		&ledger.ModelTurn{Step: 1, Model: "openai:m", InputTokens: 1200, OutputTokens: 80, Text: "I will run the tests " + hostile,
			ToolCalls: []ledger.RequestedCall{{ID: "c1", Name: "run", Arguments: `{"command":"go test ./..."}`}}},
		&ledger.ToolCall{Step: 1, CallID: "c1", Tool: "run", Arguments: `{"command":"go test ./..."}`, Result: strings.Repeat("ok line\n", 400) + hostile},
		&ledger.Command{Step: 1, CallID: "c1", Tool: "run", CommandRecord: ledger.CommandRecord{Command: "go test ./...", ExitCode: 3, Duration: 2500 * time.Millisecond, Output: "FAIL " + hostile}},
	)
}

type fixture struct {
	store  *runstore.Store
	signer *Signer
	srv    *httptest.Server
	now    time.Time
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { rdb.Close() })
	f := &fixture{store: &runstore.Store{Redis: rdb}, now: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	s, err := NewSigner([]byte("-----BEGIN RSA PRIVATE KEY-----\nkey\n"), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	s.now = func() time.Time { return f.now }
	f.signer = s
	mux := http.NewServeMux()
	mux.Handle("GET /runs/{id}", &Handler{Store: f.store, Signer: s, Refresh: 7 * time.Second})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fixture) put(t *testing.T, r runstore.Record) {
	t.Helper()
	if _, err := f.store.Put(context.Background(), r); err != nil {
		t.Fatal(err)
	}
}

func fetch(t *testing.T, u string) (int, http.Header, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func TestSignedLinkShowsTheRun(t *testing.T) {
	f := newFixture(t)
	f.put(t, runstore.Record{ID: "run-1", Repo: "acme/app", Issue: 7, Done: true, Ledger: hostileLedger(t),
		Result: []byte(`{"outcome":"failed","reason":"a check that passed at baseline fails","steps":1,"usage":{"input_tokens":1200,"output_tokens":80,"cached_input_tokens":0},
			"checks":[{"name":"test","command":"go test ./...","phase":"baseline","ran":true,"exit_code":0,"passed":true,"duration_ms":1000},
			          {"name":"test","command":"go test ./...","phase":"final","ran":true,"exit_code":1,"passed":false,"duration_ms":2000}]}`),
		Body: []byte("## Summary\n" + hostile)})
	code, hdr, body := fetch(t, f.signer.Link(f.srv.URL+"/runs", "run-1"))
	if code != http.StatusOK {
		t.Fatalf("status %d\n%s", code, body)
	}
	for _, want := range []string{
		"acme/app#7, run run-1", "<strong>failed</strong>", "Model turn 1", "1200 in / 80 out tokens",
		"Tool run", "$ go test ./...", "exit 3, 2.5s",
		"<td>test</td><td><code>go test ./...</code></td><td>passed</td><td>failed (exit 1)</td><td>2s</td>",
		"<details><summary>401 lines</summary>", // the long tool result is folded
		"1 steps; 1200 input tokens (0 cached), 80 output tokens", "Pull-request body",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(body, `http-equiv="refresh"`) {
		t.Error("a finished run reloads itself")
	}
	if csp := hdr.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script-src") {
		t.Errorf("CSP %q", csp)
	}
	if hdr.Get("Referrer-Policy") != "no-referrer" {
		t.Error("the signed URL could leak through Referer")
	}
}

// TestHostileContentIsInert: issue text, model text and tool output with
// HTML, Markdown, ANSI escapes, OSC 8 hyperlinks, bidi overrides and NULs
// reach the page as plain text only.
func TestHostileContentIsInert(t *testing.T) {
	f := newFixture(t)
	f.put(t, runstore.Record{ID: "evil", Ledger: hostileLedger(t), Body: []byte(hostile)})
	code, _, body := fetch(t, f.signer.Link(f.srv.URL+"/runs", "evil"))
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	for _, bad := range []string{"<script", "<img", "onerror=alert(2)>", `href="javascript`, "<a ", "\x1b", "\u202e", "\x00", "\x07"} {
		if strings.Contains(body, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	if !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") || !strings.Contains(body, "[click](javascript:alert(3))red") {
		t.Error("the hostile text is not shown as text")
	}
	if n := strings.Count(body, "<pre>"); n < 4 {
		t.Errorf("%d preformatted blocks", n)
	}
}

func TestRunningRunReloads(t *testing.T) {
	f := newFixture(t)
	f.put(t, runstore.Record{ID: "live", Ledger: writeLedger(t, &ledger.RunStart{Model: "openai:m", Prompt: "fix it"})})
	_, _, body := fetch(t, f.signer.Link(f.srv.URL+"/runs", "live"))
	if !strings.Contains(body, `<meta http-equiv="refresh" content="7">`) || !strings.Contains(body, "<strong>running</strong>") {
		t.Fatalf("a running run's page:\n%s", body)
	}
}

func TestRefusedLinksShowNothing(t *testing.T) {
	f := newFixture(t)
	f.put(t, runstore.Record{ID: "run-1", Ledger: hostileLedger(t)})
	f.put(t, runstore.Record{ID: "run-2", Ledger: hostileLedger(t)})
	good, _ := url.Parse(f.signer.Link(f.srv.URL+"/runs", "run-1"))
	q := good.Query()

	other, err := NewSigner([]byte("another server's key"), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	other.now = f.signer.now
	cases := map[string]string{
		"unsigned":      f.srv.URL + "/runs/run-1",
		"no sig":        f.srv.URL + "/runs/run-1?exp=" + q.Get("exp"),
		"another run":   f.srv.URL + "/runs/run-2?" + q.Encode(),
		"bad sig":       f.srv.URL + "/runs/run-1?exp=" + q.Get("exp") + "&sig=" + strings.Repeat("0", 64),
		"later expiry":  f.srv.URL + "/runs/run-1?exp=" + q.Get("exp") + "0&sig=" + q.Get("sig"),
		"another key":   other.Link(f.srv.URL+"/runs", "run-1"),
		"missing run":   f.signer.Link(f.srv.URL+"/runs", "run-3"),
		"malformed sig": f.srv.URL + "/runs/run-1?exp=" + q.Get("exp") + "&sig=zz",
	}
	for name, u := range cases {
		code, _, body := fetch(t, u)
		if code != http.StatusNotFound || body != "not found\n" {
			t.Errorf("%s: status %d, body %.80q", name, code, body)
		}
	}
	// The good link works, until it expires.
	if code, _, _ := fetch(t, good.String()); code != http.StatusOK {
		t.Fatalf("good link: %d", code)
	}
	f.now = f.now.Add(time.Hour)
	if code, _, body := fetch(t, good.String()); code != http.StatusNotFound || body != "not found\n" {
		t.Fatalf("expired link: %d %q", code, body)
	}
}

type brokenStore struct{}

func (brokenStore) Get(context.Context, string) (runstore.Record, error) {
	return runstore.Record{}, errors.New("redis: connection refused")
}

func TestStoreDown(t *testing.T) {
	s, _ := NewSigner([]byte("k"), 0)
	h := &Handler{Store: brokenStore{}, Signer: s, Logger: slog.New(slog.DiscardHandler)}
	mux := http.NewServeMux()
	mux.Handle("GET /runs/{id}", h)
	u, _ := url.Parse(s.Link("", "r"))
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/runs/r?"+u.RawQuery, nil))
	if w.Code != http.StatusServiceUnavailable {
		t.Fatalf("status %d with Redis down, want 503", w.Code)
	}
}

func TestNewSignerNeedsASecret(t *testing.T) {
	if _, err := NewSigner(nil, 0); err == nil {
		t.Fatal("accepted an empty secret")
	}
}

func TestCleanKeepsText(t *testing.T) {
	in := "tab\there\nnewline é 日本 ✓"
	if got := clean(in); got != in {
		t.Fatalf("clean(%q) = %q", in, got)
	}
}

// TestPhasesTable: the run's phases.json (as jobs/pipeline writes it)
// becomes the phases table, with the time from the trigger to the pull
// request; a phases file that does not parse is said, not hidden, and a
// run without one shows no table.
func TestPhasesTable(t *testing.T) {
	f := newFixture(t)
	f.put(t, runstore.Record{ID: "timed", Done: true, Result: []byte(`{"outcome":"verified"}`),
		Phases: []byte(`{"run_id":"timed","enqueued_at":"2026-12-02T11:00:00Z","phases":[
			{"phase":"queued","duration_ms":412},{"phase":"clone","duration_ms":35},{"phase":"baseline","duration_ms":1520},
			{"phase":"<b>x</b>","duration_ms":1}],"total_ms":4321,"to_published_ms":4733}`)})
	f.put(t, runstore.Record{ID: "garbled", Done: true, Result: []byte(`{"outcome":"verified"}`), Phases: []byte(`{"phases":`)})
	f.put(t, runstore.Record{ID: "untimed", Done: true, Result: []byte(`{"outcome":"verified"}`)})

	_, _, body := fetch(t, f.signer.Link(f.srv.URL+"/runs", "timed"))
	for _, want := range []string{
		"<h2>Phases</h2>",
		"<tr><td>queued</td><td>412 ms</td></tr>",
		"<tr><td>clone</td><td>35 ms</td></tr>",
		"<tr><td>baseline</td><td>1.520 s</td></tr>",
		"<tr><td>&lt;b&gt;x&lt;/b&gt;</td><td>1 ms</td></tr>",
		"<tr><td>pipeline total</td><td>4.321 s</td></tr>",
		"<tr><td>trigger to pull request</td><td>4.733 s</td></tr>",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if i, j := strings.Index(body, ">queued<"), strings.Index(body, ">baseline<"); i < 0 || j < i {
		t.Error("the phases are not in the order they ran")
	}
	_, _, body = fetch(t, f.signer.Link(f.srv.URL+"/runs", "garbled"))
	if !strings.Contains(body, "phases.json could not be read") || strings.Contains(body, "<h2>Phases</h2>") {
		t.Error("a phases file that does not parse is not reported as such")
	}
	_, _, body = fetch(t, f.signer.Link(f.srv.URL+"/runs", "untimed"))
	if strings.Contains(body, "Phases") {
		t.Error("a run without phases.json shows a phases table")
	}
}
