package verify

import (
	"bufio"
	"regexp"
	"slices"
	"strings"
)

// GoTestSummary is what the text output of `go test` says. Without -v, go
// test names only failing tests, so passes are counted by package.
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
	// PassedTests maps a package to its passing top-level tests; only -v
	// output names them.
	PassedTests map[string][]string `json:"passed_tests,omitempty"`
}

var (
	// "--- FAIL: TestX (0.01s)", indented for subtests.
	testLineRE = regexp.MustCompile(`^\s*--- (FAIL|PASS|SKIP): (\S+)`)
	// "ok  \tpkg\t0.01s", "FAIL\tpkg\t0.01s", "FAIL\tpkg [build failed]",
	// "?   \tpkg\t[no test files]". go test always puts a tab before the
	// package; TAP's "ok 1 - name" has none.
	pkgLineRE = regexp.MustCompile(`^(ok|FAIL|\?) *\t(\S+)(.*)$`)

	goIdentRE    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	importPathRE = regexp.MustCompile(`^[A-Za-z0-9_.~+/-]+$`)
)

// ParseGoTest reads `go test` output. It returns nil when the output has
// no package result line at all (the command was probably not go test).
func ParseGoTest(output string) *GoTestSummary {
	s := &GoTestSummary{FailedTests: map[string][]string{}, PassedTests: map[string][]string{}}
	var failed, passed []string // tests seen since the last package line
	found := false
	sc := bufio.NewScanner(strings.NewReader(output))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := testLineRE.FindStringSubmatch(line); m != nil {
			name, _, _ := strings.Cut(m[2], "/") // subtests rerun with their parent
			switch m[1] {
			case "FAIL":
				failed = appendNew(failed, name)
			case "PASS":
				passed = appendNew(passed, name)
			}
			continue
		}
		m := pkgLineRE.FindStringSubmatch(line)
		if m == nil || m[2] == "" || strings.HasPrefix(m[2], "-") {
			continue
		}
		// A bare "FAIL" line ends a package's verbose output; the
		// package line follows it.
		pkg, rest := m[2], m[3]
		found = true
		switch m[1] {
		case "ok":
			s.PackagesOK = appendNew(s.PackagesOK, pkg)
			if strings.Contains(rest, "[no tests to run]") {
				s.NoTestsToRun = appendNew(s.NoTestsToRun, pkg)
			}
		case "?":
			if strings.Contains(rest, "no test files") {
				s.NoTestFiles = appendNew(s.NoTestFiles, pkg)
			}
		case "FAIL":
			s.PackagesFailed = appendNew(s.PackagesFailed, pkg)
			if strings.Contains(rest, "[build failed]") || strings.Contains(rest, "[setup failed]") {
				s.PackagesBuildFailed = appendNew(s.PackagesBuildFailed, pkg)
			}
			if len(failed) > 0 {
				s.FailedTests[pkg] = append(s.FailedTests[pkg], failed...)
			}
		}
		if len(passed) > 0 {
			s.PassedTests[pkg] = append(s.PassedTests[pkg], passed...)
		}
		failed, passed = nil, nil
	}
	if !found {
		return nil
	}
	return s
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
