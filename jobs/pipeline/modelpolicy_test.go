package pipeline

import (
	"context"
	"errors"
	"testing"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/config"
	"github.com/patchwright/patchwright/agent/provider"
)

// named is a provider that is never called, by its model's name; with
// more than one name it is a fallback list (provider.Models).
type named []string

func (n named) Model() string    { return n[0] }
func (n named) Models() []string { return n }
func (named) Complete(context.Context, provider.Request) (*provider.Response, error) {
	return nil, errors.New("not called")
}

// TestModelOutsidePolicyRefused: a job whose policy's models do not
// allow one of the models the executor may call is refused before
// anything is cloned (a run and a plan alike), naming the model and the
// policy; an allowed set goes on to the clone.
func TestModelOutsidePolicyRefused(t *testing.T) {
	policy := config.Policy{Models: []string{"openai:*"}}
	cases := map[string]struct {
		model, summary, review provider.Provider
		refused                string
	}{
		"allowed":              {model: named{"openai:gpt-4.1"}, review: named{"openai:gpt-4.1-mini"}},
		"model":                {model: named{"anthropic:claude-sonnet-4-5"}, refused: "anthropic:claude-sonnet-4-5"},
		"fallback":             {model: named{"openai:gpt-4.1", "anthropic:claude-opus-4-1"}, refused: "anthropic:claude-opus-4-1"},
		"summary":              {model: named{"openai:gpt-4.1"}, summary: named{"anthropic:claude-haiku-4-5"}, refused: "anthropic:claude-haiku-4-5"},
		"review":               {model: named{"openai:gpt-4.1"}, review: named{"anthropic:claude-opus-4-1"}, refused: "anthropic:claude-opus-4-1"},
		"a replay calls none":  {model: replayed{named{"replay:ledger.jsonl"}}},
		"no policy allows any": {model: named{"anthropic:claude-sonnet-4-5"}, refused: ""},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			e := &Executor{Sandboxes: refusingRunner{t}, Provider: c.model, SummaryProvider: c.summary, ReviewProvider: c.review, WorkDir: t.TempDir()}
			job := Job{ID: "policy", RepoURL: "/nonexistent", Issue: agent.Issue{Title: "x"}, OutDir: t.TempDir(), Publisher: LocalPublisher{},
				Policy: policy, PolicyName: "installation 7"}
			if name == "no policy allows any" {
				job.Policy, job.PolicyName = config.Policy{}, ""
			}
			_, err := e.Execute(context.Background(), job)
			_, perr := e.Plan(context.Background(), job)
			for what, err := range map[string]error{"run": err, "plan": perr} {
				if c.refused == "" {
					// Past the check, the clone of a path that does not exist fails.
					if err == nil || errors.Is(err, ErrPolicy) {
						t.Errorf("%s: err = %v, want the clone's failure", what, err)
					}
					continue
				}
				want := "the model " + c.refused + " is not allowed by the operator's policy (installation 7), whose models are openai:*"
				if !errors.Is(err, ErrPolicy) || !errors.Is(err, ErrConfig) || err.Error() != want {
					t.Errorf("%s: err = %v, want ErrPolicy saying %q", what, err, want)
				}
			}
		})
	}
}

// replayed replays a transcript: it calls no model (provider.ReplayedFrom).
type replayed struct{ named }

func (replayed) Transcript() string { return "ledger.jsonl" }
