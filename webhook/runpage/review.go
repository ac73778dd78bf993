package runpage

import (
	"fmt"
	"strings"

	"github.com/patchwright/patchwright/agent/ledger"
)

// showAdvisoryCheck shows one dependency looked up in the advisory
// database, with the advisories found.
func showAdvisoryCheck(r ledger.Record) (event, error) {
	p, err := decode[ledger.AdvisoryCheck](r)
	e := event{Kind: "review", Title: clean(fmt.Sprintf("Advisory database: %s %s %s", p.Ecosystem, p.Name, p.Version)), Meta: clean(p.Path)}
	switch {
	case p.Error != "":
		e.Failed, e.Meta = true, clean(p.Path+"; no answer: "+p.Error)
	case len(p.Advisories) == 0:
		e.Meta = clean(p.Path + "; no known advisory")
	default:
		e.Failed = true
		e.Table = &table{Head: []string{"advisory", "severity", "summary"}}
		for _, a := range p.Advisories {
			e.Table.Rows = append(e.Table.Rows, cleanAll(a.ID, a.Severity, a.Summary))
		}
	}
	if p.Cached {
		e.Meta += " (answered from the worker's cache)"
	}
	return e, err
}

// showReview shows the review model's pass: its model, cost and answer
// (data, shown as its fields' text, never as markup), or why there was
// none.
func showReview(r ledger.Record) (event, error) {
	p, err := decode[ledger.Review](r)
	if p.Skipped != "" {
		return event{Kind: "review", Title: "Review before publishing: off", Meta: clean(p.Skipped)}, err
	}
	meta := fmt.Sprintf("%s; %d input / %d output tokens; %d risks kept", p.Model, p.Usage.InputTokens, p.Usage.OutputTokens, p.Risks)
	if p.CostUSD != nil {
		meta += fmt.Sprintf("; $%.4f", *p.CostUSD)
	}
	e := event{Kind: "review", Title: "Review before publishing", Meta: clean(meta), Body: newBlock(fieldsText([]byte(p.Answer)))}
	if p.Error != "" {
		e.Failed, e.Title = true, clean("Review before publishing did not complete: "+p.Error)
	}
	if len(p.Ignored) > 0 {
		e.Details = append(e.Details, detail{Name: "left out of the answer", Body: newBlock(strings.Join(p.Ignored, "\n"))})
	}
	return e, err
}
