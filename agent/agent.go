// Package agent runs the model loop: it builds the prompt, sends turns to a
// provider, runs the tools the model asks for, enforces every budget
// outside the model and records each fact in the ledger as it happens.
package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/agent/provider"
	"github.com/patchwright/patchwright/agent/repomap"
	"github.com/patchwright/patchwright/agent/secrets"
	"github.com/patchwright/patchwright/agent/tools"
	"github.com/patchwright/patchwright/internal/logkey"
	"github.com/patchwright/patchwright/sandbox"
)

// StopReason says why a run ended.
type StopReason string

// Stop reasons. Finished is the model calling finish; ProviderError and
// Infrastructure come with a non-nil error from Run; every other reason is
// a limit the application enforced, which the pipeline reports as
// "stopped".
const (
	Finished       StopReason = "finished"
	StepLimit      StopReason = "step_limit"
	TokenBudget    StopReason = "token_budget"
	Deadline       StopReason = "deadline"
	RepeatedCalls  StopReason = "repeated_calls"
	NoToolUse      StopReason = "no_tool_use"
	Cancelled      StopReason = "cancelled"
	ProviderError  StopReason = "provider_error"
	Infrastructure StopReason = "infrastructure"
	// BudgetExceeded: the run's estimated model cost reached
	// Limits.MaxCostUSD.
	BudgetExceeded StopReason = "budget_exceeded"
	// Interrupted: the worker is shutting down and told the run to stop
	// (WithInterrupt) while there is still time to publish its work.
	Interrupted StopReason = "interrupted"
)

// Limits bound a run. Each zero field takes the default in its comment.
type Limits struct {
	// MaxSteps caps model turns; default 40.
	MaxSteps int
	// MaxInputTokens caps the input tokens of all turns together, cached
	// ones included; default 2,000,000.
	MaxInputTokens int64
	// ContextWindow is the model's window in tokens; default 128,000.
	// Older tool output is replaced by placeholders when a request's
	// estimate passes the window less the room kept for the reply (see
	// OutputLimit), down to 60% of the window.
	ContextWindow int64
	// OutputLimit is the most tokens one reply of the model may have;
	// the room kept free of the window for the reply is the smaller of it
	// and a fifth of the window. Zero: unknown, a fifth of the window.
	OutputLimit int64
	// MaxOutputTokens caps each reply; zero leaves the provider's default.
	MaxOutputTokens int
	// MaxToolOutput is the bytes of one tool result the model sees, head
	// and tail kept; default 32 KiB.
	MaxToolOutput int
	// RepeatInARow stops the run when the same call (name and normalised
	// arguments) comes this many times in a row; default 3.
	RepeatInARow int
	// RepeatInWindow stops the run when the same call with the same
	// result comes this many times within the last RepeatWindow calls;
	// defaults 4 and 12.
	RepeatInWindow int
	RepeatWindow   int
	// MaxNudges is how many text-only replies are answered with a
	// reminder to use the tools before the run stops; default 2, and a
	// negative value means none.
	MaxNudges int
	// MaxInstructions is the bytes of repository instruction files shown;
	// default 16 KiB.
	MaxInstructions int
	// MaxIssue is the bytes of the issue body (and of retry feedback)
	// shown; default 32 KiB.
	MaxIssue int
	// RepoMapTokens is the repository map's budget; default 2,000, and a
	// negative value leaves the map out.
	RepoMapTokens int
	// KeepRecent is how many of the latest messages compaction never
	// touches; default 6.
	KeepRecent int
	// MaxCostUSD caps the run's estimated model cost (Config.Cost), checked
	// after every model turn: the application stops the run there, whatever
	// the model intends. Zero means no cap.
	MaxCostUSD float64
}

// DefaultLimits fill the zero fields of Config.Limits.
var DefaultLimits = Limits{
	MaxSteps:        40,
	MaxInputTokens:  2_000_000,
	ContextWindow:   128_000,
	MaxToolOutput:   32 << 10,
	RepeatInARow:    3,
	RepeatInWindow:  4,
	RepeatWindow:    12,
	MaxNudges:       2,
	MaxInstructions: 16 << 10,
	MaxIssue:        32 << 10,
	RepoMapTokens:   2000,
	KeepRecent:      6,
}

