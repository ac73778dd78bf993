package ledger

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// The event types of ledger.jsonl: the closed set, declared here and
// nowhere else (docs/ledger.md has a section per type). Writer.Append
// refuses any other type, and Record.Payload decodes each into the payload
// named beside it. Durations are integer nanoseconds, like CommandRecord's.
const (
	// Written by the agent loop.
	TypeRunStart   = "run_start"  // RunStart
	TypeModelTurn  = "model_turn" // ModelTurn
	TypeToolCall   = "tool_call"  // ToolCall
	TypeCommand    = "command"    // Command
	TypeCompaction = "compaction" // Compaction
	TypeRunStop    = "run_stop"   // RunStop
	// TypeUserMessage is a note a person sent while the run went on.
	TypeUserMessage = "user_message" // UserMessage
	// TypeIssueImages lists the images of the issue and its feedback.
	TypeIssueImages = "issue_images" // IssueImages

	// Written by the verification runner.
	TypeCheck   = "check"           // CheckEvent: one check's result in one phase
	TypeNewTest = "new_test_before" // NewTestEvent: one new test run against the original code

	// Written by the job's phases (jobs/pipeline).
	TypeFinding               = "finding"                    // FindingEvent
	TypeDependencies          = "dependencies"               // DependencyEvent
	TypeSetupDetected         = "setup_detected"             // SetupDetected
	TypeSetupSecrets          = "setup_secrets"              // SetupSecretsGiven
	TypeSetupSecretsWithheld  = "setup_secrets_withheld"     // SetupSecretsWithheld
	TypeSetupSecretFiles      = "setup_secret_files_removed" // SetupSecretFiles
	TypeEgressRefused         = "egress_refused"             // EgressRefused
	TypeEgressRefusalsDropped = "egress_refusals_dropped"    // EgressRefusalsDropped
	TypeServiceLog            = "service_log"                // ServiceLog
	TypeImageResolved         = "image_resolved"             // ImageResolved

	// Written by the review before publishing (jobs/pipeline).
	TypeAdvisoryCheck = "advisory_check" // AdvisoryCheck: one dependency looked up in the advisory database
	TypeReview        = "review"         // Review: the review model's pass, or why there was none
)

// types lists the constants above, in their order.
var types = []string{
	TypeRunStart, TypeModelTurn, TypeToolCall, TypeCommand, TypeCompaction, TypeRunStop, TypeUserMessage, TypeIssueImages,
	TypeCheck, TypeNewTest,
	TypeFinding, TypeDependencies, TypeSetupDetected, TypeSetupSecrets, TypeSetupSecretsWithheld,
	TypeSetupSecretFiles, TypeEgressRefused, TypeEgressRefusalsDropped, TypeServiceLog, TypeImageResolved,
	TypeAdvisoryCheck, TypeReview,
}

// Types returns every event type, sorted, so that readers of the ledger
// (the run page, the documentation's test) can check that they know each.
func Types() []string { return slices.Sorted(slices.Values(types)) }

// newPayload returns an empty payload of the event type typ; nil for a
// type outside the set.
func newPayload(typ string) Payload {
	switch typ {
	case TypeRunStart:
		return new(RunStart)
	case TypeModelTurn:
		return new(ModelTurn)
	case TypeToolCall:
		return new(ToolCall)
	case TypeCommand:
		return new(Command)
	case TypeCompaction:
		return new(Compaction)
	case TypeRunStop:
		return new(RunStop)
	case TypeUserMessage:
		return new(UserMessage)
	case TypeIssueImages:
		return new(IssueImages)
	case TypeCheck:
		return new(CheckEvent)
	case TypeNewTest:
		return new(NewTestEvent)
	}
	return newJobPayload(typ)
}

