package ledger

import (
	"time"
)

// Event types written by the agent loop. Durations are integer nanoseconds,
// like CommandRecord's.
const (
	TypeRunStart   = "run_start"
	TypeModelTurn  = "model_turn"
	TypeToolCall   = "tool_call"
	TypeCommand    = "command"
	TypeCompaction = "compaction"
	TypeRunStop    = "run_stop"
	// TypeUserMessage is a note a person sent while the run went on.
	TypeUserMessage = "user_message"
	// TypeAdvisoryCheck is one dependency of the change looked up in the
	// GitHub advisory database before publishing.
	TypeAdvisoryCheck = "advisory_check"
	// TypeReview is the review model's pass over the change before
	// publishing, or why there was none.
	TypeReview = "review"
)

func init() {
	Register(TypeRunStart, func() Payload { return new(RunStart) })
	Register(TypeModelTurn, func() Payload { return new(ModelTurn) })
	Register(TypeToolCall, func() Payload { return new(ToolCall) })
	Register(TypeCommand, func() Payload { return new(Command) })
	Register(TypeCompaction, func() Payload { return new(Compaction) })
	Register(TypeRunStop, func() Payload { return new(RunStop) })
	Register(TypeUserMessage, func() Payload { return new(UserMessage) })
	Register(TypeAdvisoryCheck, func() Payload { return new(AdvisoryCheck) })
	Register(TypeReview, func() Payload { return new(Review) })
}

// AdvisoryCheck is one dependency the change adds or re-versions, as the
// advisory database answered for it.
type AdvisoryCheck struct {
	Path      string `json:"path"`
	Ecosystem string `json:"ecosystem"`
	Name      string `json:"name"`
	Version   string `json:"version"`
	// Cached: an earlier lookup of the same ecosystem, name and version
	// in this run answered it.
	Cached     bool             `json:"cached,omitempty"`
	Advisories []AdvisoryRecord `json:"advisories,omitempty"`
	// Error says why the database could not answer.
	Error string `json:"error,omitempty"`
}

// EventType implements Payload.
func (*AdvisoryCheck) EventType() string { return TypeAdvisoryCheck }

// AdvisoryRecord is one advisory the database returned.
type AdvisoryRecord struct {
	ID       string `json:"id"`
	Severity string `json:"severity"`
	Summary  string `json:"summary"`
	URL      string `json:"url,omitempty"`
}

// Review is the review model's pass over the change before publishing.
// Skipped is set, and nothing else, when no pass was made.
type Review struct {
	Model    string        `json:"model,omitempty"`
	Usage    Usage         `json:"usage"`
	CostUSD  *float64      `json:"cost_usd,omitempty"`
	Duration time.Duration `json:"duration_ns"`
	// Answer is the model's answer as read (stripped, capped): data,
	// never instructions.
	Answer string `json:"answer,omitempty"`
	// Risks counts the risks kept as findings; Ignored says, one line
	// each, what of the answer was left out.
	Risks   int      `json:"risks"`
	Ignored []string `json:"ignored,omitempty"`
	// Error says why the pass did not complete: the model failed, the
	// budget, an answer that could not be read.
	Error string `json:"error,omitempty"`
	// Skipped says why no pass was made (`review: off`).
	Skipped string `json:"skipped,omitempty"`
}

// EventType implements Payload.
func (*Review) EventType() string { return TypeReview }

// UserMessage is a note from a person (`/agent note`) delivered to the
// model between steps, before turn Step.
type UserMessage struct {
	Step int    `json:"step"`
	From string `json:"from"` // GitHub login, without "@"
	Text string `json:"text"`
}

// EventType implements Payload.
func (*UserMessage) EventType() string { return TypeUserMessage }

// Limits are the budgets a run starts with. Zero means the limit was off.
type Limits struct {
	MaxSteps       int   `json:"max_steps,omitempty"`
	MaxInputTokens int64 `json:"max_input_tokens,omitempty"`
	ContextWindow  int64 `json:"context_window,omitempty"`
	// Deadline is the context's deadline, if it had one.
	Deadline *time.Time `json:"deadline,omitempty"`
}

// RunStart opens a run.
type RunStart struct {
	Model  string   `json:"model"`
	Limits Limits   `json:"limits"`
	Tools  []string `json:"tools"`
	// PromptSHA256 hashes the system prompt and first message, so two runs
	// can be shown to have started from the same prompt.
	PromptSHA256 string `json:"prompt_sha256"`
	// Prompt is the opening user message: repository instructions, map
	// and the sanitised issue. The system prompt is fixed per release.
	Prompt string `json:"prompt"`
}

// EventType implements Payload.
func (*RunStart) EventType() string { return TypeRunStart }

// RequestedCall is a tool call as the model asked for it.
type RequestedCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ModelTurn is one completed call to the model.
type ModelTurn struct {
	Step              int             `json:"step"`
	Model             string          `json:"model"`
	InputTokens       int64           `json:"input_tokens"`
	OutputTokens      int64           `json:"output_tokens"`
	CachedInputTokens int64           `json:"cached_input_tokens"`
	CacheWriteTokens  int64           `json:"cache_write_tokens,omitempty"`
	Duration          time.Duration   `json:"duration_ns"`
	StopReason        string          `json:"stop_reason"`
	Text              string          `json:"text,omitempty"`
	ToolCalls         []RequestedCall `json:"tool_calls,omitempty"`
	// Error is set instead of the rest when the call failed.
	Error string `json:"error,omitempty"`
	// FellBack lists the models that failed this turn, one line each,
	// before Model answered (a model fallback list).
	FellBack []string `json:"fell_back,omitempty"`
}