// compactAbove is the request size in tokens past which compaction
// starts: the model's own window less the room for its reply.
func (l Limits) compactAbove() int64 {
	reserve := l.ContextWindow / 5
	if l.OutputLimit > 0 && l.OutputLimit < reserve {
		reserve = l.OutputLimit
	}
	return l.ContextWindow - reserve
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	set := func(v *int, def int) {
		if *v == 0 {
			*v = def
		}
	}
	set(&l.MaxSteps, d.MaxSteps)
	set(&l.MaxToolOutput, d.MaxToolOutput)
	set(&l.RepeatInARow, d.RepeatInARow)
	set(&l.RepeatInWindow, d.RepeatInWindow)
	set(&l.RepeatWindow, d.RepeatWindow)
	set(&l.MaxNudges, d.MaxNudges)
	set(&l.MaxInstructions, d.MaxInstructions)
	set(&l.MaxIssue, d.MaxIssue)
	set(&l.RepoMapTokens, d.RepoMapTokens)
	set(&l.KeepRecent, d.KeepRecent)
	if l.MaxInputTokens == 0 {
		l.MaxInputTokens = d.MaxInputTokens
	}
	if l.ContextWindow == 0 {
		l.ContextWindow = d.ContextWindow
	}
	l.MaxNudges = max(l.MaxNudges, 0)
	return l
}

// Config is everything one run needs.
type Config struct {
	// Provider is the model; required.
	Provider provider.Provider
	// Tools are offered to the model in this order; required. Names must
	// be unique. What a tool returns goes to the model and the ledger as
	// it is: the tools of tools.New scan their results and withhold those
	// holding a secret (secret_detected), and any other tool must too.
	Tools []tools.Tool
	// Ledger receives every event; required.
	Ledger *ledger.Writer
	// Workspace is read for instruction files and the repository map; nil
	// leaves both out.
	Workspace *sandbox.Workspace
	// Issue is the task.
	Issue Issue
	// ReadsImages: the model reads images (provider.Prices.ReadsImages),
	// so Issue.Images that were fetched are sent with the first message;
	// false sends none and the message says how many were left out.
	ReadsImages bool
	// Limits are the run's budgets; zero fields take DefaultLimits.
	Limits Limits
	// Now measures durations; nil means time.Now.
	Now func() time.Time
	// Logger receives a line per turn and tool call (debug) and the stop
	// (info), with logkey.Step and logkey.Tool attributes; nil discards them. The
	// ledger, not the log, is the record.
	Logger *slog.Logger
	// Redactor withholds what looks like a secret in the model's own
	// words (its text, tool calls and their arguments, commands, summary)
	// before the ledger, the log or the Result holds them; nil means
	// gitleaks' rules (secrets.Default). A *tools.Set also knows the
	// values of the work tree's secret files.
	Redactor Redactor
	// Cost estimates what one model's usage cost from the operator's
	// price table; the run's cost is the sum over the models it called
	// (Result.Cost). Nil, or a model without a price, leaves
	// Limits.MaxCostUSD unenforced (the log says so once).
	Cost func(model string, u provider.Usage) (usd float64, known bool)
	// SummaryProvider, when set, is asked to summarise the observations a
	// compaction replaces (summary.go), so that they carry its summary
	// instead of a bare placeholder; nil: placeholders only. Its usage
	// counts in the run's, at its own price.
	SummaryProvider provider.Provider
	// Notes, when set, is polled before every model turn for what people
	// sent while the run went on (`/agent note`); each note reaches the
	// model with that turn's request, and the ledger records it as a
	// UserMessage. An error is logged and the run goes on without notes.
	Notes func(ctx context.Context) ([]Note, error)
	// Plan, when set, makes this a planning run (`/agent plan`): the
	// system prompt (planSystemPrompt), the first message's closing line
	// and the nudge ask for a plan through submit_plan. The caller gives
	// the planning tool set (tools.Options.ReadOnly).
	Plan *PlanRun
}

// Note is a person's message to a running attempt.
type Note struct {
	From string // GitHub login, without "@"
	Text string
}

// Result is how a run ended.
type Result struct {
	Stop StopReason
	// Detail says why, in one line for people.
	Detail string
	// Steps is the number of model turns.
	Steps int
	// Usage counts every model call of the run, the summary model's
	// included; ByModel splits it by the model that answered.
	Usage   provider.Usage
	ByModel map[string]provider.Usage
	// Summary is the model's finish summary, empty unless it finished.
	Summary string
	// Changed lists every path a tool wrote or deleted, sorted.
	Changed []string
}

// Run runs the loop until the model finishes or a limit stops it. The
// error is non-nil only for ProviderError and Infrastructure (and a bad
// Config); it wraps the cause, a *provider.Error for the former, so the
// caller can tell a retryable failure from a permanent one.
func Run(ctx context.Context, cfg Config) (Result, error) {
	r, err := newRunner(cfg)
	if err != nil {
		return Result{}, err
	}
	s := r.start(ctx)
	if s == nil {
		s = r.loop(ctx)
	}
	return r.finish(*s)
}

