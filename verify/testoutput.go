package verify

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// TestKind names the test runner whose output a check prints. The parser
// is chosen from it and never from the output: TAP's "ok 1 ..." lines look
// like go test's package lines, and a guess would count assertions as
// packages.
type TestKind string

// The runners whose output is parsed. A check of any other kind (a build,
// a linter, `make test`) is judged by its exit code alone.
const (
	KindGo       TestKind = "go"
	KindPytest   TestKind = "pytest"
	KindTAP      TestKind = "tap"       // tape, tap, and anything printing TAP
	KindNodeTest TestKind = "node:test" // node --test: TAP or the spec reporter
	KindMocha    TestKind = "mocha"
	KindJest     TestKind = "jest"
	KindVitest   TestKind = "vitest"
	KindCargo    TestKind = "cargo"
	KindMaven    TestKind = "maven"
	KindGradle   TestKind = "gradle"
	KindRSpec    TestKind = "rspec"
	KindMinitest TestKind = "minitest" // rake test, rake spec (minitest specs); KindTestUnit is test-unit
	KindPHPUnit  TestKind = "phpunit"
	KindCTest    TestKind = "ctest"
	KindMeson    TestKind = "meson"
)

// kindPatterns recognise a test runner in a command or a package.json
// script, most specific first. Each needs the runner as a word of its
// own, so `go vet` or `cargo build` is no test kind.
var kindPatterns = []struct {
	kind TestKind
	re   *regexp.Regexp
}{
	{KindGo, regexp.MustCompile(`(^|[\s;&|(/])go test(\s|$)`)},
	{KindPytest, regexp.MustCompile(`(^|[\s;&|(/])(python[0-9.]* -m )?pytest(\s|$)`)},
	{KindCargo, regexp.MustCompile(`(^|[\s;&|(/])cargo (\+\S+ )?(test|nextest)(\s|$)`)},
	{KindMaven, regexp.MustCompile(`(^|[\s;&|(/])(mvn|mvnw)(\s.*)?\s(test|verify|install|package)(\s|$)`)},
	{KindVitest, regexp.MustCompile(`(^|[\s;&|(/])vitest(\s|$)`)},
	{KindJest, regexp.MustCompile(`(^|[\s;&|(/])jest(\s|$)`)},
	{KindMocha, regexp.MustCompile(`(^|[\s;&|(/])mocha(\s|$)`)},
	{KindNodeTest, regexp.MustCompile(`(^|[\s;&|(/])node (.*\s)?--test(\s|$)`)},
	{KindTAP, regexp.MustCompile(`(^|[\s;&|(/])(tape|tap|tsx-tap)(\s|$)`)},
	{KindGradle, regexp.MustCompile(`(^|[\s;&|(/])(gradle|gradlew)(\s.*)?\s(test|check|build)(\s|$)`)},
	{KindRSpec, regexp.MustCompile(`(^|[\s;&|(/])rspec(\s|$)`)},
	{KindMinitest, regexp.MustCompile(`(^|[\s;&|(/])((rake|rails) test|rake spec|ruby (.*\s)?-Itest)(\s|$)`)},
	{KindPHPUnit, regexp.MustCompile(`(^|[\s;&|(/])phpunit(\s|$)`)},
	{KindCTest, regexp.MustCompile(`(^|[\s;&|(/])ctest(\s|$)`)},
	{KindMeson, regexp.MustCompile(`(^|[\s;&|(/])meson test(\s|$)`)},
}

// KindOf returns the check's test runner: the one detection recorded, or
// the one its command names; "" when it is not a test command we know.
func KindOf(c Check) TestKind {
	if c.Kind != "" {
		return c.Kind
	}
	return kindFromCommand(c.Run)
}

func kindFromCommand(cmd string) TestKind {
	for _, p := range kindPatterns {
		if p.re.MatchString(cmd) {
			return p.kind
		}
	}
	return ""
}

