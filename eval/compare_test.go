package eval

import (
	"fmt"
	"strings"
	"testing"
)

// pairedReports builds two reports on the same n tasks: both resolve the
// first both, then onlyA tasks only A resolves, then onlyB only B does.
func pairedReports(n, both, onlyA, onlyB int) (*Report, *Report) {
	a, b := &Report{Model: "openai:a"}, &Report{Model: "openai:b"}
	for i := range n {
		id := fmt.Sprintf("t%03d", i)
		ra := i < both || (i >= both && i < both+onlyA)
		rb := i < both || (i >= both+onlyA && i < both+onlyA+onlyB)
		a.Results = append(a.Results, Result{Task: id, Run: 1, Resolved: ra})
		b.Results = append(b.Results, Result{Task: id, Run: 1, Resolved: rb})
	}
	return a, b
}

func TestCompareEightToThreeIsNoise(t *testing.T) {
	a, b := pairedReports(40, 15, 8, 3)
	c := Compare(a, b)
	if c.Pairs != 40 || c.Both != 15 || c.OnlyA != 8 || c.OnlyB != 3 || c.Neither != 14 {
		t.Fatalf("counts %+v", c)
	}
	if !near(c.P, 0.227, 0.0005) || c.Significant {
		t.Errorf("p %.4f significant %v, want 0.227 and not significant", c.P, c.Significant)
	}
	if !strings.Contains(c.Text(), "verdict: not distinguishable from noise (p = 0.227 ≥ 0.05)") {
		t.Errorf("text:\n%s", c.Text())
	}
}

func TestCompareTenToZeroIsSignificant(t *testing.T) {
	a, b := pairedReports(30, 10, 0, 10)
	c := Compare(a, b)
	if !c.Significant || !near(c.P, 0.00195, 0.00001) {
		t.Fatalf("p %.5f significant %v", c.P, c.Significant)
	}
	if v := c.Verdict(); !strings.Contains(v, "B resolves more than A: significant") {
		t.Errorf("verdict %q", v)
	}
	if v := Compare(b, a).Verdict(); !strings.Contains(v, "A resolves more than B: significant") {
		t.Errorf("reversed verdict %q", v)
	}
}

// The same rates unpaired can hide or show a difference; the verdict
// depends on the discordant pairs only.
func TestCompareUsesPairsNotRates(t *testing.T) {
	// Both resolve 20 of 40, but on entirely different tasks: 20
	// discordant each way, no evidence of a difference.
	a, b := pairedReports(40, 0, 20, 20)
	if c := Compare(a, b); c.Significant || c.P != 1 {
		t.Errorf("equal split: p %v significant %v", c.P, c.Significant)
	}
}

func TestCompareListsUnpairedTasks(t *testing.T) {
	a, b := pairedReports(5, 2, 1, 1)
	a.Results = append(a.Results, Result{Task: "only-a", Run: 1, Resolved: true})
	b.Results = append(b.Results, Result{Task: "only-b", Run: 1})
	b.Results = append(b.Results, Result{Task: "t000", Run: 2, Resolved: true}) // no partner run
	c := Compare(a, b)
	if c.Pairs != 5 || c.Tasks != 5 || strings.Join(c.OnlyInA, ",") != "only-a" || strings.Join(c.OnlyInB, ",") != "only-b" {
		t.Fatalf("%+v", c)
	}
	text := c.Text()
	for _, want := range []string{"only in A (not compared): only-a", "only in B (not compared): only-b", "paired: 5 runs on 5 tasks", "discordant pairs: 2 (A only 1, B only 1)"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if v := Compare(&Report{Model: "x"}, &Report{Model: "y"}).Verdict(); !strings.Contains(v, "nothing to compare") {
		t.Errorf("empty verdict %q", v)
	}
}

func TestPlotOfTwoConfigurationsNamesEachRow(t *testing.T) {
	a, b := sampleReport(), sampleReport()
	b.Model = "anthropic:claude-sonnet-4-5"
	svg := string(Plot([]*Report{a, b}))
	for _, want := range []string{">all · openai:gpt-4.1<", ">all · anthropic:claude-sonnet-4-5<", ">category: bug · openai:gpt-4.1<"} {
		if !strings.Contains(svg, want) {
			t.Errorf("plot lacks %q", want)
		}
	}
	b.Model = a.Model
	if svg := string(Plot([]*Report{a, b})); !strings.Contains(svg, "openai:gpt-4.1 (B)") {
		t.Error("two configurations of one model are not told apart")
	}
}