// stop is a decision to end the run.
type stop struct {
	reason StopReason
	detail string
	err    error
}

type runner struct {
	cfg       Config
	lim       Limits
	now       func() time.Time
	log       *slog.Logger
	req       provider.Request
	byName    map[string]tools.Tool
	names     []string
	callNames map[string]string // call ID → tool name, for placeholders
	usage     provider.Usage
	byModel   map[string]provider.Usage
	// costUnknown: the cost cap could not be checked (no price), said once.
	costUnknown bool
	steps       int
	nudges      int
	nudge       string // nudgeText, or planNudgeText in a planning run
	changed     map[string]bool
	summary     string
	repeat      repeatDetector
	// lastInput is the provider's count for the last request and
	// lastBytes that request's size; together they calibrate the estimate.
	lastInput int64
	lastBytes int
	// redactor scans the model's words, paths their names (withhold.go).
	redactor Redactor
	paths    *secrets.Scanner
}

func newRunner(cfg Config) (*runner, error) {
	switch {
	case cfg.Provider == nil:
		return nil, errors.New("agent: no provider")
	case cfg.Ledger == nil:
		return nil, errors.New("agent: no ledger")
	case len(cfg.Tools) == 0:
		return nil, errors.New("agent: no tools")
	}
	lim := cfg.Limits.withDefaults()
	r := &runner{
		cfg: cfg, lim: lim, now: cfg.Now,
		byName:    map[string]tools.Tool{},
		callNames: map[string]string{},
		byModel:   map[string]provider.Usage{},
		changed:   map[string]bool{},
		repeat:    repeatDetector{inARow: lim.RepeatInARow, inWindow: lim.RepeatInWindow, window: lim.RepeatWindow},
	}
	if r.now == nil {
		r.now = time.Now
	}
	sc, err := secrets.Default()
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	r.paths, r.redactor = sc, cfg.Redactor
	if r.redactor == nil {
		r.redactor = sc
	}
	r.log = cfg.Logger
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	for _, t := range cfg.Tools {
		name := t.Name()
		if name == "" {
			return nil, errors.New("agent: a tool has no name")
		}
		if _, dup := r.byName[name]; dup {
			return nil, fmt.Errorf("agent: two tools named %q", name)
		}
		r.byName[name] = t
		r.names = append(r.names, name)
		r.req.Tools = append(r.req.Tools, provider.ToolDef{Name: name, Description: t.Description(), Schema: t.Schema()})
	}
	r.req.System, r.nudge = systemPrompt, nudgeText
	if cfg.Plan != nil {
		r.req.System, r.nudge = planSystemPrompt, planNudgeText
	}
	r.req.MaxTokens = lim.MaxOutputTokens
	return r, nil
}

// start builds the opening message and records the run's start. The
// ledger opens with run_start even when the prompt could not be built.
func (r *runner) start(ctx context.Context) *stop {
	first, err := r.buildFirst(ctx)
	r.req.Messages = []provider.Message{{Role: provider.RoleUser, Text: first, Images: r.shownImages()}}
	sum := sha256.Sum256([]byte(r.req.System + "\x00" + first))
	limits := ledger.Limits{MaxSteps: r.lim.MaxSteps, MaxInputTokens: r.lim.MaxInputTokens, ContextWindow: r.lim.ContextWindow}
	if d, ok := ctx.Deadline(); ok {
		limits.Deadline = &d
	}
	if _, lerr := r.cfg.Ledger.Append(&ledger.RunStart{
		Model: r.cfg.Provider.Model(), Limits: limits, Tools: r.names,
		PromptSHA256: hex.EncodeToString(sum[:]), Prompt: first,
	}); lerr != nil {
		return &stop{Infrastructure, "could not write the ledger: " + lerr.Error(), lerr}
	}
	if lerr := r.recordImages(); lerr != nil {
		return &stop{Infrastructure, "could not write the ledger: " + lerr.Error(), lerr}
	}
	if err != nil {
		return r.failure(ctx, Infrastructure, err)
	}
	return nil
}

