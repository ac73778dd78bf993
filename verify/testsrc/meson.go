package testsrc

import (
	"regexp"
	"strings"
)

var (
	// mesonTestRE is a test('name', …) or benchmark call; the name is
	// what meson test takes as an argument. Meson strings are single
	// quoted.
	mesonTestRE = regexp.MustCompile(`(?m)^[ \t]*(test|benchmark)\s*\(\s*'([^'\n]+)'`)
	// mesonCommentRE is a line comment, outside strings as far as a test
	// list needs.
	mesonCommentRE = regexp.MustCompile(`(?m)#[^\n']*$`)
)

// mesonTests lists the tests a meson.build declares with test(), by
// name; a test's text is its call. benchmark() targets are benchmarks:
// meson test does not run them.
func mesonTests(_ string, src []byte) []Test {
	clean := mesonCommentRE.ReplaceAllStringFunc(string(src), func(c string) string { return strings.Repeat(" ", len(c)) })
	var out []Test
	for _, m := range mesonTestRE.FindAllStringSubmatchIndex(clean, -1) {
		end := strings.IndexByte(clean[m[0]:], ')')
		if end < 0 {
			end = len(clean) - m[0] - 1
		}
		kind, name := KindTest, clean[m[4]:m[5]]
		if clean[m[2]:m[3]] == "benchmark" {
			kind = KindBenchmark
		}
		out = append(out, Test{Name: name, Short: name, Kind: kind, Line: strings.Count(clean[:m[0]], "\n") + 1,
			Start: m[0], End: m[0] + end + 1, Text: clean[m[0] : m[0]+end+1]})
	}
	return out
}

// mesonCode is a meson.build without comments and layout.
func mesonCode(_ string, src []byte) (string, bool) {
	return normalizeCode([]byte(mesonCommentRE.ReplaceAllString(string(src), "")), nil, false), true
}
