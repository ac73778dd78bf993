package verify

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/patchwright/patchwright/agent/ledger"
)

// CheckPayload is r as a ledger event (ledger.TypeCheck): its fields are
// CheckResult's JSON form.
func CheckPayload(r CheckResult) (*ledger.CheckEvent, error) {
	fields, err := ledger.ObjectOf(r)
	if err != nil {
		return nil, fmt.Errorf("check %s as a ledger event: %w", r.Name, err)
	}
	return &ledger.CheckEvent{Fields: fields}, nil
}

// CheckFrom reads a check event back.
func CheckFrom(e *ledger.CheckEvent) (CheckResult, error) {
	var r CheckResult
	err := r.UnmarshalJSON(e.Fields)
	return r, err
}

// NewTestPayload is r as a ledger event (ledger.TypeNewTest).
func NewTestPayload(r NewTestResult) (*ledger.NewTestEvent, error) {
	fields, err := ledger.ObjectOf(r)
	if err != nil {
		return nil, fmt.Errorf("new test %s as a ledger event: %w", r.Name, err)
	}
	return &ledger.NewTestEvent{Fields: fields}, nil
}

// NewTestFrom reads a new test's event back.
func NewTestFrom(e *ledger.NewTestEvent) (NewTestResult, error) {
	var r NewTestResult
	if err := json.Unmarshal(e.Fields, &r); err != nil {
		return r, fmt.Errorf("decode new test: %w", err)
	}
	return r, nil
}

// LedgerRecorder appends every check result to a run's ledger. It is safe
// for concurrent use because ledger.Writer is.
type LedgerRecorder struct {
	W *ledger.Writer
}

// RecordCheck implements Recorder.
func (l LedgerRecorder) RecordCheck(_ context.Context, r CheckResult) error {
	p, err := CheckPayload(r)
	if err == nil {
		_, err = l.W.Append(p)
	}
	return err
}

// RecordNewTests appends each new test's result against the original code.
func (l LedgerRecorder) RecordNewTests(_ context.Context, results []NewTestResult) error {
	for _, r := range results {
		p, err := NewTestPayload(r)
		if err != nil {
			return err
		}
		if _, err := l.W.Append(p); err != nil {
			return err
		}
	}
	return nil
}