// TestSummary is what a test runner's own summary says, in counts that
// mean the same for every runner. Counts are the runner's: tape counts
// assertions, Maven counts test methods, cargo adds up its test binaries.
type TestSummary struct {
	Kind    TestKind `json:"kind"`
	Passed  int      `json:"passed"`
	Failed  int      `json:"failed"`
	Skipped int      `json:"skipped"`
	// Errors counts failures outside any test the runner reported: pytest
	// collection errors, Jest suites that failed to load, Maven errors.
	Errors int `json:"errors,omitempty"`
	// Counted is false when the output names failing tests but does not
	// count the passing ones: go test without -v reports packages.
	Counted bool `json:"counted"`
	// FailedTests are the failing tests' names as the runner prints them
	// (pytest node IDs, "suite › test" for Jest), once each, in order.
	FailedTests []string `json:"failed_tests,omitempty"`
	// NoTests is set when the runner said, in its own words, that it ran
	// no test at all.
	NoTests bool `json:"no_tests,omitempty"`
	// Named is set when the runner's machine output (go test -json,
	// JUnit XML) named every test, so RanTests is complete and a test
	// missing from it did not run.
	Named bool `json:"named,omitempty"`
	// RanTests names each test that ran to a verdict (passed or failed),
	// once, sorted: "package.TestName" for Go, "classname::name" from
	// JUnit XML. Text output without names leaves it empty or partial.
	RanTests []string `json:"ran_tests,omitempty"`
	// SkippedTests names the skipped tests the same way.
	SkippedTests []string `json:"skipped_tests,omitempty"`
	// Go is go test's view by package; nil for other runners.
	Go *GoTestSummary `json:"go,omitempty"`
}

// GoTests is go test's view by package; nil for another runner or a nil
// summary.
func (s *TestSummary) GoTests() *GoTestSummary {
	if s == nil {
		return nil
	}
	return s.Go
}

// Ran is the number of tests that ran to a verdict.
func (s *TestSummary) Ran() int { return s.Passed + s.Failed }

// Text is "3 passed, 1 failed, 1 skipped", the counts a reader compares
// with the runner's own output.
func (s *TestSummary) Text() string {
	if s == nil {
		return ""
	}
	if !s.Counted {
		if s.Failed == 0 {
			return ""
		}
		return strconv.Itoa(s.Failed) + " failed"
	}
	parts := []string{strconv.Itoa(s.Passed) + " passed"}
	if s.Failed > 0 {
		parts = append(parts, strconv.Itoa(s.Failed)+" failed")
	}
	if s.Skipped > 0 {
		parts = append(parts, strconv.Itoa(s.Skipped)+" skipped")
	}
	if s.Errors > 0 {
		parts = append(parts, strconv.Itoa(s.Errors)+" errors")
	}
	return strings.Join(parts, ", ")
}

// ParseTestOutput reads the output of a run of kind's runner. It returns
// nil when kind has no parser or the output lacks the runner's summary
// (the run crashed, or the command was not that runner after all): the
// check is then judged by its exit code alone.
func ParseTestOutput(kind TestKind, output string) *TestSummary {
	if kind == KindGo {
		s, _ := readGo(output)
		return s
	}
	parse := map[TestKind]func([]string) *TestSummary{
		KindPytest: parsePytest, KindTAP: parseTAP,
		KindNodeTest: parseNodeTest, KindMocha: parseMocha, KindJest: parseJest,
		KindVitest: parseVitest, KindCargo: parseCargo, KindMaven: parseMaven,
		KindRSpec: parseRSpec, KindMinitest: parseMinitest, KindTestUnit: parseTestUnit, KindPHPUnit: parsePHPUnit,
		KindCTest: parseCTest, KindMeson: parseMeson,
	}[kind]
	if parse == nil {
		return nil
	}
	s := parse(outputLines(output))
	if s != nil {
		s.Kind = kind
	}
	return s
}

// ansiRE matches terminal colour codes, which Maven and others print even
// into a pipe.
var ansiRE = regexp.MustCompile("\x1b\\[[0-9;?]*[A-Za-z]")

