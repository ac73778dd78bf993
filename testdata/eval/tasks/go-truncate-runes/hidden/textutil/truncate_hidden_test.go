package textutil

import (
	"testing"
	"unicode/utf8"
)

func TestHiddenTruncateCountsRunes(t *testing.T) {
	cases := []struct {
		in   string
		n    int
		want string
	}{
		{"héllo", 2, "hé"},
		{"日本語テキスト", 3, "日本語"},
		{"naïve café", 10, "naïve café"},
		{"ab", 0, ""},
	}
	for _, c := range cases {
		got := Truncate(c.in, c.n)
		if got != c.want || !utf8.ValidString(got) {
			t.Errorf("Truncate(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}
