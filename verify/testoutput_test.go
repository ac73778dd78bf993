package verify

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// fixture reads a runner's real output from testdata/output (see
// SOURCES.md there for how each was captured).
func outputFixture(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "output", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// parserCases are the fixtures of each runner and what its own summary
// says. The jest_ and vitest_ fixtures are written from those runners'
// documented summary formats (they do not install offline here); every
// other one is real output.
var parserCases = []struct {
	file string
	kind TestKind
	want TestSummary
}{
	{"go_fail.txt", KindGo, TestSummary{Failed: 1, FailedTests: []string{"TestAdd"}, RanTests: []string{"example.com/calc/calc.TestAdd"}}},
	{"go_fail_verbose.txt", KindGo, TestSummary{Passed: 2, Failed: 1, Skipped: 1, FailedTests: []string{"TestAdd"},
		RanTests: []string{"example.com/calc/calc.TestAdd", "example.com/calc/calc.TestMul", "example.com/calc/util.TestId"}}},
	{"go_pass.txt", KindGo, TestSummary{}},
	{"go_notests.txt", KindGo, TestSummary{NoTests: true}},
	{"go_no_test_files.txt", KindGo, TestSummary{NoTests: true}},
	{"pytest_fail.txt", KindPytest, TestSummary{Passed: 2, Failed: 2, Skipped: 1, Counted: true,
		FailedTests: []string{"tests/test_calc.py::test_add", "tests/test_calc.py::TestGroup::test_add_neg"}}},
	{"pytest_fail_q.txt", KindPytest, TestSummary{Passed: 2, Failed: 2, Skipped: 1, Counted: true,
		FailedTests: []string{"tests/test_calc.py::test_add", "tests/test_calc.py::TestGroup::test_add_neg"}}},
	{"pytest_pass.txt", KindPytest, TestSummary{Passed: 4, Skipped: 1, Counted: true}},
	{"pytest_no_tests.txt", KindPytest, TestSummary{Counted: true, NoTests: true}},
	{"pytest_deselected.txt", KindPytest, TestSummary{Counted: true, NoTests: true}},
	{"pytest_collect_error.txt", KindPytest, TestSummary{Errors: 1, Counted: true, FailedTests: []string{"tests/test_broken.py"}}},
	{"pytest_nodeids_ra.txt", KindPytest, TestSummary{Passed: 1, Failed: 1, Counted: true, FailedTests: []string{"tests/test_calc.py::test_add"}}},
	{"nodetest_default_fail.txt", KindNodeTest, TestSummary{Passed: 2, Failed: 1, Skipped: 1, Counted: true, FailedTests: []string{"adds two numbers"}}},
	{"nodetest_default_pass.txt", KindNodeTest, TestSummary{Passed: 3, Skipped: 1, Counted: true}},
	{"nodetest_default_nomatch.txt", KindNodeTest, TestSummary{Skipped: 4, Counted: true, NoTests: true}},
	{"nodetest_default_empty.txt", KindNodeTest, TestSummary{Counted: true, NoTests: true}},
	{"npm_nodetest_fail.txt", KindNodeTest, TestSummary{Passed: 2, Failed: 1, Skipped: 1, Counted: true, FailedTests: []string{"adds two numbers"}}},
	{"nodetest_specrep_fail.txt", KindNodeTest, TestSummary{Passed: 2, Failed: 1, Skipped: 1, Counted: true, FailedTests: []string{"adds two numbers"}}},
	{"nodetest_specrep_pass.txt", KindNodeTest, TestSummary{Passed: 3, Skipped: 1, Counted: true}},
	{"nodetest_specrep_empty.txt", KindNodeTest, TestSummary{Counted: true, NoTests: true}},
	{"nodetest_default_fail.txt", KindTAP, TestSummary{Passed: 2, Failed: 1, Skipped: 1, Counted: true, FailedTests: []string{"adds two numbers"}}},
	{"tape_fail.txt", KindTAP, TestSummary{Passed: 2, Failed: 1, Skipped: 1, Counted: true, FailedTests: []string{"adds two numbers"}}},
	{"tape_pass.txt", KindTAP, TestSummary{Passed: 3, Skipped: 1, Counted: true}},
	{"mocha_fail.txt", KindMocha, TestSummary{Passed: 2, Failed: 1, Skipped: 1, Counted: true, FailedTests: []string{"calc adds two numbers"}}},
	{"mocha_pass.txt", KindMocha, TestSummary{Passed: 3, Skipped: 1, Counted: true}},
	{"mocha_nomatch.txt", KindMocha, TestSummary{Counted: true, NoTests: true}},
	{"jest_fail.txt", KindJest, TestSummary{Passed: 3, Failed: 1, Skipped: 1, Counted: true, FailedTests: []string{"calc › adds two numbers"}}},
	{"jest_pass.txt", KindJest, TestSummary{Passed: 3, Skipped: 1, Counted: true}},
	{"jest_no_tests.txt", KindJest, TestSummary{Counted: true, NoTests: true}},
	{"jest_suite_error.txt", KindJest, TestSummary{Errors: 1, Counted: true}},
	{"vitest_fail.txt", KindVitest, TestSummary{Passed: 3, Failed: 1, Skipped: 1, Counted: true, FailedTests: []string{"test/calc.test.js > calc > adds two numbers"}}},
	{"vitest_pass.txt", KindVitest, TestSummary{Passed: 3, Skipped: 1, Counted: true}},
	{"vitest_no_tests.txt", KindVitest, TestSummary{Counted: true, NoTests: true}},
	{"cargo_fail.txt", KindCargo, TestSummary{Passed: 1, Failed: 1, Skipped: 1, Counted: true, FailedTests: []string{"tests::adds_two_numbers"},
		Named: true, RanTests: []string{"src/lib.rs::tests::adds_two_numbers", "src/lib.rs::tests::multiplies"}, SkippedTests: []string{"src/lib.rs::tests::later"}}},
	{"cargo_pass.txt", KindCargo, TestSummary{Passed: 3, Skipped: 1, Counted: true,
		Named: true, RanTests: []string{"src/lib.rs::tests::adds_two_numbers", "src/lib.rs::tests::multiplies", "tests/api.rs::adds_zero"}, SkippedTests: []string{"src/lib.rs::tests::later"}}},
	{"cargo_nomatch.txt", KindCargo, TestSummary{Counted: true, NoTests: true, Named: true}},
	{"maven_fail.txt", KindMaven, TestSummary{Passed: 1, Failed: 1, Skipped: 1, Counted: true, FailedTests: []string{"CalcTest.addsTwoNumbers"}}},
	{"maven_q_fail.txt", KindMaven, TestSummary{Passed: 1, Failed: 1, Skipped: 1, Counted: true, FailedTests: []string{"CalcTest.addsTwoNumbers"}}},
	{"maven_pass.txt", KindMaven, TestSummary{Passed: 2, Skipped: 1, Counted: true}},
	{"maven_q_surefire_info_pass.txt", KindMaven, TestSummary{Passed: 2, Skipped: 1, Counted: true}},
	{"maven_no_tests.txt", KindMaven, TestSummary{Counted: true, NoTests: true}},
	{"rspec_fail.txt", KindRSpec, TestSummary{Passed: 2, Failed: 1, Counted: true, FailedTests: []string{"Textkit.truncate stays within the limit"}}},
	{"rspec_pass.txt", KindRSpec, TestSummary{Passed: 2, Counted: true}},
	{"rspec_nomatch.txt", KindRSpec, TestSummary{Counted: true, NoTests: true}},
	{"minitest_fail.txt", KindMinitest, TestSummary{Passed: 1, Failed: 2, Skipped: 1, Counted: true, FailedTests: []string{"CalcTest#test_add", "CalcTest#test_raises"}}},
	{"minitest_verbose.txt", KindMinitest, TestSummary{Passed: 1, Failed: 1, Counted: true, FailedTests: []string{"CalcTest#test_add"}}},
	{"minitest_nomatch.txt", KindMinitest, TestSummary{Counted: true, NoTests: true}},
	{"testunit_fail.txt", KindTestUnit, TestSummary{Passed: 1, Failed: 2, Counted: true, FailedTests: []string{"TestThing#test_err", "TestThing#test_fail"}}},
	{"testunit_verbose_fail.txt", KindTestUnit, TestSummary{Passed: 1, Failed: 2, Counted: true, FailedTests: []string{"TestThing#test_err", "TestThing#test_fail"}}},
	{"testunit_subtestcase.txt", KindTestUnit, TestSummary{Passed: 2, Failed: 2, Counted: true, FailedTests: []string{"TestSlug::nil title#test_nil", "TestSlug::nil title::deeper (x)#test_deep"}}},
	{"phpunit_fail.txt", KindPHPUnit, TestSummary{Passed: 2, Failed: 1, Counted: true, FailedTests: []string{"TemperatureTest::boilingInCelsius"}}},
	{"phpunit_pass.txt", KindPHPUnit, TestSummary{Passed: 1, Counted: true}},
	{"phpunit_nomatch.txt", KindPHPUnit, TestSummary{Counted: true, NoTests: true}},
	{"ctest_fail.txt", KindCTest, TestSummary{Passed: 2, Failed: 1, Counted: true, FailedTests: []string{"strutil_repeat"}}},
	{"ctest_pass.txt", KindCTest, TestSummary{Passed: 1, Counted: true}},
	{"ctest_nomatch.txt", KindCTest, TestSummary{Counted: true, NoTests: true}},
	{"meson_fail.txt", KindMeson, TestSummary{Passed: 1, Failed: 1, Counted: true, FailedTests: []string{"fails"}}},
}

func TestParseTestOutput(t *testing.T) {
	for _, tc := range parserCases {
		t.Run(string(tc.kind)+"/"+tc.file, func(t *testing.T) {
			got := ParseTestOutput(tc.kind, outputFixture(t, tc.file))
			if got == nil {
				t.Fatal("not recognised")
			}
			want := tc.want
			want.Kind = tc.kind
			got.Go = nil // go test's packages: see gotest_test.go
			if !reflect.DeepEqual(*got, want) {
				t.Errorf("\n got %+v\nwant %+v", *got, want)
			}
		})
	}
}

// sameFormat says whether a fixture is legitimately another parser's
// format too: node:test prints TAP, which the TAP parser reads, and the
// node:test parser reads any TAP.
func sameFormat(kind TestKind, file string) bool {
	tap := strings.HasPrefix(file, "tape_") || strings.HasPrefix(file, "nodetest_default_") || strings.HasPrefix(file, "npm_nodetest_")
	// minitest's parser reads test-unit's summary line too, so a project
	// taken for minitest is still counted.
	return (kind == KindTAP || kind == KindNodeTest) && tap || kind == KindMinitest && strings.HasPrefix(file, "testunit_")
}

// TestParsersRefuseOthers runs every parser on every other runner's
// output (and on the outputs of commands that could not run): none may
// claim it.
func TestParsersRefuseOthers(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join("testdata", "output"))
	if err != nil {
		t.Fatal(err)
	}
	own := map[string]TestKind{}
	for _, tc := range parserCases {
		if _, ok := own[tc.file]; !ok {
			own[tc.file] = tc.kind
		}
	}
	kinds := []TestKind{KindGo, KindPytest, KindTAP, KindNodeTest, KindMocha, KindJest, KindVitest, KindCargo, KindMaven,
		KindRSpec, KindMinitest, KindTestUnit, KindPHPUnit, KindCTest, KindMeson}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".txt") {
			continue
		}
		out := outputFixture(t, e.Name())
		for _, k := range kinds {
			if k == own[e.Name()] || sameFormat(k, e.Name()) || strings.HasPrefix(e.Name(), "go_") && k == KindGo {
				continue
			}
			if s := ParseTestOutput(k, out); s != nil {
				t.Errorf("%s parser claimed %s: %+v", k, e.Name(), *s)
			}
		}
	}
}

