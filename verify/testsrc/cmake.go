package testsrc

import (
	"regexp"
	"strings"
)

var (
	// cmakeAddTestRE is add_test(NAME name …) or the old add_test(name
	// command); the name is what ctest -R selects.
	cmakeAddTestRE = regexp.MustCompile(`(?im)^[ \t]*add_test\s*\(\s*(?:NAME\s+)?([A-Za-z0-9_.+-]+)`)
	// cmakeCommentRE is a line comment, outside quotes as far as a test
	// list needs.
	cmakeCommentRE = regexp.MustCompile(`(?m)#[^\n"]*$`)
)

// cmakeTests lists the CTest tests a CMakeLists.txt adds, by name; a
// test's text is its add_test call.
func cmakeTests(_ string, src []byte) []Test {
	clean := cmakeCommentRE.ReplaceAllStringFunc(string(src), func(c string) string { return strings.Repeat(" ", len(c)) })
	var out []Test
	for _, m := range cmakeAddTestRE.FindAllStringSubmatchIndex(clean, -1) {
		end := strings.IndexByte(clean[m[0]:], ')')
		if end < 0 {
			end = len(clean) - m[0] - 1
		}
		name := clean[m[2]:m[3]]
		out = append(out, Test{Name: name, Short: name, Kind: KindTest, Line: strings.Count(clean[:m[0]], "\n") + 1,
			Start: m[0], End: m[0] + end + 1, Text: clean[m[0] : m[0]+end+1]})
	}
	return out
}

// cmakeCode is a CMakeLists.txt without comments and layout.
func cmakeCode(_ string, src []byte) (string, bool) {
	return normalizeCode([]byte(cmakeCommentRE.ReplaceAllString(string(src), "")), nil, false), true
}
