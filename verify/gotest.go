package verify

import (
	"bufio"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
)

// GoTestSummary is go test's view by package, the Go part of a
// TestSummary (TestSummary.Go).
type GoTestSummary struct {
	// PackagesOK lists packages whose tests passed ("ok" lines).
	PackagesOK []string `json:"packages_ok,omitempty"`
	// PackagesFailed lists packages with a failing test or a build failure.
	PackagesFailed []string `json:"packages_failed,omitempty"`
	// PackagesBuildFailed lists packages whose tests did not compile.
	PackagesBuildFailed []string `json:"packages_build_failed,omitempty"`
	// NoTestFiles lists packages go test reported as "[no test files]".
	NoTestFiles []string `json:"no_test_files,omitempty"`
	// NoTestsToRun lists "ok" packages go test reported as "[no tests to
	// run]" (a -run pattern matched none of their tests); they are in
	// PackagesOK too.
	NoTestsToRun []string `json:"no_tests_to_run,omitempty"`
	// FailedTests maps a package to its failing top-level tests, in order.
	FailedTests map[string][]string `json:"failed_tests,omitempty"`
	// PassedTests maps a package to its passing top-level tests; text
	// output names them only under -v.
	PassedTests map[string][]string `json:"passed_tests,omitempty"`
}

var (
	// "--- FAIL: TestX (0.01s)", indented for subtests.
	testLineRE = regexp.MustCompile(`^\s*--- (FAIL|PASS|SKIP): (\S+)`)
	// "ok  \tpkg\t0.01s", "FAIL\tpkg\t0.01s", "FAIL\tpkg [build failed]",
	// "?   \tpkg\t[no test files]". go test always puts a tab before the
	// package; TAP's "ok 1 - name" has none.
	pkgLineRE = regexp.MustCompile(`^(ok|FAIL|\?) *\t(\S+)(.*)$`)
	// test2json's framing lines, which the text output without -v does
	// not have.
	goFramingRE = regexp.MustCompile(`^=== (RUN|PAUSE|CONT|NAME) `)

	goIdentRE    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	importPathRE = regexp.MustCompile(`^[A-Za-z0-9_.~+/-]+$`)
)

// goJSONPrelude is put before a Go check's script: the check's own
// shell then runs `go test` as `go test -json` (the same tests, flags and
// exit code; only the output is test2json's events), so every test that
// ran is known by name. Any other go command runs as written, and a go
// test that a script of the repository's runs (make, a nested shell) is
// not reached: it prints its usual text, which readGo reads too. The
// check's recorded command stays the one configured or detected.
const goJSONPrelude = `go() { if [ "$1" = test ]; then shift; command go test -json "$@"; else command go "$@"; fi; }` + "\n"

// goEvent is one line of go test -json (cmd/test2json's TestEvent, and
// the build events of go 1.24 and later).
type goEvent struct {
	Action      string
	Package     string
	Test        string
	Output      string
	ImportPath  string
	FailedBuild string
}

// goTestKey is a top-level test of one package.
type goTestKey struct{ pkg, test string }

// goReader reads one go test run: its -json events and its text lines,
// into one summary and the text a reader of the check's output sees.
type goReader struct {
	g     *GoTestSummary
	text  strings.Builder
	found bool // a package result was seen
	// events is set when a -json event was read; textPkgs when a text
	// package line was: names are complete only with events alone.
	events, textPkgs, truncated bool
	// Per top-level test's final action, from the events.
	results map[goTestKey]string
	order   []goTestKey
	// pending holds a top-level test's output until its result: only a
	// test that did not pass or skip keeps its output, as without -v.
	pending map[goTestKey][]string
	// pkgNote notes "[no test files]" or "[no tests to run]" by package.
	pkgNote map[string]string
	// Text output: tests since the last package line, and SKIP lines.
	failed, passed []string
	textSkips      int
}

// readGo reads go test output, text or -json or both, once: it returns
// the summary (nil when no package result was printed: the command was
// probably not go test) and the output as go test's text would show it.
func readGo(output string) (*TestSummary, string) {
	r := &goReader{
		g:       &GoTestSummary{FailedTests: map[string][]string{}, PassedTests: map[string][]string{}},
		results: map[goTestKey]string{}, pending: map[goTestKey][]string{}, pkgNote: map[string]string{},
	}
	sc := bufio.NewScanner(strings.NewReader(output))
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		var e goEvent
		if strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &e) == nil && e.Action != "" {
			r.events = true
			r.event(e)
			continue
		}
		r.text.WriteString(line + "\n")
		r.textLine(strings.TrimSuffix(ansiRE.ReplaceAllString(line, ""), "\r"))
	}
	for k := range r.pending {
		r.flush(k) // a test without a result (a crash): its output matters
	}
	if !r.found {
		return nil, r.text.String()
	}
	return r.summary(), r.text.String()
}