func outputLines(output string) []string {
	output = ansiRE.ReplaceAllString(output, "")
	output = strings.ReplaceAll(output, "\r\n", "\n")
	return strings.Split(output, "\n")
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// addName appends a failing test's name once, keeping names short and
// printable: they come from the repository's output.
func addName(names []string, name string) []string {
	name = strings.Join(strings.Fields(name), " ")
	if name == "" {
		return names
	}
	if r := []rune(name); len(r) > 200 {
		name = string(r[:200]) + "…"
	}
	return appendNew(names, name)
}

var (
	// "==== 2 failed, 2 passed, 1 skipped in 0.03s ====", or without the
	// rules under -q; "no tests ran in 0.01s".
	pytestSummaryRE = regexp.MustCompile(`^=*\s*((?:\d+ \w+(?:, )?)+|no tests ran) in [\d.]+s( \([^)]*\))?\s*=*$`)
	pytestCountRE   = regexp.MustCompile(`(\d+) (\w+)`)
	// "FAILED tests/test_x.py::test_a - assert 1 == 2", "ERROR tests/x.py".
	pytestFailedRE = regexp.MustCompile(`^(FAILED|ERROR) (\S+)`)
)

func parsePytest(lines []string) *TestSummary {
	var s *TestSummary
	var names []string
	for _, line := range lines {
		if m := pytestFailedRE.FindStringSubmatch(line); m != nil {
			names = addName(names, m[2])
			continue
		}
		m := pytestSummaryRE.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		s = &TestSummary{Counted: true}
		for _, c := range pytestCountRE.FindAllStringSubmatch(m[1], -1) {
			switch n := atoi(c[1]); c[2] {
			case "passed", "xpassed":
				s.Passed += n
			case "failed":
				s.Failed += n
			case "skipped", "xfailed":
				s.Skipped += n
			case "error", "errors":
				s.Errors += n
			}
		}
	}
	if s == nil {
		return nil
	}
	s.FailedTests = names
	s.NoTests = s.Ran() == 0 && s.Errors == 0
	return s
}

var (
	// "ok 1 - name", "not ok 2 name # SKIP why", indented for node:test's
	// subtests.
	tapPointRE = regexp.MustCompile(`^(\s*)(not ok|ok)\b\s*(\d+)?\s*(?:- )?(.*)$`)
	tapPlanRE  = regexp.MustCompile(`^\s*1\.\.(\d+)`)
	// "# tests 4", "# pass  2" (tape pads), "# skipped 1" (node:test).
	tapCountRE     = regexp.MustCompile(`^# (tests|pass|fail|skipped|skip|todo|cancelled) +(\d+)\s*$`)
	tapDirectiveRE = regexp.MustCompile(`(?i)\s#\s*(SKIP|TODO)\b.*$`)
)

// tapPoint is one "ok"/"not ok" line.
type tapPoint struct {
	indent int
	ok     bool
	skip   bool
	name   string
	group  string // the "# name" comment before it (tape's test name)
}

func parseTAP(lines []string) *TestSummary {
	var points []tapPoint
	counts := map[string]int{}
	version, plan, commentSkips := false, -1, 0 // plan -1: none seen
	group := ""
	for _, line := range lines {
		switch {
		case strings.HasPrefix(line, "TAP version "):
			version = true
		case tapPlanRE.MatchString(line) && plan < 0 && !strings.HasPrefix(line, " "):
			plan = atoi(tapPlanRE.FindStringSubmatch(line)[1])
		case tapCountRE.MatchString(line):
			m := tapCountRE.FindStringSubmatch(line)
			counts[m[1]] = atoi(m[2])
		case strings.HasPrefix(line, "# SKIP "):
			commentSkips++ // tape's skipped test, not counted in its summary
		case strings.HasPrefix(line, "# ") && !strings.HasPrefix(line, "# Subtest:"):
			group = strings.TrimPrefix(line, "# ")
		default:
			m := tapPointRE.FindStringSubmatch(line)
			if m == nil || m[4] == "" && m[3] == "" {
				continue
			}
			name := m[4]
			skip := tapDirectiveRE.MatchString(name)
			name = tapDirectiveRE.ReplaceAllString(name, "")
			points = append(points, tapPoint{indent: len(m[1]), ok: m[2] == "ok", skip: skip, name: name, group: group})
		}
	}
	if !version && plan < 0 {
		return nil // bare "ok" lines are not TAP without a plan or version
	}
	if len(points) == 0 && plan != 0 && len(counts) == 0 {
		return nil
	}
	s := &TestSummary{Counted: true, FailedTests: tapFailures(points)}
	if _, ok := counts["pass"]; ok {
		s.Passed, s.Failed = counts["pass"], counts["fail"]
		s.Skipped = counts["skipped"] + counts["skip"] + counts["todo"] + commentSkips
		s.Errors = counts["cancelled"]
	} else {
		countTAPPoints(s, points)
		s.Skipped += commentSkips
	}
	// A plan is a promise: points it counted that never came are tests
	// that did not run (the process exited or bailed out early).
	if top := topLevelPoints(points); plan > top {
		s.Errors += plan - top
	}
	s.NoTests = s.Ran() == 0 && s.Errors == 0
	return s
}

// countTAPPoints counts the top-level points into s when the output had
// no summary counts of its own; subtests (indented points) are left out.
func countTAPPoints(s *TestSummary, points []tapPoint) {
	for _, p := range points {
		switch {
		case p.indent > 0:
		case p.skip:
			s.Skipped++
		case p.ok:
			s.Passed++
		default:
			s.Failed++
		}
	}
}

// topLevelPoints is how many of points are not subtests.
func topLevelPoints(points []tapPoint) int {
	top := 0
	for _, p := range points {
		if p.indent == 0 {
			top++
		}
	}
	return top
}

// tapFailures names the failing points that are not a parent of another
// failing point (node:test fails a suite when a test in it fails), using
// tape's test name, the comment before the assertion, when there is one.
func tapFailures(points []tapPoint) []string {
	var names []string
	for i, p := range points {
		if p.ok || p.skip {
			continue
		}
		parent := false
		for j := i - 1; j >= 0 && points[j].indent > p.indent; j-- {
			if !points[j].ok {
				parent = true
				break
			}
		}
		if parent {
			continue
		}
		name := p.name
		if p.group != "" && p.indent == 0 && !strings.Contains(p.group, p.name) {
			name = p.group
		}
		names = addName(names, name)
	}
	return names
}

var (
	// node:test's spec reporter: "ℹ tests 4", "ℹ pass 2".
	nodeSpecCountRE = regexp.MustCompile(`^ℹ (tests|pass|fail|skipped|todo|cancelled|suites) (\d+)$`)
	// "✖ adds two numbers (1.75ms)" under "✖ failing tests:".
	nodeSpecFailRE = regexp.MustCompile(`^✖ (.+?) \([\d.]+m?s\)$`)
)

// parseNodeTest reads node --test output: TAP (Node before 23 when not on
// a terminal) or the spec reporter's "ℹ" summary.
func parseNodeTest(lines []string) *TestSummary {
	if s := parseTAP(lines); s != nil {
		return s
	}
	counts := map[string]int{}
	var names []string
	failing := false
	for _, line := range lines {
		if m := nodeSpecCountRE.FindStringSubmatch(line); m != nil {
			counts[m[1]] = atoi(m[2])
			continue
		}
		if line == "✖ failing tests:" {
			failing = true
			continue
		}
		if m := nodeSpecFailRE.FindStringSubmatch(line); failing && m != nil {
			names = addName(names, m[1])
		}
	}
	if _, ok := counts["tests"]; !ok {
		return nil
	}
	if _, ok := counts["pass"]; !ok {
		return nil
	}
	s := &TestSummary{Counted: true, Passed: counts["pass"], Failed: counts["fail"],
		Skipped: counts["skipped"] + counts["todo"], Errors: counts["cancelled"], FailedTests: names}
	s.NoTests = s.Ran() == 0 && s.Errors == 0
	return s
}

var (
	// "  2 passing (4ms)", "  1 pending", "  1 failing".
	mochaCountRE = regexp.MustCompile(`^\s+(\d+) (passing|pending|failing)(?: \(\d+(?:\.\d+)?(?:ms|s|m)\))?$`)
	// "  1) calc" opening a failure's title, continued on more-indented
	// lines until one ends with ":".
	mochaFailRE = regexp.MustCompile(`^\s+(\d+)\) (.*)$`)
)

func parseMocha(lines []string) *TestSummary {
	var s *TestSummary
	failing := false
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if m := mochaCountRE.FindStringSubmatch(line); m != nil {
			if s == nil {
				if m[2] != "passing" {
					continue // mocha always prints "N passing" first
				}
				s = &TestSummary{Counted: true}
			}
			switch n := atoi(m[1]); m[2] {
			case "passing":
				s.Passed = n
			case "pending":
				s.Skipped = n
			case "failing":
				s.Failed, failing = n, true
			}
			continue
		}
		if !failing {
			continue
		}
		if m := mochaFailRE.FindStringSubmatch(line); m != nil {
			title := []string{m[2]}
			for j := i + 1; j < len(lines) && j < i+10 && !strings.HasSuffix(title[len(title)-1], ":"); j++ {
				title = append(title, strings.TrimSpace(lines[j]))
				i = j
			}
			name := strings.TrimSuffix(strings.Join(title, " "), ":")
			s.FailedTests = addName(s.FailedTests, name)
		}
	}
	if s == nil {
		return nil
	}
	s.NoTests = s.Ran() == 0
	return s
}

