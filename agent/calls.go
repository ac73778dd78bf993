package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/agent/provider"
	"github.com/patchwright/patchwright/agent/tools"
	"github.com/patchwright/patchwright/internal/logkey"
)

// hostPathsOut replaces the workspace's host directory in s by a
// placeholder.
func (r *runner) hostPathsOut(s string) string {
	if ws := r.cfg.Workspace; ws != nil && ws.Dir() != "" {
		s = strings.ReplaceAll(s, ws.Dir(), "<workspace>")
	}
	return s
}

// runCalls runs the turn's tool calls in order and appends their results.
func (r *runner) runCalls(ctx context.Context, calls []provider.ToolCall) *stop {
	results := make([]provider.ToolResult, 0, len(calls))
	var end *stop
	for _, c := range calls {
		r.callNames[c.ID] = c.Name
		if end == nil {
			end = interruptStop(ctx)
		}
		if end != nil {
			// The run is ending; the call is answered so the conversation
			// stays well-formed, and recorded as not run.
			text := "not run: the run ended before this call"
			results = append(results, provider.ToolResult{CallID: c.ID, Content: text, IsError: true})
			rec := &ledger.ToolCall{Step: r.steps, CallID: r.withhold(ctx, "call id", c.ID), Tool: r.withhold(ctx, "tool name", c.Name), Arguments: r.withholdArgs(ctx, c.Arguments), Result: text}
			if _, err := r.cfg.Ledger.Append(rec); err != nil {
				return r.failure(ctx, Infrastructure, fmt.Errorf("write ledger: %w", err))
			}
			continue
		}
		out, s := r.callTool(ctx, c)
		if s != nil {
			return s
		}
		results = append(results, provider.ToolResult{CallID: c.ID, Content: out.text, IsError: out.isError})
		switch {
		case out.finish != nil:
			r.summary = r.withhold(ctx, "finish summary", out.finish.Summary)
			end = &stop{Finished, "the model called finish", nil}
		case r.repeat.observe(c.Name, c.Arguments, out.text):
			end = &stop{RepeatedCalls, "the model kept repeating itself: " + r.repeat.description, nil}
		}
	}
	r.req.Messages = append(r.req.Messages, provider.Message{Role: provider.RoleUser, ToolResults: results})
	return end
}

// callOutcome is what the model sees of one call.
type callOutcome struct {
	text    string
	isError bool
	finish  *tools.FinishRecord
}

// callTool runs one call. Mistakes the model can fix, a tool that does
// not exist and a tool that panics become error results; a tool's Go
// error ends the run.
func (r *runner) callTool(ctx context.Context, c provider.ToolCall) (callOutcome, *stop) {
	if ctx.Err() != nil {
		return callOutcome{}, contextStop(ctx)
	}
	rec := &ledger.ToolCall{Step: r.steps, CallID: r.withhold(ctx, "call id", c.ID), Tool: r.withhold(ctx, "tool name", c.Name), Arguments: r.withholdArgs(ctx, c.Arguments)}
	start := r.now()
	res, cut, err := r.dispatch(ctx, c, rec)
	rec.Duration = r.now().Sub(start)
	for _, cmd := range res.Commands {
		// The output was scanned by the tool; the command is the model's.
		cmd.Command = r.withhold(ctx, "command", cmd.Command)
		if _, lerr := r.cfg.Ledger.Append(&ledger.Command{Step: r.steps, CallID: rec.CallID, Tool: rec.Tool, CommandRecord: cmd}); lerr != nil {
			return callOutcome{}, r.failure(ctx, Infrastructure, fmt.Errorf("write ledger: %w", lerr))
		}
	}
	if err != nil {
		rec.Failure = err.Error()
	}
	// The tools scanned their output; what a result repeats of the call
	// (a tool name, a path) is the model's, and scanned here, so that the
	// record and what the model saw are one text. Stripped first (the
	// repository's output is data, and may hide words in escapes), so
	// the scan reads what the model will: removing invisible characters
	// can join a split secret.
	out := callOutcome{text: r.withhold(ctx, "tool result", cutMiddle(Strip(res.Text), r.lim.MaxToolOutput)), finish: res.Finish}
	out.isError = isErrorResult(res, rec.Panic)
	rec.Result, rec.ResultBytes, rec.ErrorCode, rec.Changed = out.text, len(res.Text), res.Code, r.withholdPaths(ctx, res.Changed)
	for _, p := range res.Changed {
		r.changed[p] = true
	}
	for _, f := range res.Secrets {
		r.log.Warn("tool output withheld: it holds what looks like a secret", logkey.Step, r.steps, logkey.Tool, rec.Tool, "rule", f.Rule, "where", f.Where)
	}
	r.log.Debug("tool call", logkey.Step, r.steps, logkey.Tool, rec.Tool, "code", rec.ErrorCode, "duration", rec.Duration)
	if _, lerr := r.cfg.Ledger.Append(rec); lerr != nil {
		return callOutcome{}, r.failure(ctx, Infrastructure, fmt.Errorf("write ledger: %w", lerr))
	}
	if err != nil {
		return callOutcome{}, r.failure(ctx, Infrastructure, fmt.Errorf("tool %s (call %s): %w", c.Name, c.ID, err))
	}
	if cut {
		return callOutcome{}, interruptStop(ctx)
	}
	return out, nil
}

