package tools

import (
	"context"
	"fmt"
	"strings"
)

// PlanParams are the parameters of submit_plan, the four parts of a plan.
type PlanParams struct {
	Files        []string `json:"files" jsonschema_description:"The files you would change or add, repository-relative, one per entry."`
	Approach     string   `json:"approach" jsonschema_description:"How you would resolve the issue: the change, in a few sentences or a short list."`
	Verification string   `json:"verification" jsonschema_description:"How the change will be verified: the checks and tests to run, the tests to add."`
	Risks        string   `json:"risks" jsonschema_description:"What could go wrong or is unclear; say so plainly when you see none."`
}

// Plan headings, in order: PlanText writes them and the plan comment
// shows them.
const (
	PlanFiles        = "Files to change"
	PlanApproach     = "Approach"
	PlanVerification = "How it will be verified"
	PlanRisks        = "Risks"
)

// PlanText renders a plan as the plain text the run records as its
// finish summary: the four parts under their headings.
func PlanText(p PlanParams) string {
	var b strings.Builder
	b.WriteString(PlanFiles + ":\n")
	for _, f := range p.Files {
		fmt.Fprintf(&b, "- %s\n", strings.TrimSpace(f))
	}
	fmt.Fprintf(&b, "\n%s:\n%s\n\n%s:\n%s\n\n%s:\n%s\n", PlanApproach, strings.TrimSpace(p.Approach),
		PlanVerification, strings.TrimSpace(p.Verification), PlanRisks, strings.TrimSpace(p.Risks))
	return b.String()
}

func (s *Set) submitPlan(_ context.Context, p PlanParams) (Result, error) {
	var missing []string
	files := p.Files[:0:0]
	for _, f := range p.Files {
		if strings.TrimSpace(f) != "" {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		missing = append(missing, "files")
	}
	for _, part := range []struct{ name, text string }{{"approach", p.Approach}, {"verification", p.Verification}, {"risks", p.Risks}} {
		if strings.TrimSpace(part.text) == "" {
			missing = append(missing, part.name)
		}
	}
	if len(missing) > 0 {
		return fail(InvalidArguments, "the plan lacks "+strings.Join(missing, ", "), "fill in every part of the plan: files, approach, verification and risks"), nil
	}
	p.Files = files
	return Result{
		Text:   "plan submitted. It is posted on the issue for people to approve; no further tool calls are needed.",
		Finish: &FinishRecord{Summary: PlanText(p)},
	}, nil
}