// TestTAPIsNotGoTest is issue 12's report: tape's "ok 1 should be deeply
// equivalent" lines were counted as Go packages.
func TestTAPIsNotGoTest(t *testing.T) {
	out := outputFixture(t, "tape_pass.txt")
	if s := ParseTestOutput(KindGo, out); s != nil {
		t.Fatalf("the go parser read TAP as packages: %+v", s)
	}
	if s := ParseTestOutput(KindTAP, out); s == nil || s.Passed != 3 {
		t.Fatalf("TAP parser: %+v", s)
	}
}

// TestMavenQuietPassIsExitCodeOnly: `mvn -q` prints nothing when every
// test passes, so there is no summary to read and the check is judged by
// its exit code.
func TestMavenQuietPassIsExitCodeOnly(t *testing.T) {
	if s := ParseTestOutput(KindMaven, outputFixture(t, "maven_q_pass.txt")); s != nil {
		t.Errorf("parsed %+v from an empty output", s)
	}
}

func TestParseUnknownKind(t *testing.T) {
	for _, k := range []TestKind{"", "make"} {
		if s := ParseTestOutput(k, outputFixture(t, "go_fail.txt")); s != nil {
			t.Errorf("kind %q parsed: %+v", k, s)
		}
	}
}

func TestKindOf(t *testing.T) {
	for cmd, want := range map[string]TestKind{
		"go test ./...":                     KindGo,
		"cd api && go test -race ./...":     KindGo,
		"go vet ./...":                      "",
		"go build ./...":                    "",
		"python -m pytest":                  KindPytest,
		"python3 -m pytest -q tests":        KindPytest,
		"pytest":                            KindPytest,
		"cargo test --offline":              KindCargo,
		"cargo build --offline":             "",
		"mvn -q -B -o test":                 KindMaven,
		"./mvnw -B verify":                  KindMaven,
		"npx jest --ci":                     KindJest,
		"vitest run":                        KindVitest,
		"mocha test/":                       KindMocha,
		"node --test":                       KindNodeTest,
		"node --experimental-x --test test": KindNodeTest,
		"tape test/*.js":                    KindTAP,
		"npm test":                          "",
		"make test":                         "",
		"echo jesting":                      "",
	} {
		if got := KindOf(Check{Run: cmd}); got != want {
			t.Errorf("KindOf(%q) = %q, want %q", cmd, got, want)
		}
	}
	if got := KindOf(Check{Run: "npm test", Kind: KindMocha}); got != KindMocha {
		t.Errorf("a detected kind must win over the command: %q", got)
	}
}

