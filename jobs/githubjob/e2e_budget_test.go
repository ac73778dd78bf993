package githubjob_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/patchwright/patchwright/agent/provider"
	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/jobs/budget"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// A run whose first turn costs $1 (by the operator's price table) under a
// $0.50 cap stops between steps: no second model request, the partial
// work is pushed as a draft that says budget_exceeded, and the status
// comment shows the cost from the same table. The $1 counts against the
// repository's monthly cap of $0.75, so the next job is refused with a
// comment before any clone or model call.
func TestCostCapAndMonthlyBudget(t *testing.T) {
	sandboxtest.EndToEnd(t)
	first := call("write_file", `{"path":"NOTES.md","content":"Half done.\n"}`)
	first.Usage = provider.Usage{InputTokens: 1_000_000, OutputTokens: 10}
	e := newE2E(t, first, call("finish", `{"summary":"never reached"}`))
	e.pipe.Executor.Prices = provider.Prices{"openai:" + pt.OpenAIModel: {Input: 1}}
	e.pipe.Executor.MaxRunCostUSD = 0.5
	e.pipe.Budget = &budget.Store{Redis: e.rdb, Caps: budget.Caps{Repository: 0.75}}
	e.startWorker()

	if code := e.label(1, "delivery-budget-1"); code != http.StatusAccepted {
		t.Fatalf("label: %d, want 202", code)
	}
	if info := e.waitTask("delivery-budget-1", asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted {
		t.Fatalf("task ended %s: %s", info.State, info.LastErr)
	}
	if n := len(e.model.Requests()); n != 1 {
		t.Errorf("%d model requests, want 1: the cap is checked before the next", n)
	}
	pulls := e.fake.Pulls(owner, repoName)
	if len(pulls) != 1 || !pulls[0].Draft {
		t.Fatalf("pull requests %+v, want one draft with the partial work", pulls)
	}
	for _, want := range []string{"**Outcome: stopped**", `budget\_exceeded`, "$0.50", "`NOTES.md`", "about $1.00"} {
		if !strings.Contains(pulls[0].Body, want) {
			t.Errorf("body lacks %q:\n%s", want, pulls[0].Body)
		}
	}
	if st := e.statusComments(1); len(st) != 1 || !strings.Contains(st[0].Body, "Model cost: about $1.00") {
		t.Errorf("status comment %+v: want the cost from the operator's table", st)
	}

	if code := e.label(2, "delivery-budget-2"); code != http.StatusAccepted {
		t.Fatalf("label 2: %d, want 202", code)
	}
	if info := e.waitTask("delivery-budget-2", asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateArchived || info.Retried != 0 {
		t.Fatalf("refused task ended %s after %d retries: %s", info.State, info.Retried, info.LastErr)
	}
	st := e.statusComments(2)
	if len(st) != 1 || !strings.Contains(st[0].Body, "monthly model budget of $0.75 is spent") || !strings.Contains(st[0].Body, "resets on") {
		t.Fatalf("status comment on the refused issue: %+v", st)
	}
	if n := len(e.model.Requests()); n != 1 {
		t.Errorf("%d model requests after the refusal, want still 1", n)
	}
}
