package testsrc

import (
	"regexp"
	"strings"
)

var (
	// cppTestRE is a GoogleTest TEST, TEST_F or TEST_P, or a Catch2
	// TEST_CASE / SCENARIO, at the start of a line. gtest_discover_tests
	// names the first "Suite.Name", catch_discover_tests the second by its
	// title, and those are the names ctest -R selects.
	cppTestRE = regexp.MustCompile(`(?m)^[ \t]*(?:(TEST|TEST_F|TEST_P|TYPED_TEST)\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)|(TEST_CASE|SCENARIO)\s*\(\s*"((?:[^"\\]|\\.)*)")`)
	// cppDisabled: GoogleTest skips DISABLED_ tests; Catch2 hides
	// "[.]"-tagged ones; GTEST_SKIP() skips at run time.
	cppSkipRE = regexp.MustCompile(`\bGTEST_SKIP\s*\(|\bSKIP\s*\(`)
	// cppLineComment and cppBlockComment blank comments before matching.
	cppCommentRE = regexp.MustCompile(`(?s)//[^\n]*|/\*.*?\*/`)
)

// cppTests lists GoogleTest and Catch2 tests by the names CTest gives
// them when they are discovered ("Suite.Name", the TEST_CASE title). It
// reads the source with regular expressions (a comment that looks like a
// test is blanked first; a macro that defines tests is not followed).
func cppTests(_ string, src []byte) []Test {
	clean := cppCommentRE.ReplaceAllStringFunc(string(src), func(c string) string {
		return strings.Map(func(r rune) rune {
			if r == '\n' {
				return r
			}
			return ' '
		}, c)
	})
	ms := cppTestRE.FindAllStringSubmatchIndex(clean, -1)
	var out []Test
	for i, m := range ms {
		end := len(clean)
		if i+1 < len(ms) {
			end = ms[i+1][0]
		}
		var name, short string
		var marks []Marker
		ln := strings.Count(clean[:m[0]], "\n") + 1
		if m[2] >= 0 {
			suite, test := clean[m[4]:m[5]], clean[m[6]:m[7]]
			name, short = suite+"."+test, test
			if strings.HasPrefix(test, "DISABLED_") || strings.HasPrefix(suite, "DISABLED_") {
				marks = append(marks, Marker{Text: "DISABLED_", Line: ln})
			}
		} else {
			name = clean[m[10]:m[11]]
			short = name
			if strings.Contains(clean[m[0]:end], `"[.`) || strings.Contains(clean[m[0]:min(end, m[1]+200)], "[!mayfail]") {
				marks = append(marks, Marker{Text: "[.]", Line: ln})
			}
		}
		body := clean[m[0]:end]
		if loc := cppSkipRE.FindStringIndex(body); loc != nil {
			marks = append(marks, Marker{Text: strings.TrimSpace(body[loc[0]:loc[1]]) + ")", Line: ln + strings.Count(body[:loc[0]], "\n")})
		}
		out = append(out, Test{Name: name, Short: short, Kind: KindTest, Line: ln, Start: m[0], End: end,
			Text: strings.TrimRight(body, " \t\n"), Skips: marks})
	}
	return out
}

// cppCode does not claim to compare C and C++ code: it has no parser
// here, so every change to it counts as a change.
func cppCode(string, []byte) (string, bool) { return "", false }
