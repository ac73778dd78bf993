package report

import (
	"fmt"
	"strings"

	"github.com/patchwright/patchwright/report/marker"
)

// Plan is what a plan comment shows.
type Plan struct {
	Issue       int
	Task        string
	RequestedBy string
	// Text is the model's plan (tools.PlanText); "" when it made none,
	// and Reason then says why.
	Text   string
	Reason string
	RunURL string
	// CostUSD is the run's estimated model cost; nil without a price.
	CostUSD *float64
	// Revised: the plan revises the issue's earlier one (`/agent retry`
	// while it waited) and replaces it for `/agent approve`.
	Revised bool
}

// maxPlanBytes bounds the plan text shown.
const maxPlanBytes = 12000

// ShownPlan is the part of a plan text its comment shows, which is what an
// approval approves.
func ShownPlan(text string) string {
	shown, _ := truncate(strings.TrimSpace(text), maxPlanBytes)
	return shown
}

// PlanComment renders the comment a planning run posts on the issue. The
// plan is the model's words, shown as inert prose; the comment says
// plainly that nothing was changed and what to comment next.
func PlanComment(p Plan) (string, error) {
	var b strings.Builder
	b.WriteString(marker.Plan(p.Issue, p.Task) + "\n")
	if strings.TrimSpace(p.Text) == "" {
		fmt.Fprintf(&b, "**Patchwright made no plan.** %s\n\nNothing was changed. Comment `/agent plan` to try again.\n", plain(p.Reason))
	} else {
		text, cut := truncate(strings.TrimSpace(p.Text), maxPlanBytes)
		if p.Revised {
			b.WriteString("## Revised plan\n\n")
		} else {
			b.WriteString("## Proposed plan\n\n")
		}
		if p.RequestedBy != "" {
			fmt.Fprintf(&b, "Asked for by @%s. ", marker.Value(p.RequestedBy))
		}
		if p.Revised {
			b.WriteString("It revises the earlier plan with the changes asked for and replaces it: `/agent approve` now approves this one. ")
		}
		b.WriteString("This plan comes from a run that could only read the repository: no file was changed, nothing was pushed and no pull request was opened. It is the model's proposal, not checked by anything.\n\n")
		b.WriteString(prose(text) + "\n")
		if cut {
			b.WriteString("\n(The plan was cut here: it was too long.)\n")
		}
		b.WriteString("\n" + planWaiting + " A writer can comment `/agent approve [notes]` to start the attempt with this plan, `/agent retry [changes]` for a revised plan, or `/agent plan [changes]` for a new one.\n")
	}
	fmt.Fprintf(&b, "\nEstimated model cost of the plan: %s.\n", cost(p.CostUSD))
	if u := safeURL(p.RunURL); u != "" {
		fmt.Fprintf(&b, "\n[Run log](%s)\n", u)
	}
	return fit(b.String(), nil)
}

// A plan comment's status is one line: planWaiting when it is posted,
// then one of the settled statuses PlanSettled writes, each starting
// with one of these (so a second settling finds the line again).
const planWaiting = "**Waiting for approval.**"

var planStatusStarts = []string{planWaiting, "**Replaced.**", "**Approved by @", "**Set aside.**"}

// maxNotesBytes bounds the approver's notes a plan comment shows.
const maxNotesBytes = 1000

// PlanSettlement is what became of a waiting plan; one of its fields is
// set.
type PlanSettlement struct {
	// ReplacedBy is the comment ID of the plan that replaced this one.
	ReplacedBy int64
	// ApprovedBy approved the plan, with Notes (may be empty).
	ApprovedBy, Notes string
	// SetAsideBy labelled the issue for a solve without the plan.
	SetAsideBy string
}

func (s PlanSettlement) line() string {
	switch {
	case s.ReplacedBy != 0:
		return fmt.Sprintf("**Replaced.** A newer plan replaced this one: see [the newer plan](#issuecomment-%d). `/agent approve` approves that one, not this.", s.ReplacedBy)
	case s.ApprovedBy != "":
		line := fmt.Sprintf("**Approved by @%s.** The attempt follows this plan as Patchwright kept it when it was posted", marker.Value(s.ApprovedBy))
		notes, cut := truncate(oneLine(s.Notes), maxNotesBytes)
		if notes == "" {
			return line + ", with no notes."
		}
		if cut {
			notes += " …"
		}
		return line + ", with these notes: " + plain(notes)
	}
	return fmt.Sprintf("**Set aside.** @%s labelled the issue for a solve without this plan: that attempt does not follow it. Comment `/agent plan` for a new plan.", marker.Value(s.SetAsideBy))
}

// PlanSettled is a plan comment's body with its status line saying what
// became of the plan. The rest of body is kept as it is (a writer may have
// edited it); a body whose status line is gone gets the status at its
// end. The last status line is ours: the plan above it is the model's.
// The plan's marker stays, wherever a writer moved it.
func PlanSettled(body string, s PlanSettlement) (string, error) {
	lines := strings.Split(body, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := lines[i]
		for _, start := range planStatusStarts {
			if strings.HasPrefix(l, start) {
				lines[i] = s.line()
				return fit(marker.Keep(body, strings.Join(lines, "\n")), nil)
			}
		}
	}
	return fit(strings.TrimRight(body, "\n")+"\n\n"+s.line()+"\n", nil)
}
