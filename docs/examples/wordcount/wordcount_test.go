package wordcount

import "testing"

func TestCount(t *testing.T) {
	tests := map[string]int{
		"":                   0,
		"one":                1,
		"two words":          2,
		"  padded  ":         1,
		"tabs\tand\nlines":   3,
		"repeated    spaces": 2,
	}
	for in, want := range tests {
		if got := Count(in); got != want {
			t.Errorf("Count(%q) = %d, want %d", in, got, want)
		}
	}
}
