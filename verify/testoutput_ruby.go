package verify

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// The text output of Ruby's xUnit frameworks, minitest and test-unit
// (RSpec's JSON report is read with the other reports).

var (
	// "4 runs, 5 assertions, 1 failures, 0 errors, 1 skips" (minitest),
	// "4 tests, 5 assertions, 1 failures, 0 errors, 0 pendings, 0
	// omissions, 0 notifications" (test-unit).
	minitestSummaryRE = regexp.MustCompile(`^(\d+) (?:runs|tests), \d+ assertions, (\d+) failures, (\d+) errors(?:, (\d+) (?:skips|pendings))?`)
	// "  1) Failure:" or "  1) Error:", the test's name on the next line:
	// "SlugTest#test_collapses [test/slug_test.rb:9]:" or "SlugTest#test_x:".
	minitestFailHeadRE = regexp.MustCompile(`^\s*\d+\) (?:Failure|Error):$`)
	minitestFailNameRE = regexp.MustCompile(`^(\S+#\S+?)(?: \[.*\])?:?$`)
)

func parseMinitest(lines []string) *TestSummary {
	var s *TestSummary
	var names []string
	for i, line := range lines {
		if minitestFailHeadRE.MatchString(line) && i+1 < len(lines) {
			if m := minitestFailNameRE.FindStringSubmatch(strings.TrimSpace(lines[i+1])); m != nil {
				names = addName(names, m[1])
			}
			continue
		}
		if m := minitestSummaryRE.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			runs, failures, errs, skips := atoi(m[1]), atoi(m[2]), atoi(m[3]), atoi(m[4])
			// A test that raised is a failing test to minitest.
			s = &TestSummary{Counted: true, Failed: failures + errs, Skipped: skips, Passed: runs - failures - errs - skips}
		}
	}
	if s == nil {
		return nil
	}
	s.FailedTests = names
	s.NoTests = s.Ran() == 0
	return s
}

var (
	// test-unit's Failure: and Error: blocks name the test before its
	// class: "Failure: test_fail(TestThing)", "Error:
	// test_err(TestThing): ArgumentError: boom".
	// A sub_test_case's class is "Parent::name", spaces and all.
	testUnitFailRE = regexp.MustCompile(`^(?:Failure|Error): (.+?)\((.+?)\)(?::\s|:$|$)`)
	// In verbose mode each class's tests are listed under it: a line
	// "TestThing: ", then "  test_ok:<tabs>.: (0.004640)" or
	// "  test_err:<tabs>E" (the block follows). A sub_test_case is
	// listed by its own name, indented under its parent: "  nil title: ".
	testUnitSummaryRE = regexp.MustCompile(`^\d+ tests, \d+ assertions, \d+ failures, \d+ errors, \d+ pendings`)
	testUnitClassRE   = regexp.MustCompile(`^( *)([^\s:][^\t:]*?): ?$`)
	testUnitVerdictRE = regexp.MustCompile(`^(\s+)(.+?):\t+([.EFNOP])(?:: \(|$)`)
)

// parseTestUnit reads test-unit's summary ("3 tests, 2 assertions, 1
// failures, 1 errors, 0 pendings, 0 omissions, 0 notifications") and the
// names its Failure: and Error: blocks give, as Class#test_name.
func parseTestUnit(lines []string) *TestSummary {
	if !slices.ContainsFunc(lines, func(l string) bool { return testUnitSummaryRE.MatchString(strings.TrimSpace(l)) }) {
		return nil // minitest's "runs, …, skips" is not test-unit's
	}
	s := parseMinitest(lines)
	if s == nil {
		return nil
	}
	s.FailedTests = nil
	for _, line := range lines {
		if m := testUnitFailRE.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			s.FailedTests = addName(s.FailedTests, m[2]+"#"+m[1])
		}
	}
	return s
}

// testUnitVerdicts reads test-unit's verbose listing: each test, as
// Class#test_name, with its mark ("." passed, "F" failed, "E" raised,
// "P" pending, "O" omitted, "N" notified). The classes in which a test
// is listed are those less indented above it, joined by "::" as
// test-unit names a sub_test_case.
func testUnitVerdicts(lines []string) map[string]string {
	out := map[string]string{}
	type suite struct {
		indent int
		name   string
	}
	var open []suite
	within := func(indent int) []string {
		for len(open) > 0 && open[len(open)-1].indent >= indent {
			open = open[:len(open)-1]
		}
		names := make([]string, len(open))
		for i, s := range open {
			names[i] = s.name
		}
		return names
	}
	for _, line := range lines {
		if m := testUnitVerdictRE.FindStringSubmatch(line); m != nil {
			if class := within(len(m[1])); len(class) > 0 {
				out[strings.Join(class, "::")+"#"+m[2]] = m[3]
			}
			continue
		}
		m := testUnitClassRE.FindStringSubmatch(line)
		if m == nil || m[1] == "" && !unicode.IsUpper(rune(m[2][0])) {
			continue // a top-level suite is a class
		}
		within(len(m[1]))
		open = append(open, suite{len(m[1]), m[2]})
	}
	return out
}