// buildFirst reads the repository's guidance and map and frames the issue.
func (r *runner) buildFirst(ctx context.Context) (string, error) {
	parts := promptParts{Issue: r.cfg.Issue, MaxIssue: r.lim.MaxIssue, Plan: r.cfg.Plan, TextOnly: !r.cfg.ReadsImages}
	parts.Shown = len(r.shownImages())
	parts.NotShown = len(r.cfg.Issue.Images) - parts.Shown
	if ws := r.cfg.Workspace; ws != nil {
		var err error
		if parts.Instructions, err = readInstructions(ctx, ws, r.lim.MaxInstructions); err != nil {
			return "", fmt.Errorf("read repository instructions: %w", err)
		}
		parts.Issue.Body, _ = renderForm(parts.Issue.Body, formLabels(ws))
		if r.lim.RepoMapTokens > 0 {
			if parts.RepoMap, err = repomap.Build(ctx, ws, repomap.Options{TokenBudget: r.lim.RepoMapTokens}); err != nil {
				return "", fmt.Errorf("build repository map: %w", err)
			}
		}
	}
	return firstMessage(parts), nil
}

// loop runs turns until a stopping rule fires.
func (r *runner) loop(ctx context.Context) *stop {
	for {
		if s := r.beforeTurn(ctx); s != nil {
			return s
		}
		r.steps++
		resp, s := r.complete(ctx)
		if s != nil {
			return s
		}
		msg := resp.Message
		msg.Role = provider.RoleAssistant
		if len(msg.ToolCalls) == 0 {
			if msg.Text == "" {
				// Some services refuse an empty assistant message.
				msg.Text = "(no reply)"
			}
			r.req.Messages = append(r.req.Messages, msg)
			if r.nudges >= r.lim.MaxNudges {
				return &stop{NoToolUse, fmt.Sprintf("the model replied %d times without calling a tool", r.nudges+1), nil}
			}
			r.nudges++
			r.req.Messages = append(r.req.Messages, provider.Message{Role: provider.RoleUser, Text: r.nudge})
		} else {
			r.req.Messages = append(r.req.Messages, msg)
			if s := r.runCalls(ctx, msg.ToolCalls); s != nil {
				return s
			}
		}
		if r.usage.InputTokens >= r.lim.MaxInputTokens {
			return r.budgetStop()
		}
		if s := r.costStop(); s != nil {
			return s
		}
		if r.steps >= r.lim.MaxSteps {
			return &stop{StepLimit, fmt.Sprintf("the step limit of %d model turns was reached", r.lim.MaxSteps), nil}
		}
	}
}

// beforeTurn checks the deadline and the budget against the coming
// request, and shortens the conversation when it nears the window.
func (r *runner) beforeTurn(ctx context.Context) *stop {
	if err := ctx.Err(); err != nil {
		return contextStop(ctx)
	}
	if s := interruptStop(ctx); s != nil {
		return s
	}
	if r.estimate() > r.lim.compactAbove() {
		if s := r.compact(ctx, "near the context window", false); s != nil {
			return s
		}
	}
	if s := r.deliverNotes(ctx); s != nil {
		return s
	}
	if r.usage.InputTokens+r.estimate() > r.lim.MaxInputTokens {
		return r.budgetStop()
	}
	return nil
}

// compact replaces old observations, with the summary model's summaries
// of them when one is configured (summarise), and records it. all drops
// every observation outside the recent turns, after the provider said the
// request was too long; otherwise it stops at 60% of the window.
func (r *runner) compact(ctx context.Context, reason string, all bool) *stop {
	before := r.estimate()
	target := r.lim.ContextWindow * 6 / 10
	if all {
		target = 0
	}
	gone := compact(&r.req, r.callNames, r.lim.KeepRecent, target)
	if len(gone) == 0 {
		return nil
	}
	r.lastInput = 0 // the provider's last count no longer applies
	call := r.summarise(ctx, gone)
	if _, err := r.cfg.Ledger.Append(&ledger.Compaction{
		Step: r.steps, Reason: reason, Replaced: len(gone), TokensBefore: before, TokensAfter: r.estimate(), AfterError: all,
		Summary: call,
	}); err != nil {
		return r.failure(ctx, Infrastructure, fmt.Errorf("write ledger: %w", err))
	}
	return nil
}

// complete sends the turn. A context-length error gets one compaction of
// every older observation and one retry.
func (r *runner) complete(ctx context.Context) (*provider.Response, *stop) {
	mctx, ended := cutOnInterrupt(ctx)
	defer ended()
	resp, err := r.send(mctx)
	if s := r.cutStop(ctx, err); s != nil {
		return nil, s
	}
	var pe *provider.Error
	if err != nil && errors.As(err, &pe) && pe.Kind == provider.KindContextLength {
		replacedBefore := r.countPlaceholders()
		if s := r.compact(ctx, "the model's service said the conversation is too long", true); s != nil {
			return nil, s
		}
		if r.countPlaceholders() == replacedBefore {
			return nil, r.failure(ctx, ProviderError, fmt.Errorf("model turn %d: nothing left to shorten: %w", r.steps, err))
		}
		resp, err = r.send(mctx)
	}
	if s := r.cutStop(ctx, err); s != nil {
		return nil, s
	}
	if err != nil {
		return nil, r.failure(ctx, ProviderError, fmt.Errorf("model turn %d: %w", r.steps, err))
	}
	return resp, nil
}

