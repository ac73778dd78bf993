package report

import (
	"testing"

	"github.com/patchwright/patchwright/agent/ledger"
)

// reviewLine says the review ran with its model and cost, that it was
// off, or that it did not complete and why, with the error escaped; the
// advisory lookups are counted.
func TestReviewLine(t *testing.T) {
	usd := 0.042
	for name, c := range map[string]struct {
		records []ledger.Payload
		want    string
	}{
		"none": {nil, ""},
		"ran": {[]ledger.Payload{
			&ledger.AdvisoryCheck{Name: "lodash"}, &ledger.AdvisoryCheck{Name: "left-pad", Error: "502"},
			&ledger.Review{Model: "openai:gpt-4.1-mini", CostUSD: &usd, Risks: 1},
		}, "Review before publishing: `openai:gpt-4.1-mini` read the issue, the diff and the findings and reported 1 risk · about $0.04 · 2 dependencies looked up in the GitHub advisory database (1 without an answer)."},
		"off": {[]ledger.Payload{&ledger.Review{Skipped: "`review: off` in .github/agent.yml"}}, "Review before publishing: off (`review: off` in .github/agent.yml)."},
		"failed": {[]ledger.Payload{&ledger.Review{Model: "openai:m", Error: "the review model failed: <img src=x> @team"}},
			"Review before publishing: `openai:m` did not complete: the review model failed: &lt;img src=x&gt; @\u200bteam · cost unknown."},
	} {
		t.Run(name, func(t *testing.T) {
			var v Review
			for _, p := range c.records {
				v.add(p)
			}
			if got := reviewLine(v); got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}