// newJobPayload is newPayload for the job phases' events.
func newJobPayload(typ string) Payload {
	switch typ {
	case TypeFinding:
		return new(FindingEvent)
	case TypeDependencies:
		return new(DependencyEvent)
	case TypeSetupDetected:
		return new(SetupDetected)
	case TypeSetupSecrets:
		return new(SetupSecretsGiven)
	case TypeSetupSecretsWithheld:
		return new(SetupSecretsWithheld)
	case TypeSetupSecretFiles:
		return new(SetupSecretFiles)
	case TypeEgressRefused:
		return new(EgressRefused)
	case TypeEgressRefusalsDropped:
		return new(EgressRefusalsDropped)
	case TypeServiceLog:
		return new(ServiceLog)
	case TypeImageResolved:
		return new(ImageResolved)
	case TypeAdvisoryCheck:
		return new(AdvisoryCheck)
	case TypeReview:
		return new(Review)
	}
	return nil
}

// AdvisoryCheck is one dependency the change adds or re-versions, as the
// advisory database answered for it.
type AdvisoryCheck struct {
	Path      string `json:"path"`
	Ecosystem string `json:"ecosystem"`
	Name      string `json:"name"`
	Version   string `json:"version"`
	// Range is the version as the manifest wrote it when it was a range;
	// Version is then the one its lockfile holds or its lower bound.
	Range string `json:"range,omitempty"`
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
	// BudgetUSD is the review's budget; OverBudget that the call cost
	// more (the provider billed past the estimate; its answer still
	// counts).
	BudgetUSD  float64 `json:"budget_usd,omitempty"`
	OverBudget bool    `json:"over_budget,omitempty"`
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

// CheckEvent is one verification check's result in one phase. Its fields
// are the JSON form of verify.CheckResult, which verify owns (test
// summaries the ledger has no reason to know); the ledger keeps the object
// as written, and verify.CheckFrom reads it back.
type CheckEvent struct{ Fields Object }

// EventType implements Payload.
func (*CheckEvent) EventType() string { return TypeCheck }

// MarshalJSON writes the check's fields.
func (e CheckEvent) MarshalJSON() ([]byte, error) { return e.Fields.MarshalJSON() }

// UnmarshalJSON keeps the check's fields.
func (e *CheckEvent) UnmarshalJSON(b []byte) error { return e.Fields.UnmarshalJSON(b) }

// NewTestEvent is one new test's run against the original code: the JSON
// form of verify.NewTestResult, read back by verify.NewTestFrom.
type NewTestEvent struct{ Fields Object }

// EventType implements Payload.
func (*NewTestEvent) EventType() string { return TypeNewTest }

// MarshalJSON writes the new test's fields.
func (e NewTestEvent) MarshalJSON() ([]byte, error) { return e.Fields.MarshalJSON() }

// UnmarshalJSON keeps the new test's fields.
func (e *NewTestEvent) UnmarshalJSON(b []byte) error { return e.Fields.UnmarshalJSON(b) }

// Object is a payload's fields as a JSON object whose shape another
// package owns, without the envelope's seq, time and type.
type Object json.RawMessage

// ObjectOf encodes v, which must encode to a JSON object.
func ObjectOf(v any) (Object, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var o Object
	return o, o.UnmarshalJSON(b)
}

// MarshalJSON writes the object; an empty Object is {}.
func (o Object) MarshalJSON() ([]byte, error) {
	if len(o) == 0 {
		return []byte("{}"), nil
	}
	return o, nil
}

// UnmarshalJSON keeps b's fields but the envelope's, so a payload read
// back from a record can be written again.
func (o *Object) UnmarshalJSON(b []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return fmt.Errorf("not a JSON object: %w", err)
	}
	for _, k := range []string{"seq", "time", "type"} {
		delete(fields, k)
	}
	out, err := json.Marshal(fields)
	*o = out
	return err
}

// Finding is one fact of the change a reviewer must look at
// (verify/findings decides them; findings.Finding is this type). Its JSON
// form is an entry of result.json's "findings".
type Finding struct {
	Kind string `json:"kind"`
	// Path is the file concerned; empty when the finding is about the whole
	// change or a check rather than one file.
	Path string `json:"path"`
	// Line is 1-based: in the changed file when it still exists, else in
	// the file as it was before the change (Detail then says "before the
	// change"). 0 means the whole file or no file.
	Line int `json:"line"`
	// Detail is one sentence: what happened and why a reviewer cares.
	Detail string `json:"detail"`
}

