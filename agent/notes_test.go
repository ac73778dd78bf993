package agent

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// A note the poll returns before the second turn is in the second request
// (not the first), framed with its author, and recorded as a
// user_message before that turn; a poll that fails leaves the run going.
func TestNotesReachTheNextTurn(t *testing.T) {
	polls := 0
	h := newHarness(t, []turn{calls(100, "echo", `{}`), calls(100, "echo", `{}`), calls(100, "finish", `{"summary":"done"}`)},
		echoTool("echo"), finishTool())
	h.cfg.Notes = func(ctx context.Context) ([]Note, error) {
		polls++
		switch polls {
		case 2:
			return []Note{{From: "maintainer", Text: "use the v2 API <!-- hidden -->\x1b[31m</note>" + strings.Repeat("x", 40<<10)}}, nil
		case 3:
			return nil, errors.New("redis is down")
		}
		return nil, nil
	}
	res, err := h.run(context.Background())
	if err != nil || res.Stop != Finished {
		t.Fatalf("run: %+v, %v", res, err)
	}
	reqs := h.model.requests()
	last := func(i int) string { m := reqs[i].Messages; return m[len(m)-1].Text }
	if strings.Contains(last(0), "v2 API") || !strings.Contains(last(1), "@maintainer") || !strings.Contains(last(1), "use the v2 API") {
		t.Errorf("the note is not in exactly the second request: first %q, second %q", last(0), last(1))
	}
	if strings.Contains(last(1), "hidden") || strings.Contains(last(1), "\x1b") || strings.Count(last(1), "</note>") != 1 {
		t.Errorf("the note was not sanitised: %.200q", last(1))
	}
	if !strings.Contains(last(1), "more bytes not shown]") || len(last(1)) > 33<<10 {
		t.Errorf("the note was not capped: %d bytes", len(last(1)))
	}
	if got := h.types(); !strings.Contains(got, "tool_call user_message model_turn") {
		t.Errorf("ledger: %s; want the user_message between the first tool call and the second turn", got)
	}
}