func TestSummaryText(t *testing.T) {
	for _, c := range []struct {
		s    *TestSummary
		want string
	}{
		{nil, ""},
		{&TestSummary{Passed: 3, Failed: 1, Skipped: 1, Counted: true}, "3 passed, 1 failed, 1 skipped"},
		{&TestSummary{Passed: 0, Errors: 1, Counted: true}, "0 passed, 1 errors"},
		{&TestSummary{Failed: 2}, "2 failed"},
		{&TestSummary{}, ""},
	} {
		if got := c.s.Text(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.s, got, c.want)
		}
	}
}

// TestParseJUnit reads pytest's real JUnit XML (testdata/output, see
// SOURCES.md): every test by name, a setup error as a failed test.
func TestParseJUnit(t *testing.T) {
	s := ParseJUnit(KindPytest, []byte(outputFixture(t, "pytest_junit_fail.xml")))
	if s == nil {
		t.Fatal("not recognised")
	}
	wantRan := []string{"tests/test_calc.py::TestGroup::test_neg", "tests/test_calc.py::TestGroup::test_same",
		"tests/test_calc.py::test_add", "tests/test_calc.py::test_uses_broken", "tests/test_calc.py::test_zero"}
	if !s.Named || !s.Counted || !reflect.DeepEqual(s.RanTests, wantRan) {
		t.Errorf("ran %v, want %v", s.RanTests, wantRan)
	}
	if s.Passed != 2 || s.Failed != 3 || s.Skipped != 1 || s.Errors != 0 || s.NoTests ||
		!reflect.DeepEqual(s.SkippedTests, []string{"tests/test_calc.py::test_later"}) {
		t.Errorf("counts %+v", s)
	}
	if !reflect.DeepEqual(s.FailedTests, []string{"tests/test_calc.py::test_add", "tests/test_calc.py::TestGroup::test_neg", "tests/test_calc.py::test_uses_broken"}) {
		t.Errorf("failed %v", s.FailedTests)
	}
	none := ParseJUnit(KindPytest, []byte(outputFixture(t, "pytest_junit_deselected.xml")))
	if none == nil || !none.NoTests || !none.Named || len(none.RanTests) != 0 {
		t.Errorf("every test deselected: %+v", none)
	}
	for _, bad := range []string{"", "<html/>", "not xml", outputFixture(t, "pytest_fail.txt")} {
		if s := ParseJUnit(KindPytest, []byte(bad)); s != nil {
			t.Errorf("ParseJUnit(%.20q) = %+v, want nil", bad, s)
		}
	}
}

