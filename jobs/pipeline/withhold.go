package pipeline

import (
	"context"
	"fmt"

	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/agent/secrets"
	"github.com/patchwright/patchwright/agent/verify"
	"github.com/patchwright/patchwright/report"
)

// withheld is what stands in for a text that holds what looks like a
// secret; "" when text holds none.
func withheld(sc *secrets.Scanner, name, text string) string {
	f := sc.Scan(name, text)
	if len(f) == 0 {
		return ""
	}
	return fmt.Sprintf("[output withheld: it holds what looks like a secret, rule %s, line %d]", f[0].RuleID, f[0].Line)
}

// withholdSecrets scans every text of the report that a command or the
// model wrote (the summary, each check's output) before anything is
// posted, and replaces a text that holds what looks like a secret with a
// sentence naming the rule: a test that prints .env must not publish it.
func withholdSecrets(in *report.Input) error {
	sc, err := secrets.Default()
	if err != nil {
		return err
	}
	if f := sc.Scan("summary", in.Summary); len(f) > 0 {
		in.Summary = fmt.Sprintf("(The model's summary was withheld: it holds what looks like a secret, rule %s.)", f[0].RuleID)
	}
	for _, list := range [][]verify.CheckResult{in.Baseline, in.Final} {
		for i := range list {
			if w := withheld(sc, list[i].Name, list[i].Output); w != "" {
				list[i].Output = w
			}
		}
	}
	for i := range in.NewTests {
		if w := withheld(sc, in.NewTests[i].Name, in.NewTests[i].Output); w != "" {
			in.NewTests[i].Output = w
		}
	}
	return nil
}

// scanningRecorder writes check results to the ledger with the output of
// any check that printed a secret withheld, so the ledger (kept, and shown
// on run pages) never holds one either.
type scanningRecorder struct {
	w  *ledger.Writer
	sc *secrets.Scanner
}

// RecordCheck implements verify.Recorder.
func (s scanningRecorder) RecordCheck(ctx context.Context, c verify.CheckResult) error {
	if w := withheld(s.sc, c.Name, c.Output); w != "" {
		c.Output = w
	}
	return verify.LedgerRecorder{W: s.w}.RecordCheck(ctx, c)
}

// RecordNewTests records new tests' runs on the original code, withheld
// likewise.
func (s scanningRecorder) RecordNewTests(ctx context.Context, results []verify.NewTestResult) error {
	out := make([]verify.NewTestResult, len(results))
	for i, r := range results {
		if w := withheld(s.sc, r.Name, r.Output); w != "" {
			r.Output = w
		}
		out[i] = r
	}
	return verify.LedgerRecorder{W: s.w}.RecordNewTests(ctx, out)
}
