package text

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCuts(t *testing.T) {
	const e = "é" // two bytes
	for _, c := range []struct {
		s          string
		n          int
		head, tail string
	}{
		{"hello", 10, "hello", "hello"},
		{"hello", 5, "hello", "hello"},
		{"hello", 3, "hel", "llo"},
		{"hello", 0, "", ""},
		{"hello", -1, "", ""},
		{"", 3, "", ""},
		{"a" + e + "b", 2, "a", "b"}, // the cut would split é
		{"a" + e + "b", 3, "a" + e, e + "b"},
		{e + e, 1, "", ""},
		{"日本語", 4, "日", "語"}, // three-byte runes
		{"日本語", 6, "日本", "本語"},
	} {
		if got := Head(c.s, c.n); got != c.head {
			t.Errorf("Head(%q, %d) = %q, want %q", c.s, c.n, got, c.head)
		}
		if got := Tail(c.s, c.n); got != c.tail {
			t.Errorf("Tail(%q, %d) = %q, want %q", c.s, c.n, got, c.tail)
		}
	}
}

func TestMiddle(t *testing.T) {
	for _, c := range []struct {
		s          string
		n          int
		head, tail string
		dropped    int
	}{
		{"short", 10, "short", "", 0},
		{"0123456789", 4, "01", "89", 6},
		{"0123456789", 5, "012", "89", 5},
		{"ab日本語cd", 6, "ab", "cd", 9}, // both cuts back off a rune
		{"0123456789", 0, "", "", 10},
	} {
		head, tail, dropped := Middle(c.s, c.n)
		if head != c.head || tail != c.tail || dropped != c.dropped {
			t.Errorf("Middle(%q, %d) = %q, %q, %d; want %q, %q, %d", c.s, c.n, head, tail, dropped, c.head, c.tail, c.dropped)
		}
	}
}

func TestLine(t *testing.T) {
	for in, want := range map[string]string{
		"":                              "",
		"one":                           "one",
		"  two\nlines \r\n\tand  tabs ": "two lines and tabs",
		"\n\n":                          "",
	} {
		if got := Line(in); got != want {
			t.Errorf("Line(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzCuts: valid UTF-8 in, valid UTF-8 out, within n bytes, and the
// pieces are the input's own ends.
func FuzzCuts(f *testing.F) {
	f.Add("a日本語é", 4)
	f.Add("", 0)
	f.Add("x\ny", -3)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if !utf8.ValidString(s) {
			return
		}
		head, tail := Head(s, n), Tail(s, n)
		mh, mt, dropped := Middle(s, n)
		for _, out := range []string{head, tail, mh, mt, Line(s)} {
			if !utf8.ValidString(out) {
				t.Fatalf("invalid UTF-8 %q from %q, %d", out, s, n)
			}
		}
		limit := max(n, 0)
		if len(head) > limit || len(tail) > limit || (dropped > 0 && len(mh)+len(mt) > limit) {
			t.Fatalf("over %d bytes: %q, %q, %q+%q", n, head, tail, mh, mt)
		}
		if !strings.HasPrefix(s, head) || !strings.HasSuffix(s, tail) || !strings.HasPrefix(s, mh) || !strings.HasSuffix(s, mt) {
			t.Fatalf("not the ends of %q: %q, %q, %q, %q", s, head, tail, mh, mt)
		}
		if dropped > 0 && len(mh)+dropped+len(mt) != len(s) {
			t.Fatalf("Middle lost bytes: %q + %d + %q != %q", mh, dropped, mt, s)
		}
		if len(s) <= limit && (head != s || tail != s) {
			t.Fatalf("cut %q though it fits in %d", s, n)
		}
	})
}
