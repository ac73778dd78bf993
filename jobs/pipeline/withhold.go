package pipeline

import (
	"fmt"

	"github.com/patchwright/patchwright/agent/secrets"
	"github.com/patchwright/patchwright/agent/verify"
	"github.com/patchwright/patchwright/report"
)

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
			if f := sc.Scan(list[i].Name, list[i].Output); len(f) > 0 {
				list[i].Output = fmt.Sprintf("[output withheld: it holds what looks like a secret, rule %s]", f[0].RuleID)
			}
		}
	}
	for i := range in.NewTests {
		if f := sc.Scan(in.NewTests[i].Name, in.NewTests[i].Output); len(f) > 0 {
			in.NewTests[i].Output = fmt.Sprintf("[output withheld: it holds what looks like a secret, rule %s]", f[0].RuleID)
		}
	}
	return nil
}
