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
		litOnly   bool // no regexp needed: a line holding lit matches
	}{
		"literal":            {"func Handle", "func Handle", true, true},
		"literal in a regex": {`\w+Handler\(ctx`, "Handler(ctx", true, false},
		"longest literal":    {`ab\d+longer_one`, "longer_one", true, false},
		"optional literal":   {`(foo)?bar`, "bar", true, false},
		"alternation":        {`foo|bar`, "", true, false},
		"case-insensitive":   {`(?i)handle`, "", true, false},
		"plus":               {`(xy)+z`, "xy", true, false},
		"dot":                {`a.b`, "a", true, false},
		"dotall":             {`(?s)a.b`, "a", false, false},
		"whitespace class":   {`a\s+b`, "a", false, false},
		"negated class":      {`"[^"]*"`, `"`, false, false},
		"newline literal":    {`a\nb`, "a\nb", false, false},
		"text start":         {`\Apackage`, "package", false, false},
		"line anchors":       {`^package$`, "package", true, false},
		"escaped literal":    {`a\.b\(`, "a.b(", true, true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m, err := newLineMatcher(tc.pattern)
			if err != nil {
				t.Fatal(err)
			}
			if string(m.lit) != tc.lit || m.lineLocal != tc.lineLocal || m.litOnly != tc.litOnly {
				t.Errorf("lit %q lineLocal %v litOnly %v, want %q %v %v", m.lit, m.lineLocal, m.litOnly, tc.lit, tc.lineLocal, tc.litOnly)
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
