package report

import (
	"strings"
	"testing"

	"github.com/patchwright/patchwright/report/marker"
)

func TestPlanComment(t *testing.T) {
	usd := 0.5
	body, err := PlanComment(Plan{Issue: 3, Task: "d-1", RequestedBy: "alice", Text: "Files to change:\n- a.go\n\nApproach:\nSee @bob and ![x](https://evil.example/p.png)", CostUSD: &usd})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{marker.Plan(3, "d-1"), "## Proposed plan", "@alice", "no file was changed", "- a.go", "`/agent approve [notes]`", "about $0.50"} {
		if !strings.Contains(body, want) {
			t.Errorf("plan comment lacks %q:\n%s", want, body)
		}
	}
	// The model's words are inert: no mention, no image.
	if strings.Contains(body, "@bob") || strings.Contains(body, "![x](") {
		t.Errorf("model text not defused:\n%s", body)
	}
	none, err := PlanComment(Plan{Issue: 3, Task: "d-1", Reason: "the model stopped at the step cap"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(none, "made no plan") || !strings.Contains(none, "step cap") || strings.Contains(none, "approve") {
		t.Errorf("no-plan comment:\n%s", none)
	}
}

// A revised plan says so and that it is the one an approval now takes; a
// first plan does not.
func TestRevisedPlanComment(t *testing.T) {
	body, err := PlanComment(Plan{Issue: 3, Task: "d-2", RequestedBy: "alice", Text: "Approach:\nUse a flag.", Revised: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{marker.Plan(3, "d-2"), "## Revised plan", "replaces it", "`/agent retry [changes]`"} {
		if !strings.Contains(body, want) {
			t.Errorf("revised plan comment lacks %q:\n%s", want, body)
		}
	}
	first, err := PlanComment(Plan{Issue: 3, Task: "d-1", Text: "Approach:\nUse a flag."})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(first, "Revised") || strings.Contains(first, "replaces") {
		t.Errorf("a first plan reads as revised:\n%s", first)
	}
}

// A settled plan's status line says what became of it, replacing the
// waiting line (and a line of the model's plan that looks like a status
// stays), and a second settling replaces the first.
func TestPlanSettled(t *testing.T) {
	body, err := PlanComment(Plan{Issue: 3, Task: "d-1", Text: "Approach:\n**Set aside.** not ours"})
	if err != nil {
		t.Fatal(err)
	}
	replaced, err := PlanSettled(body, PlanSettlement{ReplacedBy: 42})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{marker.Plan(3, "d-1"), "**Replaced.**", "(#issuecomment-42)", "**Set aside.** not ours", "Estimated model cost"} {
		if !strings.Contains(replaced, want) {
			t.Errorf("replaced plan lacks %q:\n%s", want, replaced)
		}
	}
	if strings.Contains(replaced, "Waiting for approval") {
		t.Errorf("a replaced plan still waits:\n%s", replaced)
	}
	approved, err := PlanSettled(replaced, PlanSettlement{ApprovedBy: "bob", Notes: "keep\nthe [flag](https://x.example)"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(approved, "**Approved by @bob.**") || !strings.Contains(approved, "with these notes: keep the \\[flag\\]") || strings.Contains(approved, "Replaced") {
		t.Errorf("approved plan:\n%s", approved)
	}
	aside, err := PlanSettled("edited away", PlanSettlement{SetAsideBy: "carol"})
	if err != nil || aside != "edited away\n\n**Set aside.** @carol labelled the issue for a solve without this plan: that attempt does not follow it. Comment `/agent plan` for a new plan.\n" {
		t.Errorf("a body without a status line: %q %v", aside, err)
	}
}
