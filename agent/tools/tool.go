// Package tools is the set of tools the model sees (docs/design.md §4.4): their
// parameter structs, descriptions and implementations over the sandbox.
package tools

import (
	"context"
	"encoding/json"

	"github.com/patchwright/patchwright/agent/ledger"
)

// Tool is one tool the model may call.
type Tool interface {
	// Name is the tool's name in the contract, for example "read_file".
	Name() string
	// Description tells the model what the tool does and when to use it.
	Description() string
	// Schema is the JSON Schema of the parameters, derived from the tool's
	// parameter struct (the only source of it).
	Schema() json.RawMessage
	// Call runs the tool. Mistakes the model can fix (a bad path, an edit
	// that does not match) are a Result with a Code; the error is for
	// infrastructure failures that must end the run.
	Call(ctx context.Context, args json.RawMessage) (Result, error)
}

// Code is the machine-readable reason a tool call failed (docs/design.md §4.4).
type Code = ledger.ErrorCode

// Error codes of the contract. The text of a failed Result starts with
// "error: CODE".
const (
	NoMatch          Code = "no_match"
	AmbiguousMatch   Code = "ambiguous_match"
	StaleFile        Code = "stale_file"
	PathDenied       Code = "path_denied"
	NotFound         Code = "not_found"
	CommandDenied    Code = "command_denied"
	Timeout          Code = "timeout"
	TooLarge         Code = "too_large"
	InvalidArguments Code = "invalid_arguments"
	// SecretDetected: the output held something the secret rules match;
	// it was withheld from the model, and the result names the rule and
	// where, never the secret.
	SecretDetected Code = "secret_detected"
)

// Result is what a tool call returned to the model, plus the facts the
// ledger records about it.
type Result struct {
	// Text is exactly what the model sees.
	Text string
	// Code is empty on success.
	Code Code
	// Commands lists what ran in the sandbox for this call (run, verify).
	Commands []CommandRecord
	// Finish is set by the finish tool: the loop ends after this call.
	Finish *FinishRecord
	// Changed lists workspace paths the call wrote or deleted.
	Changed []string
	// Secrets are the findings that withheld this result (Code
	// SecretDetected): rule and location, never the secret.
	Secrets []SecretFinding

	// scanned marks a result whose tool scanned it already, so the
	// set's guard does not scan the same bytes twice.
	scanned bool
}

// SecretFinding says where output held what looks like a secret.
type SecretFinding struct {
	// Rule is the gitleaks rule ID, for example "aws-access-token".
	Rule string `json:"rule"`
	// Where is a location for people: "config/app.go line 12" or
	// "output of command `cat .env`, line 3".
	Where string `json:"where"`
}

// CommandRecord is one command that ran in the sandbox, as the ledger
// records it.
type CommandRecord = ledger.CommandRecord

// FinishRecord is the model's closing statement. It is the model's claim,
// never evidence.
type FinishRecord struct {
	Summary string `json:"summary"`
}
