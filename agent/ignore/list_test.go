package ignore

import "testing"

func TestListExcluded(t *testing.T) {
	l := NewList([]string{"customer-data/", "*.csv", "/vendor/licensed/**", "docs/private.md", ""})
	cases := map[string]struct {
		rel   string
		isDir bool
		want  bool
	}{
		"directory pattern, the directory":    {"customer-data", true, true},
		"directory pattern, a file so named":  {"customer-data", false, false},
		"directory pattern, deeper directory": {"a/customer-data", true, true},
		"basename glob at the root":           {"x.csv", false, true},
		"basename glob deep":                  {"a/b/x.csv", false, true},
		"anchored doublestar":                 {"vendor/licensed/lib/a.go", false, true},
		"anchored, elsewhere":                 {"src/vendor/licensed/a.go", false, false},
		"path pattern":                        {"docs/private.md", false, true},
		"path pattern, other file":            {"docs/public.md", false, false},
		"unrelated":                           {"main.go", false, false},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if got := l.Excluded(c.rel, c.isDir); got != c.want {
				t.Errorf("Excluded(%q, %v) = %v, want %v", c.rel, c.isDir, got, c.want)
			}
		})
	}
	if (&List{}).Excluded("x.csv", false) {
		t.Error("the zero List excludes")
	}
}

func TestCheckPattern(t *testing.T) {
	for p, bad := range map[string]bool{"a/": false, "*.csv": false, " ": true, "#x": true, "!keep.csv": true} {
		if got := CheckPattern(p) != ""; got != bad {
			t.Errorf("CheckPattern(%q) bad = %v, want %v", p, got, bad)
		}
	}
}
