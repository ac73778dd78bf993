package report

import (
	"fmt"

	"github.com/patchwright/patchwright/agent/ledger"
)

// Review is what the review before publishing recorded: the model's pass
// (or why there was none) and the advisory lookups.
type Review struct {
	// Ran: the ledger holds the review's record; false when the operator
	// gave no review model (nothing was recorded).
	Ran bool
	// Model and CostUSD are the review model's; CostUSD nil when unknown.
	Model   string
	CostUSD *float64
	// OverBudget: the pass cost more than BudgetUSD, its budget.
	OverBudget bool
	BudgetUSD  float64
	// Risks counts the risks the model reported that were kept.
	Risks int
	// Error says why the pass did not complete; Skipped why none was made.
	Error, Skipped string
	// Looked counts the dependencies looked up in the advisory database,
	// Unanswered those it could not answer for.
	Looked, Unanswered int
}

// add takes a review or advisory record of the ledger.
func (v *Review) add(p ledger.Payload) {
	switch e := p.(type) {
	case *ledger.Review:
		v.Ran, v.Model, v.CostUSD, v.Risks = true, e.Model, e.CostUSD, e.Risks
		v.Error, v.Skipped = e.Error, e.Skipped
		v.OverBudget, v.BudgetUSD = e.OverBudget, e.BudgetUSD
	case *ledger.AdvisoryCheck:
		v.Looked++
		if e.Error != "" {
			v.Unanswered++
		}
	}
}

// reviewLine is the body's sentence on the review before publishing;
// "" when none was recorded.
func reviewLine(v Review) string {
	if !v.Ran {
		return ""
	}
	if v.Skipped != "" {
		return say("Review before publishing: off (", spanned(v.Skipped), ").").markdown()
	}
	f := say("Review before publishing: ", value(v.Model))
	if v.Error != "" {
		f = append(f, " did not complete: ", text(v.Error))
	} else {
		f = append(f, fmt.Sprintf(" read the issue, the diff and the findings and reported %d risk%s", v.Risks, plural(v.Risks)))
	}
	f = append(f, " · "+cost(v.CostUSD))
	if v.OverBudget {
		f = append(f, fmt.Sprintf(", over its budget of $%.2f", v.BudgetUSD))
	}
	if v.Looked > 0 {
		f = append(f, fmt.Sprintf(" · %d dependenc%s looked up in the GitHub advisory database", v.Looked, map[bool]string{true: "y", false: "ies"}[v.Looked == 1]))
		if v.Unanswered > 0 {
			f = append(f, fmt.Sprintf(" (%d without an answer)", v.Unanswered))
		}
	}
	return append(f, ".").markdown()
}