// FindingEvent is one finding as an event.
type FindingEvent struct{ Finding }

// EventType implements Payload.
func (*FindingEvent) EventType() string { return TypeFinding }

// DependencySetup is one run of dependency setup on a changed tree: the
// trusted commands (the default branch's `setup:`, or the ecosystem's own
// download command) that fetch what a change's manifests name, with the
// setup network, into the job's own cache. report.DependencySetup is this
// type.
type DependencySetup struct {
	// ByModel: the model asked for it with fetch_dependencies during its
	// work; otherwise the application ran it after the change, before the
	// final checks.
	ByModel bool `json:"by_model,omitempty"`
	// Configured: the commands are the default branch's `setup:`;
	// otherwise each changed project's own download command.
	Configured bool `json:"configured,omitempty"`
	// Manifests are the changed manifests and lockfiles that called for it.
	Manifests []string `json:"manifests"`
	// Commands ran in this order; the first that failed ended the run.
	Commands []DependencyCommand `json:"commands"`
	// Fetched are the dependencies the change adds or re-versions.
	Fetched []Dependency `json:"fetched,omitempty"`
	// Sources say where they came from: the proxy and registry settings
	// of the setup container ("GOPROXY=https://proxy.golang.org,direct").
	Sources []string `json:"sources,omitempty"`
	// NotFetched are the Go modules the change needs for the first time
	// whose host the setup network may not reach: the module proxy would
	// have fetched them from there, so they were held back.
	NotFetched []UnfetchedModule `json:"not_fetched,omitempty"`
}

// UnfetchedModule is a module dependency setup held back.
type UnfetchedModule struct {
	Module string `json:"module"`
	// Host is the module path's host, which no allowlist entry names.
	Host string `json:"host"`
	// Route is where go would have fetched it from: "proxy" (a module
	// proxy, which fetches from any origin) or "direct".
	Route string `json:"route"`
}

// Failed reports whether a command failed or timed out.
func (d DependencySetup) Failed() bool {
	for _, c := range d.Commands {
		if c.ExitCode != 0 || c.TimedOut {
			return true
		}
	}
	return false
}

// DependencyCommand is one command of a DependencySetup.
type DependencyCommand struct {
	Command  string `json:"command"`
	ExitCode int    `json:"exit_code"`
	TimedOut bool   `json:"timed_out,omitempty"`
}

// Dependency is one dependency a change adds or re-versions.
type Dependency struct {
	// What is its kind in words: "Go module", "npm package"…
	What    string `json:"what"`
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	// Was is the version before the change; "" for a new dependency.
	Was string `json:"was,omitempty"`
}

// DependencyEvent is one dependency setup as an event.
type DependencyEvent struct{ DependencySetup }

// EventType implements Payload.
func (*DependencyEvent) EventType() string { return TypeDependencies }

// DetectedCommand is one command of a detected first setup: the default
// branch's configuration has no `setup:`, so the setup phase ran
// detection's download command for a manifest that declares
// dependencies.
type DetectedCommand struct {
	Command string `json:"command"`
	// Manifest declares the dependencies that called for it.
	Manifest string `json:"manifest"`
	// Group is where in Manifest, when the command installs one group
	// of it: "[project.optional-dependencies] test", "[testenv] deps".
	// Empty for the whole manifest.
	Group    string `json:"group,omitempty"`
	ExitCode int    `json:"exit_code"`
	TimedOut bool   `json:"timed_out,omitempty"`
	// Error is the line of a failed command's output that says why
	// (pip's "ERROR: …", npm's "npm error …"), secrets withheld.
	Error string `json:"error,omitempty"`
}

// Failed reports whether the command failed or timed out.
func (c DetectedCommand) Failed() bool { return c.ExitCode != 0 || c.TimedOut }

