package eval

import "math"

// z95 is the standard normal quantile for a two-sided 95% interval.
const z95 = 1.959963984540054

// Wilson returns the 95% Wilson score interval for k successes in n
// trials. It is used instead of the normal approximation because it stays
// inside [0, 1] and keeps a useful width at 0 and n successes, which small
// suites hit often (12 of 12 gives 75.8%-100%, not 100%-100%). n == 0
// gives the uninformative [0, 1].
func Wilson(k, n int) (lo, hi float64) {
	if n <= 0 {
		return 0, 1
	}
	p := float64(k) / float64(n)
	nf := float64(n)
	z2 := z95 * z95
	den := 1 + z2/nf
	center := (p + z2/(2*nf)) / den
	half := z95 * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf)) / den
	return math.Max(0, center-half), math.Min(1, center+half)
}

// McNemar returns the exact two-sided McNemar p-value for b and c
// discordant pairs (A resolved and B not, and the reverse): under the null
// hypothesis each discordant pair goes either way with probability 1/2, so
// the p-value is twice the binomial tail of the smaller count, capped at 1.
// Concordant pairs carry no information about the difference and are not
// an argument. No discordant pairs gives 1.
func McNemar(b, c int) float64 {
	n := b + c
	if n == 0 {
		return 1
	}
	k := min(b, c)
	sum := 0.0
	for i := 0; i <= k; i++ {
		sum += math.Exp(logChoose(n, i) - float64(n)*math.Ln2)
	}
	return math.Min(1, 2*sum)
}

// logChoose is ln(n choose k), through the log-gamma function so that
// large suites do not overflow.
func logChoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}
