package eval

import (
	"fmt"
	"slices"
	"strings"
)

// Alpha is the significance level of Compare's verdict.
const Alpha = 0.05

// Comparison is a paired comparison of two evaluations on the tasks both
// scored.
type Comparison struct {
	A, B string
	// Pairs counts (task, run) pairs scored in both.
	Pairs int
	// Tasks counts the tasks paired.
	Tasks int
	// OnlyInA and OnlyInB are tasks scored in one evaluation only.
	OnlyInA, OnlyInB []string
	// Both, OnlyA, OnlyB and Neither split the pairs by who resolved them;
	// OnlyA and OnlyB are the discordant pairs.
	Both, OnlyA, OnlyB, Neither int
	// P is the exact two-sided McNemar p-value.
	P float64
	// Significant is P < Alpha.
	Significant bool
}

// Compare pairs the runs of two evaluations by task and run number. Only
// pairs carry information about the difference: the same task is easy or
// hard for both, which an unpaired comparison of the two rates ignores.
func Compare(a, b *Report) Comparison {
	c := Comparison{A: a.Model, B: b.Model}
	ra, rb := resultsByKey(a), resultsByKey(b)
	ta, tb := map[string]bool{}, map[string]bool{}
	for k := range ra {
		ta[k.task] = true
	}
	for k := range rb {
		tb[k.task] = true
	}
	paired := map[string]bool{}
	for k, x := range ra {
		y, ok := rb[k]
		if !ok {
			continue
		}
		paired[k.task] = true
		c.Pairs++
		switch {
		case x && y:
			c.Both++
		case x:
			c.OnlyA++
		case y:
			c.OnlyB++
		default:
			c.Neither++
		}
	}
	c.Tasks = len(paired)
	c.OnlyInA, c.OnlyInB = missing(ta, tb), missing(tb, ta)
	c.P = McNemar(c.OnlyA, c.OnlyB)
	c.Significant = c.Pairs > 0 && c.P < Alpha
	return c
}

type runKey struct {
	task string
	run  int
}

func resultsByKey(r *Report) map[runKey]bool {
	m := map[runKey]bool{}
	for _, x := range r.Results {
		m[runKey{x.Task, x.Run}] = x.Resolved
	}
	return m
}

// missing lists the tasks of a that b lacks, sorted.
func missing(a, b map[string]bool) []string {
	out := []string{}
	for t := range a {
		if !b[t] {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

// Verdict is the one-line conclusion.
func (c Comparison) Verdict() string {
	switch {
	case c.Pairs == 0:
		return "nothing to compare: no task was scored in both"
	case !c.Significant:
		return fmt.Sprintf("not distinguishable from noise (p = %.3f ≥ %.2f)", c.P, Alpha)
	case c.OnlyB > c.OnlyA:
		return fmt.Sprintf("B resolves more than A: significant (p = %.3g < %.2f)", c.P, Alpha)
	}
	return fmt.Sprintf("A resolves more than B: significant (p = %.3g < %.2f)", c.P, Alpha)
}

// Text is what `patchwright eval compare` prints.
func (c Comparison) Text() string {
	var b strings.Builder
	rate := func(k int) string {
		if c.Pairs == 0 {
			return "-"
		}
		lo, hi := Wilson(k, c.Pairs)
		return fmt.Sprintf("%d/%d = %s (95%% interval %s–%s)", k, c.Pairs, pct(float64(k)/float64(c.Pairs)), pct(lo), pct(hi))
	}
	fmt.Fprintf(&b, "A: %s: %s\n", c.A, rate(c.Both+c.OnlyA))
	fmt.Fprintf(&b, "B: %s: %s\n", c.B, rate(c.Both+c.OnlyB))
	fmt.Fprintf(&b, "paired: %d runs on %d tasks\n", c.Pairs, c.Tasks)
	fmt.Fprintf(&b, "only in A (not compared): %s\n", list(c.OnlyInA))
	fmt.Fprintf(&b, "only in B (not compared): %s\n", list(c.OnlyInB))
	fmt.Fprintf(&b, "both resolved %d · only A %d · only B %d · neither %d\n", c.Both, c.OnlyA, c.OnlyB, c.Neither)
	fmt.Fprintf(&b, "discordant pairs: %d (A only %d, B only %d); exact two-sided McNemar p = %.4f\n", c.OnlyA+c.OnlyB, c.OnlyA, c.OnlyB, c.P)
	fmt.Fprintf(&b, "verdict: %s\n", c.Verdict())
	return b.String()
}

func list(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
