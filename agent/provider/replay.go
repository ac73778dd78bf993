package provider

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/internal/text"
)

// NameReplay is the provider of "replay:FILE": no model, the model turns
// recorded in the ledger FILE answered in order.
const NameReplay = "replay"

// Replay answers the loop's requests with the model turns of a recorded
// run (a ledger.jsonl), so a run goes through the real tools, sandbox and
// checks without calling a model. Before it answers turn N it compares
// what the loop sends back for turn N-1 with the recording: the tool
// results must be the recorded ones (for run and verify, the exit codes
// and check verdicts; their output holds timings). Any difference, and a
// request past the last recorded turn, is a permanent *Error naming the
// turn, so a transcript that no longer applies stops the run instead of
// replaying into a wrong success.
//
// Replay keeps no state between calls: the turn to answer is the number
// of assistant messages in the request. One Replay can serve several runs
// at once.
type Replay struct {
	file  string
	turns []replayTurn
}

// replayTurn is one recorded model turn and the results its calls got.
type replayTurn struct {
	turn    ledger.ModelTurn
	results map[string]ledger.ToolCall // by call ID
}

// NewReplay reads the ledger at file. It needs at least one model turn
// that succeeded; failed turns (a refused or cut request) are skipped, as
// the loop moved on without their answer.
func NewReplay(file string) (*Replay, error) {
	if strings.TrimSpace(file) == "" {
		return nil, errors.New("replay: want replay:FILE, the ledger.jsonl of a recorded run")
	}
	log, err := ledger.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	p := &Replay{file: filepath.Clean(file)}
	for _, rec := range log.Records {
		switch rec.Type {
		case ledger.TypeModelTurn:
			var t ledger.ModelTurn
			if err := rec.Decode(&t); err != nil {
				return nil, fmt.Errorf("replay %s: %w", file, err)
			}
			if t.Error == "" {
				p.turns = append(p.turns, replayTurn{turn: t, results: map[string]ledger.ToolCall{}})
			}
		case ledger.TypeToolCall:
			var c ledger.ToolCall
			if err := rec.Decode(&c); err != nil {
				return nil, fmt.Errorf("replay %s: %w", file, err)
			}
			if len(p.turns) == 0 {
				return nil, fmt.Errorf("replay %s: event %d: a tool call before any model turn", file, rec.Seq)
			}
			p.turns[len(p.turns)-1].results[c.CallID] = c
		}
	}
	if len(p.turns) == 0 {
		return nil, fmt.Errorf("replay %s: the ledger holds no model turn to replay", file)
	}
	return p, nil
}

// Model implements Provider: "replay:FILE".
func (p *Replay) Model() string { return NameReplay + ":" + p.file }

// Transcript is the ledger the turns come from, as given.
func (p *Replay) Transcript() string { return p.file }

// Turns is how many model turns the transcript holds.
func (p *Replay) Turns() int { return len(p.turns) }

// ReplayedFrom says whether p calls no model but replays a transcript,
// and which.
func ReplayedFrom(p Provider) (file string, ok bool) {
	r, ok := p.(interface{ Transcript() string })
	if !ok {
		return "", false
	}
	return r.Transcript(), true
}

// Complete implements Provider. Usage is zero: no model was called.
func (p *Replay) Complete(ctx context.Context, req Request) (*Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n := 0
	for _, m := range req.Messages {
		if m.Role == RoleAssistant {
			n++
		}
	}
	if n > 0 {
		if err := p.check(n-1, req.Messages); err != nil {
			return nil, err
		}
	}
	if n >= len(p.turns) {
		return nil, p.fail(n+1, "transcript_exhausted", fmt.Sprintf(
			"there is none: the transcript has %d model turns, and the loop asked for one more, so the run did not end where the recorded one did", len(p.turns)))
	}
	t := p.turns[n].turn
	msg := Message{Role: RoleAssistant, Text: t.Text}
	for _, c := range t.ToolCalls {
		msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
	}
	return &Response{Message: msg, StopReason: t.StopReason}, nil
}