func (r *goReader) event(e goEvent) {
	top, _, sub := strings.Cut(e.Test, "/")
	key := goTestKey{e.Package, top}
	switch {
	case e.Action == "build-output":
		r.text.WriteString(e.Output)
	case e.Action == "output" && e.Test == "":
		r.text.WriteString(e.Output)
		for _, note := range []string{"[no test files]", "[no tests to run]", "[build failed]", "[setup failed]"} {
			if strings.Contains(e.Output, note) {
				r.pkgNote[e.Package] = note
			}
		}
	case e.Action == "output":
		if !goFramingRE.MatchString(e.Output) {
			r.pending[key] = append(r.pending[key], e.Output)
		}
	case e.Test != "" && !sub && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip"):
		if _, seen := r.results[key]; !seen {
			r.order = append(r.order, key)
		}
		r.results[key] = e.Action
		if e.Action == "fail" {
			r.flush(key)
		}
		delete(r.pending, key)
	case e.Test == "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip"):
		for k := range r.pending {
			if k.pkg == e.Package {
				r.flush(k)
			}
		}
		r.packageResult(e)
	}
}

func (r *goReader) flush(k goTestKey) {
	for _, s := range r.pending[k] {
		r.text.WriteString(s)
	}
	delete(r.pending, k)
}

// packageResult records a package's end from its -json event.
func (r *goReader) packageResult(e goEvent) {
	r.found = true
	g, pkg, note := r.g, e.Package, r.pkgNote[e.Package]
	switch e.Action {
	case "pass":
		g.PackagesOK = appendNew(g.PackagesOK, pkg)
		if note == "[no tests to run]" {
			g.NoTestsToRun = appendNew(g.NoTestsToRun, pkg)
		}
	case "skip":
		g.NoTestFiles = appendNew(g.NoTestFiles, pkg)
	case "fail":
		g.PackagesFailed = appendNew(g.PackagesFailed, pkg)
		if e.FailedBuild != "" || note == "[build failed]" || note == "[setup failed]" {
			g.PackagesBuildFailed = appendNew(g.PackagesBuildFailed, pkg)
		}
	}
	for _, k := range r.order {
		if k.pkg != pkg {
			continue
		}
		switch r.results[k] {
		case "fail":
			g.FailedTests[pkg] = appendNew(g.FailedTests[pkg], k.test)
		case "pass":
			g.PassedTests[pkg] = appendNew(g.PassedTests[pkg], k.test)
		}
	}
}

// textLine reads one line of go test's text output (no -json).
func (r *goReader) textLine(line string) {
	if truncatedRE.MatchString(line) {
		r.truncated = true
		return
	}
	if m := testLineRE.FindStringSubmatch(line); m != nil {
		name, _, _ := strings.Cut(m[2], "/") // subtests rerun with their parent
		switch m[1] {
		case "FAIL":
			r.failed = appendNew(r.failed, name)
		case "PASS":
			r.passed = appendNew(r.passed, name)
		case "SKIP":
			r.textSkips++
		}
		return
	}
	m := pkgLineRE.FindStringSubmatch(line)
	if m == nil || m[2] == "" || strings.HasPrefix(m[2], "-") {
		return
	}
	// A bare "FAIL" line ends a package's verbose output; the package
	// line follows it.
	g, pkg, rest := r.g, m[2], m[3]
	r.found, r.textPkgs = true, true
	switch m[1] {
	case "ok":
		g.PackagesOK = appendNew(g.PackagesOK, pkg)
		if strings.Contains(rest, "[no tests to run]") {
			g.NoTestsToRun = appendNew(g.NoTestsToRun, pkg)
		}
	case "?":
		if strings.Contains(rest, "no test files") {
			g.NoTestFiles = appendNew(g.NoTestFiles, pkg)
		}
	case "FAIL":
		g.PackagesFailed = appendNew(g.PackagesFailed, pkg)
		if strings.Contains(rest, "[build failed]") || strings.Contains(rest, "[setup failed]") {
			g.PackagesBuildFailed = appendNew(g.PackagesBuildFailed, pkg)
		}
		for _, t := range r.failed {
			g.FailedTests[pkg] = appendNew(g.FailedTests[pkg], t)
		}
	}
	for _, t := range r.passed {
		g.PassedTests[pkg] = appendNew(g.PassedTests[pkg], t)
	}
	r.failed, r.passed = nil, nil
}

