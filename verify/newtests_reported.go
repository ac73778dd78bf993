package verify

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// New tests of the runners that write a machine report (RSpec, PHPUnit,
// CTest, meson test, Maven, Gradle) and minitest, run alone on the
// original tree: the project's own test command narrowed to the new
// tests, its report read for their verdicts by name.

// shellQuote puts s in single quotes for /bin/sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// projectCommand is the project's detected test command of kind, without
// its "cd dir && ": how the project runs its runner (bundle exec rspec,
// vendor/bin/phpunit, ./gradlew), or "" when there is none.
func (r *Runner) projectCommand(dir string, kind TestKind) string {
	for _, c := range r.Checks {
		if c.Dir == dir && KindOf(c) == kind {
			return strings.TrimPrefix(c.Run, "cd "+dir+" && ")
		}
	}
	return ""
}

// reportedCommand narrows a project's test command base to tests, one
// file's for RSpec, minitest and PHPUnit, or is "" for a kind it cannot
// narrow. base "" asks only whether it can.
func reportedCommand(kind TestKind, tests []NewTest, base string) string {
	if len(tests) == 0 {
		return ""
	}
	file := shellQuote(strings.TrimPrefix(tests[0].File, prefixOf(tests[0].Dir)))
	var ids []string
	for _, t := range tests {
		ids = append(ids, t.ID)
	}
	alt := func(quote func(string) string) string {
		return strings.Join(quoteEach(ids, quote), "|")
	}
	switch kind {
	case KindRSpec:
		if base == "" {
			base = "rspec"
		}
		var e []string
		for _, id := range ids {
			e = append(e, "-e "+shellQuote(id))
		}
		return base + " " + file + " " + strings.Join(e, " ")
	case KindMinitest, KindTestUnit:
		// -v names every test with its verdict; -n selects methods (both
		// frameworks read the same flags).
		sel := "/^(" + alt(minitestMethod) + ")$/"
		if rakeTestCommand(base) {
			// The project's own test task loads the framework as its
			// tests expect (its libs, a -rhelper); TEST narrows it to
			// the file and TESTOPTS reaches the framework, through a
			// shell and a loader that takes a bare word for a file.
			return base + " TEST=" + file + " TESTOPTS=" + shellQuote("-v --name="+shellQuote(sel))
		}
		bundle := ""
		if strings.HasPrefix(base, "bundle exec ") {
			bundle = "bundle exec "
		}
		return bundle + "ruby -Ilib -Itest " + file + " -v -n " + shellQuote(sel)
	case KindPHPUnit:
		return phpunitBase(base) + " --filter " + shellQuote("/::("+alt(regexpQuote)+")( |$)/") + " " + file
	case KindCTest:
		return "cmake -S . -B " + cmakeBuildDir + " >/dev/null && cmake --build " + cmakeBuildDir + " --parallel && ctest --test-dir " + cmakeBuildDir +
			" --output-on-failure --output-junit " + ctestJUnitPath + " -R " + shellQuote("^("+alt(regexpQuote)+")$")
	case KindMeson:
		// meson test takes the tests to run by name.
		return "meson setup " + mesonBuildDir + " >/dev/null && meson compile -C " + mesonBuildDir + " && meson test -C " + mesonBuildDir +
			" --print-errorlogs " + strings.Join(quoteEach(ids, shellQuote), " ")
	case KindMaven:
		var sel []string
		for _, id := range ids {
			class, method, _ := strings.Cut(id, ".")
			sel = append(sel, class+"#"+method)
		}
		return "mvn -q -B -o test -DfailIfNoTests=false -Dtest=" + shellQuote(strings.Join(sel, ","))
	case KindGradle:
		if base == "" {
			base = "gradle test --offline --console=plain"
		}
		var sel []string
		for _, id := range ids {
			sel = append(sel, "--tests "+shellQuote("*"+id))
		}
		return base + " " + strings.Join(sel, " ")
	}
	return ""
}

// rakeTestCommand says whether base is the Rakefile's test task as
// detection runs it, `rake test` or `bundle exec rake test`: a
// Rake::TestTask, which reads TEST and TESTOPTS from its arguments.
func rakeTestCommand(base string) bool {
	return strings.TrimPrefix(base, "bundle exec ") == "rake test"
}

// quoteEach is ids, each passed through quote.
func quoteEach(ids []string, quote func(string) string) []string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = quote(id)
	}
	return q
}

// phpunitBase is the phpunit command to narrow: base, or one that logs
// JUnit XML when base is not a phpunit command.
func phpunitBase(base string) string {
	if base == "" || !strings.Contains(base, "phpunit") {
		base = "phpunit --log-junit " + phpunitXMLPath
	}
	// The original tree has no vendor/ of its own (it is not
	// tracked): the image's phpunit runs there, as in a check whose
	// vendor/bin/phpunit is missing.
	if rest, ok := strings.CutPrefix(base, "vendor/bin/phpunit "); ok {
		base = "phpunit " + rest
	}
	return base
}

