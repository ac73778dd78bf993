package providertest_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/patchwright/patchwright/agent/provider"
	"github.com/patchwright/patchwright/agent/provider/providertest"
)

// routerProvider is a real SDK client of wire on r.
func routerProvider(t *testing.T, r *providertest.Router, wire string) provider.Provider {
	t.Helper()
	spec, base := provider.NameAnthropic+":"+providertest.AnthropicModel, r.URL
	if wire == provider.NameOpenAI {
		spec, base = provider.NameOpenAI+":"+providertest.OpenAIModel, r.URL+"/v1"
	}
	p, err := provider.New(spec, provider.Options{APIKey: "k", BaseURL: base,
		Getenv: func(string) string { return "" }, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// byIssue routes on "issue N" in the first user message.
func byIssue(req providertest.Request) string {
	text := providertest.FirstUser(req)
	if i := strings.Index(text, "issue "); i >= 0 {
		return text[i:]
	}
	return ""
}

// converse runs a conversation to its end, answering every tool call, and
// returns the texts and calls the model sent, in order.
func converse(t *testing.T, p provider.Provider, issue string) []string {
	req := provider.Request{Tools: []provider.ToolDef{readFile},
		Messages: []provider.Message{{Role: provider.RoleUser, Text: "Fix " + issue}}}
	var got []string
	for range 10 {
		resp, err := p.Complete(context.Background(), req)
		if err != nil {
			t.Error(err)
			return got
		}
		got = append(got, resp.Message.Text)
		if len(resp.Message.ToolCalls) == 0 {
			return got
		}
		res := provider.Message{Role: provider.RoleUser}
		for _, c := range resp.Message.ToolCalls {
			got = append(got, c.Name+" "+c.Arguments)
			res.ToolResults = append(res.ToolResults, provider.ToolResult{CallID: c.ID, Content: "ok"})
		}
		req.Messages = append(req.Messages, resp.Message, res)
	}
	t.Error("conversation did not end")
	return got
}

// TestRouterKeepsConcurrentConversationsApart runs eight conversations at
// once over both wires: each must get its own script, in order.
func TestRouterKeepsConcurrentConversationsApart(t *testing.T) {
	scripts := map[string][]providertest.Turn{}
	want := map[string][]string{}
	for i := range 8 {
		name := fmt.Sprintf("issue %d", i)
		path := fmt.Sprintf(`{"path":"f%d"}`, i)
		scripts[name] = []providertest.Turn{
			{Text: "look " + name, ToolCalls: []providertest.ToolCall{providertest.Call("read_file", path)}},
			{Text: "again " + name, ToolCalls: []providertest.ToolCall{providertest.Call("read_file", path)}},
			providertest.Text("done " + name),
		}
		want[name] = []string{"look " + name, "read_file " + path, "again " + name, "read_file " + path, "done " + name}
	}
	r := providertest.NewRouter(t, providertest.RouterConfig{Route: byIssue, Scripts: scripts})
	var wg sync.WaitGroup
	got := make([][]string, 8)
	for i := range 8 {
		wire := provider.NameOpenAI
		if i%2 == 1 {
			wire = provider.NameAnthropic
		}
		p := routerProvider(t, r, wire)
		wg.Go(func() { got[i] = converse(t, p, fmt.Sprintf("issue %d", i)) })
	}
	wg.Wait()
	for i := range 8 {
		name := fmt.Sprintf("issue %d", i)
		if fmt.Sprint(got[i]) != fmt.Sprint(want[name]) {
			t.Errorf("%s got %q, want %q", name, got[i], want[name])
		}
		if n := r.Served(name); n != 3 {
			t.Errorf("%s: %d turns served, want 3", name, n)
		}
		if n := len(r.Requests(name)); n != 3 {
			t.Errorf("%s: %d requests, want 3", name, n)
		}
	}
}

// TestRouterRepeatGetsSameTurn sends a conversation again from the start,
// as a job run again after its worker died: the same turns, the same call
// IDs, and nothing served past the script.
func TestRouterRepeatGetsSameTurn(t *testing.T) {
	r := providertest.NewRouter(t, providertest.RouterConfig{Route: byIssue, Scripts: map[string][]providertest.Turn{
		"issue 1": {providertest.Calls(providertest.Call("read_file", `{}`)), providertest.Text("done")},
	}})
	p := routerProvider(t, r, provider.NameOpenAI)
	req := provider.Request{Messages: []provider.Message{{Role: provider.RoleUser, Text: "Fix issue 1"}}}
	a, err := p.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Message.ToolCalls) != 1 || len(b.Message.ToolCalls) != 1 || a.Message.ToolCalls[0].ID != b.Message.ToolCalls[0].ID {
		t.Fatalf("first and repeated reply differ: %+v / %+v", a.Message, b.Message)
	}
	if r.Served("issue 1") != 1 || len(r.Requests("issue 1")) != 2 {
		t.Errorf("served %d turns over %d requests, want 1 over 2", r.Served("issue 1"), len(r.Requests("issue 1")))
	}
}

// recordTB keeps a test's failures instead of failing it.
type recordTB struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recordTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recordTB) Fatalf(format string, args ...any) { r.Errorf(format, args...) }
func (r *recordTB) Fatal(args ...any)                 { r.Errorf("%s", fmt.Sprint(args...)) }
func (r *recordTB) failures() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.errs, "; ")
}

// TestRouterRefusesWhatItCannotServe: an unknown conversation, a turn past
// the script's end, and a script with an error turn each fail the test
// with a message saying so (the clients get a 400).
func TestRouterRefusesWhatItCannotServe(t *testing.T) {
	rec := &recordTB{TB: t}
	r := providertest.NewRouter(rec, providertest.RouterConfig{Route: byIssue, Scripts: map[string][]providertest.Turn{
		"issue 1": {providertest.Calls(providertest.Call("read_file", `{}`))},
	}})
	p := routerProvider(t, r, provider.NameAnthropic)
	if _, err := p.Complete(context.Background(), provider.Request{Messages: []provider.Message{{Role: provider.RoleUser, Text: "Fix issue 9"}}}); err == nil {
		t.Error("unknown conversation answered")
	}
	if f := rec.failures(); !strings.Contains(f, `no script for conversation "issue 9"`) {
		t.Errorf("failures = %q", f)
	}
	long := provider.Request{Messages: []provider.Message{{Role: provider.RoleUser, Text: "Fix issue 1"},
		{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "c", Name: "read_file", Arguments: "{}"}}},
		{Role: provider.RoleUser, ToolResults: []provider.ToolResult{{CallID: "c", Content: "x"}}}}}
	if _, err := p.Complete(context.Background(), long); err == nil {
		t.Error("a turn past the script answered")
	}
	if f := rec.failures(); !strings.Contains(f, `conversation "issue 1" asks for turn 2 of a script of 1`) {
		t.Errorf("failures = %q", f)
	}

	rec = &recordTB{TB: t}
	if providertest.NewRouter(rec, providertest.RouterConfig{Route: byIssue, Scripts: map[string][]providertest.Turn{
		"issue 1": {providertest.Status(500, "")},
	}}) != nil || !strings.Contains(rec.failures(), "serves message turns only") {
		t.Errorf("a script with an error turn: failures %q", rec.failures())
	}
}