var (
	// "Tests:       1 failed, 1 skipped, 3 passed, 5 total".
	jestTestsRE  = regexp.MustCompile(`^Tests:\s+(.*\d+ total)\s*$`)
	jestSuitesRE = regexp.MustCompile(`^Test Suites:\s+(.*\d+ total)\s*$`)
	// "  ● calc › adds two numbers", but not "● Test suite failed to run".
	jestFailRE    = regexp.MustCompile(`^\s+● (.+)$`)
	jestNoTestsRE = regexp.MustCompile(`^No tests found, exiting with code \d+`)
)

func parseJest(lines []string) *TestSummary {
	var s *TestSummary
	var names []string
	noTests := false
	suitesFailed := 0
	for _, line := range lines {
		switch {
		case jestNoTestsRE.MatchString(line):
			noTests = true
		case jestSuitesRE.MatchString(line):
			for _, c := range pytestCountRE.FindAllStringSubmatch(jestSuitesRE.FindStringSubmatch(line)[1], -1) {
				if c[2] == "failed" {
					suitesFailed = atoi(c[1])
				}
			}
		case jestTestsRE.MatchString(line):
			s = &TestSummary{Counted: true}
			for _, c := range pytestCountRE.FindAllStringSubmatch(jestTestsRE.FindStringSubmatch(line)[1], -1) {
				switch n := atoi(c[1]); c[2] {
				case "passed":
					s.Passed = n
				case "failed":
					s.Failed = n
				case "skipped", "todo", "pending":
					s.Skipped += n
				}
			}
		default:
			if m := jestFailRE.FindStringSubmatch(line); m != nil && m[1] != "Test suite failed to run" && !strings.HasPrefix(m[1], "Console") {
				names = addName(names, m[1])
			}
		}
	}
	switch {
	case s == nil && noTests:
		return &TestSummary{Counted: true, NoTests: true}
	case s == nil:
		return nil
	}
	if s.Failed == 0 {
		s.Errors = suitesFailed
	}
	s.FailedTests = names
	s.NoTests = s.Ran() == 0 && s.Errors == 0
	return s
}