// check compares what the loop sent back for recorded turn i (0-based)
// with the recording: the assistant message is the turn as replayed, and
// the message after it holds each call's recorded result.
func (p *Replay) check(i int, msgs []Message) error {
	want := p.turns[i]
	turn := i + 1
	last := msgs[len(msgs)-1]
	var asked *Message
	for j := len(msgs) - 1; j >= 0; j-- {
		if msgs[j].Role == RoleAssistant {
			asked = &msgs[j]
			break
		}
	}
	if len(asked.ToolCalls) != len(want.turn.ToolCalls) {
		return p.fail(turn, "transcript_mismatch", fmt.Sprintf("the conversation holds %d tool calls for this turn, the transcript %d", len(asked.ToolCalls), len(want.turn.ToolCalls)))
	}
	for k, c := range want.turn.ToolCalls {
		if got := asked.ToolCalls[k]; got.ID != c.ID || got.Name != c.Name || got.Arguments != c.Arguments {
			return p.fail(turn, "transcript_mismatch", fmt.Sprintf("call %d is %s(%s) in the conversation, %s(%s) in the transcript", k+1, got.Name, got.Arguments, c.Name, c.Arguments))
		}
	}
	if len(want.turn.ToolCalls) == 0 {
		return nil // answered with a reminder to use the tools, not a result
	}
	if last.Role != RoleUser || len(last.ToolResults) != len(want.turn.ToolCalls) {
		return p.fail(turn, "transcript_mismatch", fmt.Sprintf("the loop sent back %d tool results for %d recorded calls", len(last.ToolResults), len(want.turn.ToolCalls)))
	}
	for k, c := range want.turn.ToolCalls {
		got := last.ToolResults[k]
		rec, ok := want.results[c.ID]
		if !ok {
			return p.fail(turn, "transcript_mismatch", fmt.Sprintf("the transcript has no result for its %s call %s: the recorded run ended there", c.Name, c.ID))
		}
		if got.CallID != c.ID {
			return p.fail(turn, "transcript_mismatch", fmt.Sprintf("result %d answers call %s, the transcript's call is %s", k+1, got.CallID, c.ID))
		}
		if diff := resultDiff(c.Name, rec.Result, got.Content); diff != "" {
			return p.fail(turn, "transcript_mismatch", fmt.Sprintf("the %s call %s got a different result than recorded: %s", c.Name, c.ID, diff))
		}
	}
	return nil
}

func (p *Replay) fail(turn int, code, what string) *Error {
	return &Error{
		Kind:     KindPermanent,
		Provider: NameReplay,
		Code:     code,
		Reason:   fmt.Sprintf("transcript %s no longer applies: recorded turn %d: %s (record it again)", p.file, turn, what),
	}
}

// resultDiff is "" when got is the recorded result as far as the recorded
// turns depend on it, else the first difference. The tools that run
// commands (run, verify) report durations and output with timings, cache
// notes and map-ordered lines, which differ between any two runs: for
// them the error code, exit codes and check verdicts must agree. Every
// other tool's result must be the same text.
func resultDiff(tool, want, got string) string {
	if want == got {
		return ""
	}
	if tool == "run" || tool == "verify" {
		w, g := commandFacts(want), commandFacts(got)
		if strings.Join(w, "\n") == strings.Join(g, "\n") {
			return ""
		}
		return firstDiff(w, g)
	}
	return firstDiff(strings.Split(want, "\n"), strings.Split(got, "\n"))
}

// factRE matches the start of the lines of run and verify results that
// say what happened, up to where durations begin: the exit code, the
// tally, each check's verdict, an error code.
var factRE = regexp.MustCompile(`^(exit code -?\d+|\d+ of \d+ checks passed|(PASS|FAIL) .*\(exit code -?\d+|error: [a-z_]+|no verification checks)`)

// commandFacts are the lines of a run or verify result that matter to
// the turns after it.
func commandFacts(s string) []string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if m := factRE.FindString(line); m != "" {
			out = append(out, m)
		}
	}
	return out
}

// firstDiff names the first line where want and got part.
func firstDiff(want, got []string) string {
	for i := 0; i < max(len(want), len(got)); i++ {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			return fmt.Sprintf("line %d is %q, recorded %q", i+1, clip(g), clip(w))
		}
	}
	return "they differ"
}

func clip(s string) string {
	if len(s) > 120 {
		return text.Head(s, 120) + "…"
	}
	return s
}