// minitestMethod is the method a "Class#test_name" ID names.
func minitestMethod(id string) string {
	_, m, _ := strings.Cut(id, "#")
	return regexpQuote(m)
}

// regexpQuote escapes what a runner's regular expression would take for
// syntax in a test name.
func regexpQuote(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$/`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// runReportedOnBase runs one project's new tests of a reported runner on
// the original tree and reads each one's verdict from the report.
func (r *Runner) runReportedOnBase(ctx context.Context, tests []NewTest) ([]NewTestResult, error) {
	t0 := tests[0]
	kind := t0.Kind
	cmd := reportedCommand(kind, tests, r.projectCommand(t0.Dir, kind))
	dir := baseDir
	if t0.Dir != "." {
		dir += "/" + t0.Dir
	}
	out, err := r.exec(ctx, r.activate(t0.Dir)+prelude(kind)+"cd "+dir+" && "+cmd)
	if err != nil {
		return nil, fmt.Errorf("run new tests on original code: %w", err)
	}
	var s *TestSummary
	if script := reportScript(kind); script != "" {
		report, err := r.readReport(ctx, "cd "+dir+" && "+script)
		if err != nil {
			return nil, fmt.Errorf("run new tests on original code: %w", err)
		}
		if report != nil {
			s = parseReport(kind, report)
		}
	}
	if s == nil {
		s = ParseTestOutput(kind, out.text)
	}
	var results []NewTestResult
	for _, t := range tests {
		status, why := classifyReported(t, out.ExitCode, out.text, s)
		results = append(results, NewTestResult{NewTest: t, Command: cmd, Output: r.tail(out.text), Status: status, Reason: why})
	}
	return results, nil
}

// minitestVerboseRE is minitest -v's line per test: "Class#test_x = 0.00 s = F".
var minitestVerboseRE = regexp.MustCompile(`^(\S+#\S+) = [\d.]+ s = ([.FES])$`)

// reportedName says whether a runner's name for a test is t.
func reportedName(t NewTest, name string) bool {
	switch t.Lang {
	case LangPHP:
		name = phpName(name)
		return name == t.Name || strings.HasSuffix(name, `\`+t.Name) || strings.HasPrefix(name, t.Name+" with data set") ||
			strings.Contains(name, `\`+t.Name+" with data set")
	case LangCTest:
		// Meson's JUnit report names a test project::name.
		return name == t.Name || strings.HasSuffix(name, "::"+t.Name)
	case LangJava:
		n := strings.ReplaceAll(name, "::", ".")
		return n == t.Name || strings.HasSuffix(n, "."+t.Name)
	}
	return name == t.Name
}

// phpName spells a PHPUnit test's namespaced class with backslashes, as
// PHP does: PHPUnit's JUnit report writes the class attribute's dots
// (Html2Text.HtmlCharsTest::testX), its text output backslashes.
func phpName(name string) string {
	class, method, ok := strings.Cut(name, "::")
	if !ok {
		return name
	}
	return strings.ReplaceAll(class, ".", `\`) + "::" + method
}

func classifyReported(t NewTest, exit int, out string, s *TestSummary) (NewTestStatus, string) {
	if why := couldNotRun(exit, out); why != "" {
		return NotRunBefore, "cannot be shown because the run could not start: " + why
	}
	if t.Kind == KindTestUnit {
		switch testUnitVerdicts(outputLines(out))[t.Name] {
		case "F", "E":
			return FailsBefore, ""
		case ".":
			return PassesBefore, ""
		}
	}
	if t.Kind == KindMinitest {
		for _, line := range outputLines(out) {
			if m := minitestVerboseRE.FindStringSubmatch(strings.TrimSpace(line)); m != nil && m[1] == t.Name {
				switch m[2] {
				case "F", "E":
					return FailsBefore, ""
				case ".":
					return PassesBefore, ""
				}
			}
		}
	}
	if s == nil {
		if exit != 0 {
			return BuildFailsBefore, "" // no report and no summary: it did not build or load
		}
		return NotRunBefore, ""
	}
	match := func(names []string) bool {
		return slices.ContainsFunc(names, func(n string) bool { return reportedName(t, n) })
	}
	switch {
	case match(s.FailedTests):
		return FailsBefore, ""
	case match(s.RanTests):
		return PassesBefore, ""
	case match(s.SkippedTests):
		return NotRunBefore, "the test was skipped on the original code"
	case exit != 0 && s.Ran() == 0:
		return BuildFailsBefore, ""
	}
	return NotRunBefore, "the run on the original code did not report this test by name"
}
