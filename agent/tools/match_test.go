package tools

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

func TestLineMatcherPrefilter(t *testing.T) {
	tests := map[string]struct {
		pattern   string
		lit       string
		lineLocal bool
	}{
		"literal":            {"func Handle", "func Handle", true},
		"literal in a regex": {`\w+Handler\(ctx`, "Handler(ctx", true},
		"longest literal":    {`ab\d+longer_one`, "longer_one", true},
		"optional literal":   {`(foo)?bar`, "bar", true},
		"alternation":        {`foo|bar`, "", true},
		"case-insensitive":   {`(?i)handle`, "", true},
		"plus":               {`(xy)+z`, "xy", true},
		"dot":                {`a.b`, "a", true},
		"dotall":             {`(?s)a.b`, "a", false},
		"whitespace class":   {`a\s+b`, "a", false},
		"negated class":      {`"[^"]*"`, `"`, false},
		"newline literal":    {`a\nb`, "a\nb", false},
		"text start":         {`\Apackage`, "package", false},
		"line anchors":       {`^package$`, "package", true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m, err := newLineMatcher(tc.pattern)
			if err != nil {
				t.Fatal(err)
			}
			if string(m.lit) != tc.lit || m.lineLocal != tc.lineLocal {
				t.Errorf("lit %q lineLocal %v, want %q %v", m.lit, m.lineLocal, tc.lit, tc.lineLocal)
			}
		})
	}
}

// matchLines must report exactly the lines a plain line-by-line grep
// reports, whichever path (prefilter, per line, whole file) it takes.
func TestLineMatcherAgreesWithLineByLine(t *testing.T) {
	data := "package main\n\nfunc userHandler(ctx) {}\nx := Handler(ctx\n  func Handle() // Handle twice\n" +
		"\"quoted\" and \"more\"\nab12longer_one\nbar\nfoobar\nlast line without newline Handle"
	patterns := []string{
		"func Handle", `\w+Handler\(ctx`, `ab\d+longer_one`, `(foo)?bar`, `foo|bar`, `(?i)HANDLE`,
		`"[^"]*"`, `^package$`, `^$`, `e$`, `\bHandle\b`, `line`, `x*`, `^\s+func`, `\s+func`, `\A\w+`, `(?s)main.*func`, `e\z`,
	}
	lines := strings.Split(data, "\n")
	for _, p := range patterns {
		t.Run(p, func(t *testing.T) {
			re := regexp.MustCompile(p)
			var want []string
			for i, l := range lines {
				if re.MatchString(l) {
					want = append(want, fmt.Sprintf("%d:%s", i+1, l))
				}
			}
			m, err := newLineMatcher(p)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			m.matchLines([]byte(data), func(lm lineMatch) {
				got = append(got, fmt.Sprintf("%d:%s", lm.line, lm.text))
			})
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}