var (
	// "      Tests  1 failed | 3 passed | 1 skipped (5)".
	vitestTestsRE = regexp.MustCompile(`^\s*Tests\s{2,}(.+?)\s+\((\d+)\)\s*$`)
	vitestFilesRE = regexp.MustCompile(`^\s*Test Files\s{2,}(.+?)\s+\((\d+)\)\s*$`)
	// " FAIL  test/calc.test.js > calc > adds two numbers".
	vitestFailRE    = regexp.MustCompile(`^\s*FAIL\s+(\S.* > .+?)\s*$`)
	vitestNoTestsRE = regexp.MustCompile(`^No test files found, exiting with code \d+`)
)

func parseVitest(lines []string) *TestSummary {
	var s *TestSummary
	var names []string
	noTests := false
	filesFailed := 0
	for _, line := range lines {
		switch {
		case vitestNoTestsRE.MatchString(line):
			noTests = true
		case vitestFilesRE.MatchString(line):
			for _, c := range pytestCountRE.FindAllStringSubmatch(vitestFilesRE.FindStringSubmatch(line)[1], -1) {
				if c[2] == "failed" {
					filesFailed = atoi(c[1])
				}
			}
		case vitestTestsRE.MatchString(line):
			s = &TestSummary{Counted: true}
			for _, c := range pytestCountRE.FindAllStringSubmatch(vitestTestsRE.FindStringSubmatch(line)[1], -1) {
				switch n := atoi(c[1]); c[2] {
				case "passed":
					s.Passed = n
				case "failed":
					s.Failed = n
				case "skipped", "todo":
					s.Skipped += n
				}
			}
		default:
			if m := vitestFailRE.FindStringSubmatch(line); m != nil {
				names = addName(names, m[1])
			}
		}
	}
	switch {
	case s == nil && noTests:
		return &TestSummary{Counted: true, NoTests: true}
	case s == nil:
		return nil
	}
	if s.Failed == 0 {
		s.Errors = filesFailed
	}
	s.FailedTests = names
	s.NoTests = s.Ran() == 0 && s.Errors == 0
	return s
}

