package findings

import (
	"path"
	"strings"

	"github.com/patchwright/patchwright/verify/testsrc"
)

// testsOf returns the tests of one version of a file that run on a plain
// test command, as testsrc reads them (nil for a missing version, and for
// a Go file that no longer builds here). Benchmarks do not run there, so
// they are not tests here.
func testsOf(p string, src []byte) []testsrc.Test {
	tests, _ := testsrc.Tests(p, src) // a file that does not compile fails the final check
	return withoutBenchmarks(tests)
}

func withoutBenchmarks(tests []testsrc.Test) []testsrc.Test {
	var out []testsrc.Test
	for _, t := range tests {
		if t.Kind != testsrc.KindBenchmark {
			out = append(out, t)
		}
	}
	return out
}

// isDocPath reports whether a path is prose that cannot change behaviour.
func isDocPath(p string) bool {
	base := strings.ToLower(path.Base(p))
	switch path.Ext(base) {
	case ".md", ".markdown", ".rst", ".adoc":
		return true
	case ".txt":
		return !IsRequirements(strings.ToLower(p))
	}
	for _, n := range []string{"license", "licence", "changelog", "authors", "notice", "copying"} {
		if strings.HasPrefix(base, n) {
			return true
		}
	}
	return strings.HasPrefix(p, "docs/") || strings.HasPrefix(p, "doc/")
}
