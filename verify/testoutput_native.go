package verify

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
)

// The text summaries of RSpec, minitest, PHPUnit, CTest and meson test,
// read when a check printed no machine report (a configured command the
// prelude cannot reach, a run that crashed before writing it).

var (
	// "5 examples, 1 failure, 1 pending", "0 examples, 0 failures".
	rspecSummaryRE = regexp.MustCompile(`^(\d+) examples?, (\d+) failures?(?:, (\d+) pending)?(?:, (\d+) errors? occurred outside of examples)?$`)
	// "rspec ./spec/slug_spec.rb:12 # Slug collapses punctuation".
	rspecFailRE = regexp.MustCompile(`^rspec \S+ # (.+)$`)
)

func parseRSpec(lines []string) *TestSummary {
	var s *TestSummary
	var names []string
	for _, line := range lines {
		line = strings.TrimSpace(line)
		if m := rspecFailRE.FindStringSubmatch(line); m != nil {
			names = addName(names, m[1])
			continue
		}
		if m := rspecSummaryRE.FindStringSubmatch(line); m != nil {
			examples, failures, pending := atoi(m[1]), atoi(m[2]), atoi(m[3])
			s = &TestSummary{Counted: true, Failed: failures, Skipped: pending, Passed: examples - failures - pending, Errors: atoi(m[4])}
		}
	}
	if s == nil {
		return nil
	}
	s.FailedTests = names
	s.NoTests = s.Ran() == 0 && s.Errors == 0
	return s
}

// rspecReport is the part of RSpec's JSON formatter output read.
type rspecReport struct {
	Examples []struct {
		FullDescription string `json:"full_description"`
		Status          string `json:"status"`
	} `json:"examples"`
	Summary *struct {
		ErrorsOutside int `json:"errors_outside_of_examples_count"`
	} `json:"summary"`
}

// parseRSpecJSON reads RSpec's JSON report: every example by its full
// description, as `rspec -e` selects it. nil when report is not one.
func parseRSpecJSON(report []byte) *TestSummary {
	var r rspecReport
	if err := json.Unmarshal(report, &r); err != nil || r.Summary == nil {
		return nil
	}
	s := &TestSummary{Kind: KindRSpec, Counted: true, Named: true, Errors: r.Summary.ErrorsOutside}
	for _, e := range r.Examples {
		switch e.Status {
		case "pending":
			s.Skipped++
			s.SkippedTests = append(s.SkippedTests, e.FullDescription)
			continue
		case "failed":
			s.Failed++
			s.FailedTests = addName(s.FailedTests, e.FullDescription)
		default:
			s.Passed++
		}
		s.RanTests = append(s.RanTests, e.FullDescription)
	}
	slices.Sort(s.RanTests)
	s.RanTests = slices.Compact(s.RanTests)
	slices.Sort(s.SkippedTests)
	s.NoTests = s.Ran() == 0 && s.Errors == 0
	return s
}

// parseReport reads the machine report a check of kind wrote: RSpec's
// JSON, or JUnit XML for every other runner that writes one.
func parseReport(kind TestKind, report []byte) *TestSummary {
	if kind == KindRSpec {
		return parseRSpecJSON(report)
	}
	return ParseJUnit(kind, report)
}

var (
	// "OK (3 tests, 3 assertions)".
	phpunitOKRE = regexp.MustCompile(`^OK \((\d+) tests?, \d+ assertions?\)$`)
	// "Tests: 4, Assertions: 4, Failures: 1, Skipped: 1." and kin.
	phpunitTestsRE = regexp.MustCompile(`^Tests: (\d+), Assertions: \d+(.*)\.$`)
	phpunitCountRE = regexp.MustCompile(`(Errors|Failures|Skipped|Incomplete|Risky|Warnings|Deprecations|Notices): (\d+)`)
	// "1) SlugTest::testCollapses".
	phpunitFailRE = regexp.MustCompile(`^\d+\) (\S+::\S+?)(?: with data set .*)?$`)
)