// EventType implements Payload.
func (*ModelTurn) EventType() string { return TypeModelTurn }

// ToolCall is one tool call and what the model got back.
type ToolCall struct {
	Step      int    `json:"step"`
	CallID    string `json:"call_id"`
	Tool      string `json:"tool"`
	Arguments string `json:"arguments"`
	// Result is the text the model saw, after cutting long output.
	Result string `json:"result"`
	// ResultBytes is the length of the tool's full text before cutting.
	ResultBytes int           `json:"result_bytes"`
	ErrorCode   ErrorCode     `json:"error_code,omitempty"`
	Duration    time.Duration `json:"duration_ns"`
	Changed     []string      `json:"changed,omitempty"`
	// Panic holds the recovered panic value of a tool that crashed.
	Panic string `json:"panic,omitempty"`
	// Failure is the infrastructure error that ended the run during this
	// call; the model never saw a result.
	Failure string `json:"failure,omitempty"`
}

// EventType implements Payload.
func (*ToolCall) EventType() string { return TypeToolCall }

// Command is one command that ran in the sandbox on behalf of a tool call.
type Command struct {
	Step   int    `json:"step"`
	CallID string `json:"call_id"`
	Tool   string `json:"tool"`
	CommandRecord
}

// EventType implements Payload.
func (*Command) EventType() string { return TypeCommand }

// Compaction records that older tool observations were replaced by
// placeholders, or by a summary model's summaries of them, to keep the
// conversation inside the model's window.
type Compaction struct {
	Step         int    `json:"step"`
	Reason       string `json:"reason"`
	Replaced     int    `json:"replaced"`
	TokensBefore int64  `json:"tokens_before"`
	TokensAfter  int64  `json:"tokens_after"`
	AfterError   bool   `json:"after_context_length_error,omitempty"`
	// Summary is the call to the summary model made for this compaction;
	// nil when no summary model is configured.
	Summary *SummaryCall `json:"summary,omitempty"`
}

// SummaryCall is one request to the summary model for the observations a
// compaction replaced.
type SummaryCall struct {
	Model    string        `json:"model"`
	Usage    Usage         `json:"usage"`
	Duration time.Duration `json:"duration_ns"`
	// Used is whether any replaced observation carries a summary;
	// Summarised counts those, the rest carry the placeholder.
	Used       bool `json:"used"`
	Summarised int  `json:"summarised"`
	// Text is the summary model's reply, withheld as the model's words
	// are.
	Text string `json:"text,omitempty"`
	// Error says why the reply was not used (the call failed, or its
	// answer could not be read); empty when it was.
	Error string `json:"error,omitempty"`
}

// EventType implements Payload.
func (*Compaction) EventType() string { return TypeCompaction }

// Usage is a token count: one model turn's, or a run's total. It is the
// one token-count type; provider.Usage is an alias of it.
type Usage struct {
	InputTokens       int64 `json:"input_tokens"`
	OutputTokens      int64 `json:"output_tokens"`
	CachedInputTokens int64 `json:"cached_input_tokens"`
	CacheWriteTokens  int64 `json:"cache_write_tokens,omitempty"`
}

// Add sums two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		InputTokens:       u.InputTokens + o.InputTokens,
		OutputTokens:      u.OutputTokens + o.OutputTokens,
		CachedInputTokens: u.CachedInputTokens + o.CachedInputTokens,
		CacheWriteTokens:  u.CacheWriteTokens + o.CacheWriteTokens,
	}
}

// RunStop closes a run.
type RunStop struct {
	// Reason is the agent's stop reason ("finished", "step_limit", …).
	Reason string `json:"reason"`
	// Detail explains the reason for people.
	Detail  string   `json:"detail"`
	Steps   int      `json:"steps"`
	Usage   Usage    `json:"usage"`
	Summary string   `json:"summary,omitempty"`
	Changed []string `json:"changed,omitempty"`
}

// EventType implements Payload.
func (*RunStop) EventType() string { return TypeRunStop }

// ErrorCode is the machine-readable reason a tool call failed
// (docs/design.md §4.4); tools.Code is an alias of it and defines the values.
type ErrorCode string

// CommandRecord is one command that ran in the sandbox.
type CommandRecord struct {
	Command   string        `json:"command"`
	ExitCode  int           `json:"exit_code"`
	Duration  time.Duration `json:"duration_ns"`
	TimedOut  bool          `json:"timed_out,omitempty"`
	OOMKilled bool          `json:"oom_killed,omitempty"`
	// Output is the kept head and tail of stdout and stderr, with a marker
	// where bytes were dropped.
	Output string `json:"output"`
	// OutputBytes is how many bytes the command wrote in all.
	OutputBytes int64 `json:"output_bytes"`
	// StdoutSHA256 and StderrSHA256 hash every byte of each stream, kept
	// or not, so a quoted output can be matched to what really ran.
	StdoutSHA256 string `json:"stdout_sha256"`
	StderrSHA256 string `json:"stderr_sha256"`
}
