package provider_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent/provider"
	pt "github.com/patchwright/patchwright/agent/provider/providertest"
)

var req = provider.Request{System: "s", Messages: []provider.Message{{Role: provider.RoleUser, Text: "hi"}}}

// An overloaded first provider, after its own retries, hands the request
// to the second; the run stays there, and the answer says what happened.
func TestFallbackOnOverload(t *testing.T) {
	over := pt.New(t, pt.Status(529, ""), pt.Status(529, ""))
	next := pt.New(t, pt.Text("from the second"), pt.Text("again"))
	f := pt.Fallback(t, over, next)
	resp, err := f.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Text != "from the second" || f.Model() != "openai:"+pt.OpenAIModel {
		t.Fatalf("answer %q from %s", resp.Message.Text, f.Model())
	}
	if len(resp.FellBack) != 1 || !strings.Contains(resp.FellBack[0], "anthropic:"+pt.AnthropicModel+" failed") || !strings.Contains(resp.FellBack[0], "continued on openai:"+pt.OpenAIModel) {
		t.Errorf("fell back %q", resp.FellBack)
	}
	if over.Remaining() != 0 || len(over.Requests()) != 2 {
		t.Errorf("first provider: %d requests, %d turns left; want its retries spent", len(over.Requests()), over.Remaining())
	}
	more := req
	more.Messages = append(append([]provider.Message(nil), req.Messages...), provider.Message{Role: provider.RoleAssistant, Text: "from the second"}, provider.Message{Role: provider.RoleUser, Text: "go on"})
	resp, err = f.Complete(context.Background(), more)
	if err != nil || resp.Message.Text != "again" || len(resp.FellBack) != 0 {
		t.Errorf("second turn: %+v, %v; want it on the second provider, no new fallback", resp, err)
	}
}

// A permanent failure (a rejected key) is not an outage: no fallback.
func TestNoFallbackOnPermanentError(t *testing.T) {
	bad := pt.New(t, pt.Status(401, ""))
	next := pt.New(t, pt.Text("never"))
	f := pt.Fallback(t, bad, next)
	_, err := f.Complete(context.Background(), req)
	var perr *provider.Error
	if !errors.As(err, &perr) || perr.Kind != provider.KindPermanent {
		t.Fatalf("err %v, want the permanent error", err)
	}
	if len(next.Requests()) != 0 || f.Model() != "anthropic:"+pt.AnthropicModel {
		t.Errorf("fell back on a permanent error")
	}
}

// A comma list builds a fallback; a replay cannot be in one.
func TestNewModelList(t *testing.T) {
	opts := provider.Options{APIKey: "k", Getenv: env()}
	p, err := provider.New("openai:gpt-4.1, anthropic:claude-sonnet-4-5", opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.(*provider.Fallback); !ok || p.Model() != "openai:gpt-4.1" {
		t.Errorf("list gave %T %s", p, p.Model())
	}
	// The operator's policy checks every model of the list, not only the
	// current one.
	if got := provider.Models(p); !slices.Equal(got, []string{"openai:gpt-4.1", "anthropic:claude-sonnet-4-5"}) {
		t.Errorf("Models(list) = %q", got)
	}
	one, err := provider.New("openai:gpt-4.1", opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := provider.Models(one); !slices.Equal(got, []string{"openai:gpt-4.1"}) {
		t.Errorf("Models(one) = %q", got)
	}
	for _, bad := range []string{"openai:gpt-4.1,replay:ledger.jsonl", "openai:gpt-4.1,", "openai:gpt-4.1,nope"} {
		if _, err := provider.New(bad, opts); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