// dispatch runs the call's tool, or answers a call to a tool that does not
// exist or with arguments that are not a JSON object. It sets rec.Panic
// when the tool crashed; cut says an interrupt ended the call.
func (r *runner) dispatch(ctx context.Context, c provider.ToolCall, rec *ledger.ToolCall) (res tools.Result, cut bool, err error) {
	t, ok := r.byName[c.Name]
	switch args, bad := checkArgs(c.Arguments); {
	case !ok:
		res = tools.Result{Code: tools.NotFound, Text: fmt.Sprintf("error: %s: there is no tool named %q; the tools are: %s", tools.NotFound, c.Name, strings.Join(r.names, ", "))}
	case bad != "":
		res = tools.Result{Code: tools.InvalidArguments, Text: fmt.Sprintf("error: %s: %s; send one JSON object that matches the %s tool's schema", tools.InvalidArguments, bad, c.Name)}
	default:
		tctx, ended := cutOnInterrupt(ctx)
		res, rec.Panic, err = safeCall(tctx, t, args)
		// A call that succeeded finished on its own, even if the interrupt
		// came as it returned: its result stands, and the turn's later
		// calls are the ones answered "not run".
		if cut = ended() && (err != nil || isErrorResult(res, rec.Panic)); cut {
			// What it ran and changed stays on record; its end is ours.
			res.Text, res.Code, rec.Panic, err = cutText, "", "", nil
		}
		if rec.Panic != "" {
			res = tools.Result{Text: fmt.Sprintf("error: internal: the %s tool crashed on this call (a bug in Patchwright, not in your call); try another way to reach your goal", c.Name)}
		}
	}
	return res, cut, err
}

// isErrorResult reports whether a call's result tells the model it
// failed: an error code, a crash, or text the tool began "error:".
func isErrorResult(res tools.Result, panicked string) bool {
	return res.Code != "" || panicked != "" || strings.HasPrefix(res.Text, "error:")
}

// checkArgs accepts one JSON object; an empty string counts as no
// arguments, which some models send for tools without parameters.
func checkArgs(raw string) (args []byte, problem string) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return []byte("{}"), ""
	}
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return nil, "the arguments are not valid JSON (" + err.Error() + ")"
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, "the arguments must be a JSON object"
	}
	return []byte(s), ""
}

// safeCall runs a tool and turns a panic into a value the ledger records,
// so one broken tool cannot take the worker down.
func safeCall(ctx context.Context, t tools.Tool, args []byte) (res tools.Result, panicked string, err error) {
	defer func() {
		if p := recover(); p != nil {
			panicked = capText(fmt.Sprintf("%v\n%s", p, debug.Stack()), 4096)
			res, err = tools.Result{}, nil
		}
	}()
	res, err = t.Call(ctx, args)
	return res, "", err
}