// SetupDetected says that the first setup's commands were detected, not
// configured, and which manifest called for each; the commands' own
// records (Tool "setup") precede it.
type SetupDetected struct {
	Commands []DetectedCommand `json:"commands"`
}

// EventType implements Payload.
func (*SetupDetected) EventType() string { return TypeSetupDetected }

// SetupSecretsGiven names the setup-only secrets the setup container was
// given: names, never values (docs/design.md §4.1).
type SetupSecretsGiven struct {
	Names []string `json:"names"`
}

// EventType implements Payload.
func (*SetupSecretsGiven) EventType() string { return TypeSetupSecrets }

// SetupSecretsWithheld names the setup-only secrets setup ran without,
// and why.
type SetupSecretsWithheld struct {
	Names  []string `json:"names"`
	Reason string   `json:"reason"`
}

// EventType implements Payload.
func (*SetupSecretsWithheld) EventType() string { return TypeSetupSecretsWithheld }

// SecretFile is a file the first setup left holding the value of a
// setup-only secret, which the run removed before any later phase could
// read it. report.SecretFile is this type.
type SecretFile struct {
	// Path is the file's path in the work tree, or under the build cache
	// (HOME/.cache) when Cache is set; with any secret it holds withheld.
	Path string `json:"path"`
	// Cache is set for a file of the build cache volume.
	Cache bool `json:"cache,omitempty"`
	// Names are the secrets whose values it held; empty for a cache file,
	// which is searched inside the container for every value at once.
	Names []string `json:"names,omitempty"`
}

// SetupSecretFiles names the files removed after the first setup because
// they held a setup-only secret's value: paths and secret names, never
// values.
type SetupSecretFiles struct {
	Files []SecretFile `json:"files"`
}

// EventType implements Payload.
func (*SetupSecretFiles) EventType() string { return TypeSetupSecretFiles }

// EgressRefused is one connection refused to a setup command
// (docs/design.md §4.1): by the egress proxy (a host not on the
// allowlist), or by the firewall, for one that went around the proxy (its
// Reason starts "bypassed the proxy", its Host is an address). Its fields
// are sandbox.Refusal's, so one converts to the other.
type EgressRefused struct {
	Host    string `json:"host"`
	Port    int    `json:"port"`
	Phase   string `json:"phase"`
	Command string `json:"command,omitempty"`
	Reason  string `json:"reason"`
}

// EventType implements Payload.
func (*EgressRefused) EventType() string { return TypeEgressRefused }

// EgressRefusalsDropped counts the refusals of a run not recorded one by
// one, past the run's bounds: Count of them, to Hosts hosts (at least,
// when HostsAtLeast). It is written after the recorded ones.
type EgressRefusalsDropped struct {
	Count        int  `json:"count"`
	Hosts        int  `json:"hosts"`
	HostsAtLeast bool `json:"hosts_at_least,omitempty"`
}

// EventType implements Payload.
func (*EgressRefusalsDropped) EventType() string { return TypeEgressRefusalsDropped }

// ServiceLog is the tail of a service container's output, secrets
// withheld, written when the job's phases end, for the run page.
type ServiceLog struct {
	Name  string `json:"name"`
	Image string `json:"image"`
	Log   string `json:"log"`
}

// EventType implements Payload.
func (*ServiceLog) EventType() string { return TypeServiceLog }

// ImageResolved is one image of the job as it was resolved before
// anything started: every container of the job (the sandbox's, or the
// service's) was created from Use.
type ImageResolved struct {
	// Service names the service; empty for the sandbox's image.
	Service string `json:"service,omitempty"`
	// Ref is the image as configured; Use what the containers were
	// created from (NAME@sha256:…, or a local image ID).
	Ref string `json:"ref"`
	Use string `json:"use"`
	// Digest is the registry's manifest digest; empty for an image only
	// built or loaded on the engine.
	Digest string `json:"digest,omitempty"`
	// Pulled: the engine did not have it and pulled it for this job.
	Pulled bool `json:"pulled,omitempty"`
}

// EventType implements Payload.
func (*ImageResolved) EventType() string { return TypeImageResolved }