var (
	// "test result: FAILED. 1 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.20s".
	cargoResultRE = regexp.MustCompile(`^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored; \d+ measured; \d+ filtered out`)
	// "test tests::adds ... FAILED".
	cargoFailRE = regexp.MustCompile(`^test (\S+)(?: - \S+)? \.\.\. FAILED$`)
	// "test tests::adds ... ok", "test src/lib.rs - add (line 3) ... ignored".
	cargoTestRE = regexp.MustCompile(`^test (.+?) \.\.\. (ok|FAILED|ignored)(?:, .*)?$`)
	// "     Running unittests src/lib.rs (target/…)", "   Doc-tests calc":
	// the test binary the next lines are from.
	cargoBinaryRE = regexp.MustCompile(`^\s+(?:Running (?:unittests )?(\S+) \(|Doc-tests (\S+)$)`)
)

// parseCargo reads libtest's output: its "test result" lines for the
// counts, and its per-test lines for the names, each under its test
// binary ("src/lib.rs::tests::adds", "tests/api.rs::adds_zero"). The
// names are complete when they add up to the counts (not under -q).
func parseCargo(lines []string) *TestSummary {
	var s *TestSummary
	var names, ran, skipped []string
	binary := ""
	for _, line := range lines {
		if m := cargoBinaryRE.FindStringSubmatch(line); m != nil {
			binary = m[1] + m[2]
			continue
		}
		if m := cargoTestRE.FindStringSubmatch(line); m != nil {
			if m[2] == "ignored" {
				skipped = append(skipped, binary+"::"+m[1])
			} else {
				ran = append(ran, binary+"::"+m[1])
			}
		}
		if m := cargoFailRE.FindStringSubmatch(line); m != nil {
			names = addName(names, m[1])
			continue
		}
		m := cargoResultRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if s == nil {
			s = &TestSummary{Counted: true}
		}
		s.Passed += atoi(m[1])
		s.Failed += atoi(m[2])
		s.Skipped += atoi(m[3])
	}
	if s == nil {
		return nil
	}
	s.FailedTests = names
	s.NoTests = s.Ran() == 0
	if len(ran) == s.Ran() && len(skipped) == s.Skipped {
		slices.Sort(ran)
		slices.Sort(skipped)
		s.Named, s.RanTests, s.SkippedTests = true, slices.Compact(ran), skipped
	}
	return s
}

var (
	// "[ERROR] Tests run: 3, Failures: 1, Errors: 0, Skipped: 1, Time elapsed: 0.1 s <<< FAILURE! - in x"
	// per class, and the same without "Time elapsed" as a module's total.
	mavenRunRE = regexp.MustCompile(`^\[(?:INFO|WARNING|ERROR)\] Tests run: (\d+), Failures: (\d+), Errors: (\d+), Skipped: (\d+)(.*)$`)
	// "[ERROR]   CalcTest.addsTwoNumbers:8 expected:<5> but was:<-1>" in
	// the Results section's Failures and Errors lists.
	mavenFailRE    = regexp.MustCompile(`^\[ERROR\]\s{2,}(\S+?)(?::\d+)?(?:\s|$)`)
	mavenNoTestsRE = regexp.MustCompile(`^\[INFO\] No tests to run\.$`)
)

func parseMaven(lines []string) *TestSummary {
	var total, perClass TestSummary
	haveTotal, haveClass, noTests, inList := false, false, false, false
	var names []string
	for _, line := range lines {
		switch {
		case line == "[ERROR] Failures: " || line == "[ERROR] Failures:" || line == "[ERROR] Errors: " || line == "[ERROR] Errors:":
			inList = true
		case mavenNoTestsRE.MatchString(line):
			noTests = true
		case mavenRunRE.MatchString(line):
			inList = false
			m := mavenRunRE.FindStringSubmatch(line)
			into := &total
			if strings.Contains(m[5], "Time elapsed") {
				into, haveClass = &perClass, true
			} else {
				haveTotal = true
			}
			run, failures, errs, skipped := atoi(m[1]), atoi(m[2]), atoi(m[3]), atoi(m[4])
			into.Failed += failures
			into.Errors += errs
			into.Skipped += skipped
			into.Passed += run - failures - errs - skipped
		case inList:
			if m := mavenFailRE.FindStringSubmatch(line); m != nil && !strings.HasPrefix(m[1], "Run") {
				names = addName(names, m[1])
			} else if !strings.HasPrefix(line, "[ERROR]   ") {
				inList = false
			}
		}
	}
	var s TestSummary
	switch {
	case haveTotal:
		s = total
	case haveClass:
		s = perClass
	case noTests:
		return &TestSummary{Counted: true, NoTests: true}
	default:
		return nil
	}
	s.Counted = true
	s.FailedTests = names
	s.NoTests = s.Ran() == 0 && s.Errors == 0
	return &s
}