// send makes one provider call and records it, failed or not.
func (r *runner) send(ctx context.Context) (*provider.Response, error) {
	bytes := r.messagesBytes()
	start := r.now()
	resp, err := r.cfg.Provider.Complete(ctx, r.req)
	turn := &ledger.ModelTurn{Step: r.steps, Model: r.cfg.Provider.Model(), Duration: r.now().Sub(start)}
	if err == nil && resp == nil {
		err = errors.New("provider returned no response")
	}
	if err != nil {
		err = r.withholdError(ctx, err)
		turn.Error = err.Error()
	} else {
		u := resp.Usage
		r.count(turn.Model, u)
		r.lastInput, r.lastBytes = u.InputTokens, bytes
		turn.InputTokens, turn.OutputTokens = u.InputTokens, u.OutputTokens
		turn.CachedInputTokens, turn.CacheWriteTokens = u.CachedInputTokens, u.CacheWriteTokens
		turn.StopReason, turn.Text = resp.StopReason, r.withhold(ctx, "model turn text", resp.Message.Text)
		for i, f := range resp.FellBack {
			resp.FellBack[i] = r.withhold(ctx, "fallback note", f)
		}
		turn.FellBack = resp.FellBack
		for _, c := range resp.Message.ToolCalls {
			turn.ToolCalls = append(turn.ToolCalls, ledger.RequestedCall{ID: r.withhold(ctx, "call id", c.ID), Name: r.withhold(ctx, "tool name", c.Name), Arguments: r.withholdArgs(ctx, c.Arguments)})
		}
	}
	r.log.Debug("model turn", logkey.Step, r.steps, "input_tokens", turn.InputTokens, "tool_calls", len(turn.ToolCalls), logkey.Err, turn.Error)
	if _, lerr := r.cfg.Ledger.Append(turn); lerr != nil {
		return nil, &ledgerError{lerr}
	}
	return resp, err
}

// ledgerError marks a failure to record, which is always infrastructure.
type ledgerError struct{ err error }

func (e *ledgerError) Error() string { return "write ledger: " + e.err.Error() }
func (e *ledgerError) Unwrap() error { return e.err }

// failure turns an error into a stop: the context's end wins over
// whatever failed because of it, and a ledger failure is infrastructure.
func (r *runner) failure(ctx context.Context, reason StopReason, err error) *stop {
	if ctx.Err() != nil {
		return contextStop(ctx)
	}
	var le *ledgerError
	if errors.As(err, &le) {
		reason = Infrastructure
	}
	// The detail is posted (status comment, check run): the worker's
	// host paths are not for readers.
	detail := r.hostPathsOut(err.Error())
	var pe *provider.Error
	if reason == ProviderError && errors.As(err, &pe) {
		detail = "the model's service failed: " + pe.Reason
	}
	return &stop{reason, detail, err}
}

func contextStop(ctx context.Context) *stop {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &stop{Deadline, "the run's time limit was reached", nil}
	}
	return &stop{Cancelled, "the run was cancelled", nil}
}

// finish records the run's end and builds the Result.
func (r *runner) finish(s stop) (Result, error) {
	changed := make([]string, 0, len(r.changed))
	for p := range r.changed {
		changed = append(changed, p)
	}
	slices.Sort(changed)
	// The detail can quote the model (a repeated call's arguments).
	s.detail = r.withhold(context.Background(), "stop detail", s.detail)
	res := Result{Stop: s.reason, Detail: s.detail, Steps: r.steps, Usage: r.usage, ByModel: r.byModel, Summary: r.summary, Changed: changed}
	r.log.Info("agent stopped", logkey.Stop, s.reason, logkey.Step, r.steps, "detail", s.detail)
	_, err := r.cfg.Ledger.Append(&ledger.RunStop{
		Reason: string(s.reason), Detail: s.detail, Steps: r.steps, Summary: r.summary, Changed: r.withholdPaths(context.Background(), changed),
		Usage: r.usage,
	})
	if err != nil && s.err == nil {
		res.Stop, res.Detail = Infrastructure, "could not write the ledger: "+err.Error()
		return res, fmt.Errorf("record run stop: %w", err)
	}
	return res, s.err
}
