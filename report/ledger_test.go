package report

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/verify"
)

func readLog(t *testing.T, jsonl string) ledger.Log {
	t.Helper()
	log, err := ledger.Read(strings.NewReader(jsonl))
	if err != nil {
		t.Fatal(err)
	}
	return log
}

// TestLedgerRoundTrip writes check events with the runner's recorder and
// reads them back into a report input, as the pipeline will.
func TestLedgerRoundTrip(t *testing.T) {
	var buf strings.Builder
	w := ledger.New(&buf, ledger.Options{})
	rec := verify.LedgerRecorder{W: w}
	ctx := context.Background()
	flaky := verify.CheckResult{Name: "test", Command: "go test ./...", Phase: verify.Final, Ran: true, ExitCode: 1,
		Duration: 2 * time.Second, Runs: 3, Failures: 1, Flaky: true, Summary: &verify.TestSummary{Kind: verify.KindGo, Go: &verify.GoTestSummary{PackagesOK: []string{"m/a"}}}}
	for _, c := range []verify.CheckResult{
		{Name: "test", Command: "go test ./...", Phase: verify.Baseline, Ran: true, Passed: true, Runs: 1},
		flaky,
	} {
		if err := rec.RecordCheck(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.RecordNewTests(ctx, []verify.NewTestResult{{NewTest: verify.NewTest{Name: "TestN"}, Status: verify.FailsBefore}}); err != nil {
		t.Fatal(err)
	}
	in, err := FromLedger(readLog(t, buf.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Final) != 1 || !reflect.DeepEqual(in.Final[0], flaky) {
		t.Errorf("final = %+v, want %+v", in.Final, flaky)
	}
	if len(in.Baseline) != 1 || !in.Baseline[0].Passed || len(in.NewTests) != 1 || in.NewTests[0].Status != verify.FailsBefore {
		t.Errorf("input = %+v", in)
	}
}
