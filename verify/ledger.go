package verify

import (
	"context"

	"github.com/patchwright/patchwright/agent/ledger"
)

// Ledger event types written by the verification runner.
const (
	// TypeCheck is one check's result in one phase (CheckEvent).
	TypeCheck = "check"
	// TypeNewTest is one new test's run against the original code
	// (NewTestEvent).
	TypeNewTest = "new_test_before"
)

func init() {
	ledger.Register(TypeCheck, func() ledger.Payload { return new(CheckEvent) })
	ledger.Register(TypeNewTest, func() ledger.Payload { return new(NewTestEvent) })
}

// CheckEvent is a CheckResult as a ledger event; its fields are those of
// CheckResult's JSON form.
type CheckEvent struct{ CheckResult }

// EventType implements ledger.Payload.
func (*CheckEvent) EventType() string { return TypeCheck }

// NewTestEvent is a NewTestResult as a ledger event.
type NewTestEvent struct{ NewTestResult }

// EventType implements ledger.Payload.
func (*NewTestEvent) EventType() string { return TypeNewTest }

// LedgerRecorder appends every check result to a run's ledger. It is safe
// for concurrent use because ledger.Writer is.
type LedgerRecorder struct {
	W *ledger.Writer
}

// RecordCheck implements Recorder.
func (l LedgerRecorder) RecordCheck(_ context.Context, r CheckResult) error {
	_, err := l.W.Append(&CheckEvent{r})
	return err
}

// RecordNewTests appends each new test's result against the original code.
func (l LedgerRecorder) RecordNewTests(_ context.Context, results []NewTestResult) error {
	for _, r := range results {
		if _, err := l.W.Append(&NewTestEvent{r}); err != nil {
			return err
		}
	}
	return nil
}