func parsePHPUnit(lines []string) *TestSummary {
	var s *TestSummary
	var names []string
	for _, line := range lines {
		line = strings.TrimSpace(line)
		switch {
		case line == "No tests executed!":
			s = &TestSummary{Counted: true}
		case phpunitOKRE.MatchString(line):
			s = &TestSummary{Counted: true, Passed: atoi(phpunitOKRE.FindStringSubmatch(line)[1])}
		case phpunitTestsRE.MatchString(line):
			m := phpunitTestsRE.FindStringSubmatch(line)
			s = &TestSummary{Counted: true}
			total := atoi(m[1])
			for _, c := range phpunitCountRE.FindAllStringSubmatch(m[2], -1) {
				switch n := atoi(c[2]); c[1] {
				case "Errors", "Failures":
					s.Failed += n
				case "Skipped", "Incomplete":
					s.Skipped += n
				}
			}
			s.Passed = max(0, total-s.Failed-s.Skipped)
		default:
			if m := phpunitFailRE.FindStringSubmatch(line); m != nil {
				names = addName(names, m[1])
			}
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
	// "67% tests passed, 1 tests failed out of 3".
	ctestSummaryRE = regexp.MustCompile(`^\d+% tests passed, (\d+) tests? failed out of (\d+)$`)
	// "	  2 - mean (Failed)" under "The following tests FAILED:".
	ctestFailRE = regexp.MustCompile(`^\s*\d+ - (\S+) \((Failed|SEGFAULT|Timeout|Not Run|Exception|.*)\)`)
	// "  3/3 Test #3: skipped ....***Skipped   0.00 sec".
	ctestSkipRE = regexp.MustCompile(`\*\*\*(Skipped|Not Run \(Disabled\))`)
)

func parseCTest(lines []string) *TestSummary {
	var s *TestSummary
	var names []string
	failedList, skipped := false, 0
	for _, line := range lines {
		t := strings.TrimSpace(line)
		switch {
		case t == "No tests were found!!!":
			s = &TestSummary{Counted: true}
		case ctestSkipRE.MatchString(t):
			skipped++
		case ctestSummaryRE.MatchString(t):
			m := ctestSummaryRE.FindStringSubmatch(t)
			failed, total := atoi(m[1]), atoi(m[2])
			s = &TestSummary{Counted: true, Failed: failed, Passed: total - failed}
		case t == "The following tests FAILED:":
			failedList = true
		case failedList && ctestFailRE.MatchString(line):
			names = addName(names, ctestFailRE.FindStringSubmatch(line)[1])
		case failedList && t != "":
			failedList = false
		}
	}
	if s == nil {
		return nil
	}
	// CTest counts a skipped test as passed in its summary.
	s.Skipped = min(skipped, s.Passed)
	s.Passed -= s.Skipped
	s.FailedTests = names
	s.NoTests = s.Ran() == 0
	return s
}

var (
	// meson test's summary block: "Ok:                 2", "Fail:  1".
	mesonCountRE = regexp.MustCompile(`^(Ok|Expected Fail|Fail|Unexpected Pass|Skipped|Timeout):\s+(\d+)$`)
	// " 2/3 mean    FAIL    0.01s   exit status 1".
	mesonFailRE = regexp.MustCompile(`^\s*\d+/\d+ (.+?)\s+(FAIL|TIMEOUT|UNEXPECTEDPASS)\s`)
)

func parseMeson(lines []string) *TestSummary {
	counts := map[string]int{}
	seen := false
	var names []string
	for _, line := range lines {
		t := strings.TrimSpace(line)
		if t == "No tests defined." {
			return &TestSummary{Counted: true, NoTests: true}
		}
		if m := mesonCountRE.FindStringSubmatch(t); m != nil {
			counts[m[1]], seen = atoi(m[2]), true
			continue
		}
		if m := mesonFailRE.FindStringSubmatch(line); m != nil {
			names = addName(names, m[1])
		}
	}
	if !seen {
		return nil
	}
	s := &TestSummary{Counted: true, Passed: counts["Ok"] + counts["Expected Fail"],
		Failed: counts["Fail"] + counts["Unexpected Pass"] + counts["Timeout"], Skipped: counts["Skipped"], FailedTests: names}
	s.NoTests = s.Ran() == 0
	return s
}
