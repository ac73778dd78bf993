package eval

import (
	"math"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// The published worked examples: Newcombe (1998), "Two-sided confidence
// intervals for the single proportion", Table I (Wilson score method
// without continuity correction), and the figures.
func TestWilsonMatchesPublishedExamples(t *testing.T) {
	cases := []struct {
		k, n   int
		lo, hi float64
	}{
		{26, 40, 0.495, 0.779},
		{12, 12, 0.758, 1.0},
		{81, 263, 0.2553, 0.3662}, // Newcombe's 81/263
		{15, 148, 0.0624, 0.1605}, // Newcombe's 15/148
		{0, 20, 0, 0.1611},        // Newcombe's 0/20
		{1, 29, 0.0061, 0.1718},   // Newcombe's 1/29
		{9, 12, 0.468, 0.911},     // docs/design.md §4.9's example
	}
	for _, c := range cases {
		lo, hi := Wilson(c.k, c.n)
		if !near(lo, c.lo, 0.0006) || !near(hi, c.hi, 0.0006) {
			t.Errorf("Wilson(%d, %d) = [%.4f, %.4f], want [%.4f, %.4f]", c.k, c.n, lo, hi, c.lo, c.hi)
		}
	}
}

func TestWilsonEdges(t *testing.T) {
	if lo, hi := Wilson(0, 0); lo != 0 || hi != 1 {
		t.Errorf("Wilson(0, 0) = [%v, %v], want [0, 1]", lo, hi)
	}
	if lo, hi := Wilson(5, 5); hi != 1 || lo <= 0 {
		t.Errorf("Wilson(5, 5) = [%v, %v]: want a positive lower bound and 1", lo, hi)
	}
}

func TestMcNemarExact(t *testing.T) {
	cases := []struct {
		b, c int
		p    float64
	}{
		{8, 3, 0.2266},    // 2 * (1+11+55+165)/2048
		{3, 8, 0.2266},    // symmetric
		{10, 0, 0.001953}, // 2/1024
		{0, 0, 1},
		{5, 5, 1},       // capped at 1
		{9, 1, 0.02148}, // 2 * 11/1024
		{300, 250, 0.03658},
	}
	for _, c := range cases {
		if p := McNemar(c.b, c.c); !near(p, c.p, 0.00005+c.p*0.001) {
			t.Errorf("McNemar(%d, %d) = %.5f, want %.5f", c.b, c.c, p, c.p)
		}
	}
}