// summary counts top-level tests. Counted stays false: the report counts
// go test's packages, as its own lines do.
func (r *goReader) summary() *TestSummary {
	g := r.g
	s := &TestSummary{Kind: KindGo, Go: g, FailedTests: g.FailedTestNames(), Skipped: r.textSkips}
	for pkg, tests := range g.FailedTests {
		s.Failed += len(tests)
		s.RanTests = append(s.RanTests, qualified(pkg, tests)...)
	}
	for pkg, tests := range g.PassedTests {
		s.Passed += len(tests)
		s.RanTests = append(s.RanTests, qualified(pkg, tests)...)
	}
	for _, k := range r.order {
		if r.results[k] == "skip" {
			s.Skipped++
			s.SkippedTests = append(s.SkippedTests, k.pkg+"."+k.test)
		}
	}
	slices.Sort(s.RanTests)
	s.RanTests = slices.Compact(s.RanTests)
	slices.Sort(s.SkippedTests)
	s.Named = r.events && !r.textPkgs && !r.truncated
	if s.Named {
		s.NoTests = len(g.PackagesFailed) == 0 && s.Ran() == 0
	} else {
		s.NoTests = len(g.PackagesFailed) == 0 && g.testedPackages() == 0
	}
	return s
}

func qualified(pkg string, tests []string) []string {
	out := make([]string, len(tests))
	for i, t := range tests {
		out[i] = pkg + "." + t
	}
	return out
}

// testedPackages counts the packages in which at least one test ran.
func (s *GoTestSummary) testedPackages() int {
	n := len(s.PackagesFailed)
	for _, p := range s.PackagesOK {
		if !slices.Contains(s.NoTestsToRun, p) {
			n++
		}
	}
	return n
}

// FailedTestNames returns every failing test name once, sorted.
func (s *GoTestSummary) FailedTestNames() []string {
	var names []string
	for _, tests := range s.FailedTests {
		for _, t := range tests {
			names = appendNew(names, t)
		}
	}
	slices.Sort(names)
	return names
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// goTestBoolFlags are go test flags without a value that a targeted re-run
// keeps. A flag not listed here and without "=value" makes the re-run fall
// back to the whole command, because its value cannot be told from a
// package pattern.
var goTestBoolFlags = map[string]bool{
	"-race": true, "-short": true, "-v": true, "-failfast": true, "-cover": true,
	"-trimpath": true, "-mod=mod": true, "-mod=vendor": true, "-mod=readonly": true,
}

// goTestRerun returns a command that re-runs only the failing tests of a
// go test command, keeping its flags, or "" when the command is not a
// plain go test invocation or the output names no failing test.
func goTestRerun(command string, s *GoTestSummary) string {
	if s == nil || len(s.FailedTests) == 0 || len(s.PackagesBuildFailed) > 0 {
		return ""
	}
	if strings.ContainsAny(command, ";&|<>`$()\\\"'\n") {
		return ""
	}
	fields := strings.Fields(command)
	if len(fields) < 2 || fields[0] != "go" || fields[1] != "test" {
		return ""
	}
	args := []string{"go", "test", "-count=1"}
	for _, f := range fields[2:] {
		switch {
		case !strings.HasPrefix(f, "-"):
			// a package pattern: replaced by the failing packages
		case strings.HasPrefix(f, "-run") || strings.HasPrefix(f, "-count"):
			if !strings.Contains(f, "=") {
				return ""
			}
		case strings.Contains(f, "=") || goTestBoolFlags[f]:
			args = append(args, f)
		default:
			return ""
		}
	}
	names := s.FailedTestNames()
	for _, n := range names {
		if !goIdentRE.MatchString(n) {
			return "" // forged output; never paste it into a shell
		}
	}
	args = append(args, "-run", "'^("+strings.Join(names, "|")+")$'")
	var pkgs []string
	for pkg := range s.FailedTests {
		if !importPathRE.MatchString(pkg) {
			return ""
		}
		pkgs = append(pkgs, pkg)
	}
	slices.Sort(pkgs)
	return strings.Join(append(args, pkgs...), " ")
}