// TestParseJUnitPHPUnitRisky: PHPUnit 9 writes a risky test (no
// assertion) as an <error> of type RiskyTestError; PHPUnit passes it, and
// so does the summary, while a real failure still fails.
func TestParseJUnitPHPUnitRisky(t *testing.T) {
	s := ParseJUnit(KindPHPUnit, []byte(outputFixture(t, "phpunit_junit_risky.xml")))
	if s == nil || s.Passed != 2 || s.Failed != 1 || !reflect.DeepEqual(s.FailedTests, []string{"Shapes.ShapeTest::testBroken"}) {
		t.Fatalf("summary %+v, want 2 passed and testBroken failed", s)
	}
	if len(s.RanTests) != 3 {
		t.Errorf("ran %v, want all three", s.RanTests)
	}
}

// TestDescribePrefersTheReport: with a JUnit report, pytest's summary
// comes from it, and the text is not parsed.
func TestDescribePrefersTheReport(t *testing.T) {
	res := CheckResult{Ran: true, ExitCode: 1}
	describe(&res, Check{Run: "python3 -m pytest", Kind: KindPytest}, outputFixture(t, "pytest_fail.txt"), []byte(outputFixture(t, "pytest_junit_fail.xml")))
	if res.Summary == nil || !res.Summary.Named || res.Summary.Failed != 3 {
		t.Errorf("summary %+v, want the report's", res.Summary)
	}
	res = CheckResult{Ran: true, ExitCode: 1}
	describe(&res, Check{Run: "python3 -m pytest", Kind: KindPytest}, outputFixture(t, "pytest_fail.txt"), []byte("garbage"))
	if res.Summary == nil || res.Summary.Named || res.Summary.Failed != 2 {
		t.Errorf("summary %+v, want the text's", res.Summary)
	}
}

