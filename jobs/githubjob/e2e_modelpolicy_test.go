package githubjob_test

import (
	"net/http"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/patchwright/patchwright/agent/config"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// TestModelOutsidePolicyEndToEnd: an organisation's policy entry whose
// models: leave out the worker's model refuses the labelled issue before
// anything is cloned or the model asked: the status comment says which
// model and which policy, nothing is retried and no pull request opens.
func TestModelOutsidePolicyEndToEnd(t *testing.T) {
	sandboxtest.EndToEnd(t)
	e := newE2E(t) // no scripted turn: the model must not be asked
	e.pipe.Policy = &config.PolicyFile{Organizations: map[string]config.Policy{"codertocat": {Models: []string{"anthropic:*"}}}}
	e.startWorker()
	if code := e.label(1, "delivery-model-policy"); code != http.StatusAccepted {
		t.Fatalf("label: %d, want 202", code)
	}
	info := e.waitTask("delivery-model-policy", asynq.TaskStateCompleted, asynq.TaskStateArchived)
	if info.Retried != 0 {
		t.Errorf("the refused job was retried %d times", info.Retried)
	}
	// The body escapes the glob's star for Markdown.
	e.waitComment(1, `could not finish this issue: the model openai:gpt-4.1 is not allowed by the operator's policy (organization codertocat), whose models are anthropic:\*; only the operator can change that, so nothing ran.`)
	if n := len(e.model.Requests()); n != 0 {
		t.Errorf("the model was asked %d times", n)
	}
	if pulls := e.fake.Pulls(owner, repoName); len(pulls) != 0 {
		t.Errorf("pull requests %+v, want none", pulls)
	}
}