// TestTAPPlanUnmet: a TAP stream whose plan promised more points than
// came ran fewer tests than it said; the missing ones count as errors.
func TestTAPPlanUnmet(t *testing.T) {
	s := ParseTestOutput(KindTAP, "TAP version 13\n1..3\nok 1 - adds\n")
	if s == nil || s.Passed != 1 || s.Errors != 2 || s.NoTests {
		t.Fatalf("summary %+v, want 1 passed and 2 errors", s)
	}
	if got := zeroTests(KindTAP, 0, s); got != "" {
		t.Errorf("zeroTests = %q for a run with missing tests", got)
	}
	if s := ParseTestOutput(KindTAP, "TAP version 13\n1..1\nok 1 - adds\n"); s == nil || s.Errors != 0 {
		t.Errorf("a met plan: %+v", s)
	}
}

// TestParseSurefireReports reads Surefire's real TEST-*.xml files (see
// SOURCES.md), printed one after another as the runner reads them back.
func TestParseSurefireReports(t *testing.T) {
	fail := outputFixture(t, "surefire_fail.xml")
	s := ParseJUnit(KindMaven, []byte(fail))
	want := []string{"demo.RomanTest::additive", "demo.RomanTest::rejectsZero", "demo.RomanTest::thousands"}
	if s == nil || !s.Named || s.Passed != 2 || s.Failed != 1 || !reflect.DeepEqual(s.RanTests, want) ||
		!reflect.DeepEqual(s.FailedTests, []string{"demo.RomanTest::rejectsZero"}) {
		t.Fatalf("summary %+v, want 2 passed and rejectsZero failed", s)
	}
	other := strings.ReplaceAll(outputFixture(t, "surefire_pass.xml"), "demo.RomanTest", "demo.OtherTest")
	both := ParseJUnit(KindMaven, []byte(fail+other))
	if both == nil || both.Passed != 5 || both.Failed != 1 || len(both.RanTests) != 6 {
		t.Errorf("two reports: %+v", both)
	}
	if s := ParseJUnit(KindMaven, []byte(fail+"<html/>")); s != nil {
		t.Errorf("a stream with a foreign root: %+v", s)
	}
}
