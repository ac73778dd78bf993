package verify

import (
	"reflect"
	"testing"
)

// ctestJUnit is CTest's --output-junit report on testdata/repos/cmake with
// test.patch (CMake 3.25 in the test image), system-out trimmed.
const ctestJUnit = `<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="(empty)" tests="3" failures="1" disabled="0" skipped="0" hostname="" time="0" timestamp="2026-12-02T15:00:05">
	<testcase name="mathutil_gcd" classname="mathutil_gcd" time="0.00636961" status="run"><system-out></system-out></testcase>
	<testcase name="strutil_upper" classname="strutil_upper" time="0.00853555" status="run"><system-out></system-out></testcase>
	<testcase name="strutil_repeat" classname="strutil_repeat" time="0.00845067" status="fail"><failure message=""/><system-out>x</system-out></testcase>
</testsuite>
`

// phpunitJUnit is PHPUnit 9.6's --log-junit report on testdata/repos/php
// with test.patch: suites nested three deep.
const phpunitJUnit = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="" tests="3" assertions="3" errors="0" warnings="0" failures="1" skipped="0" time="0.009783">
    <testsuite name="unit" tests="3">
      <testsuite name="TemperatureTest" file="/workspace/tests/TemperatureTest.php" tests="3">
        <testcase name="testBoilingInFahrenheit" class="TemperatureTest" classname="TemperatureTest" file="/workspace/tests/TemperatureTest.php" line="8" assertions="1" time="0.003788"/>
        <testcase name="testFreezingInFahrenheit" class="TemperatureTest" classname="TemperatureTest" file="/workspace/tests/TemperatureTest.php" line="13" assertions="1" time="0.000075"/>
        <testcase name="boilingInCelsius" class="TemperatureTest" classname="TemperatureTest" file="/workspace/tests/TemperatureTest.php" line="19" assertions="1" time="0.005920">
          <failure type="PHPUnit\Framework\ExpectationFailedException">TemperatureTest::boilingInCelsius</failure>
        </testcase>
      </testsuite>
    </testsuite>
  </testsuite>
</testsuites>
`

// TestParseReports reads each new runner's machine report into per-test
// names and the same counts as its text summary.
func TestParseReports(t *testing.T) {
	for name, tc := range map[string]struct {
		kind   TestKind
		report string
		want   TestSummary
	}{
		"rspec json": {KindRSpec, outputFixture(t, "rspec_fail.json"), TestSummary{Passed: 2, Failed: 1, FailedTests: []string{"Textkit.truncate stays within the limit"},
			RanTests: []string{"Textkit.titleize capitalizes every word", "Textkit.truncate keeps short text", "Textkit.truncate stays within the limit"}}},
		"ctest junit": {KindCTest, ctestJUnit, TestSummary{Passed: 2, Failed: 1, FailedTests: []string{"strutil_repeat"},
			RanTests: []string{"mathutil_gcd", "strutil_repeat", "strutil_upper"}}},
		"phpunit junit": {KindPHPUnit, phpunitJUnit, TestSummary{Passed: 2, Failed: 1, FailedTests: []string{"TemperatureTest::boilingInCelsius"},
			RanTests: []string{"TemperatureTest::boilingInCelsius", "TemperatureTest::testBoilingInFahrenheit", "TemperatureTest::testFreezingInFahrenheit"}}},
		"meson junit": {KindMeson, outputFixture(t, "meson_fail.junit.xml"), TestSummary{Passed: 1, Failed: 1, FailedTests: []string{"calc::fails"},
			RanTests: []string{"calc::fails", "calc::passes"}}},
		"gradle junit": {KindGradle, outputFixture(t, "gradle_pass.junit.xml"), TestSummary{Passed: 2,
			RanTests: []string{"demo.WordsTest::countsWords", "demo.WordsTest::longestWord"}}},
	} {
		t.Run(name, func(t *testing.T) {
			got := parseReport(tc.kind, []byte(tc.report))
			if got == nil {
				t.Fatal("not recognised")
			}
			want := tc.want
			want.Kind, want.Counted, want.Named = tc.kind, true, true
			if !reflect.DeepEqual(*got, want) {
				t.Errorf("\n got %+v\nwant %+v", *got, want)
			}
		})
	}
	// Not a report: the check is read from its text.
	for _, bad := range []string{"", "not json", `{"examples":[]}`, "<html/>"} {
		if s := parseReport(KindRSpec, []byte(bad)); s != nil {
			t.Errorf("rspec report %q read as %+v", bad, *s)
		}
	}
}

// TestZeroTestsNewRunners: a run that passed with no test is zero tests,
// as for the other runners.
func TestZeroTestsNewRunners(t *testing.T) {
	for _, tc := range []struct {
		kind TestKind
		file string
	}{{KindRSpec, "rspec_nomatch.txt"}, {KindMinitest, "minitest_nomatch.txt"}, {KindPHPUnit, "phpunit_nomatch.txt"}, {KindCTest, "ctest_nomatch.txt"}} {
		var res CheckResult
		describe(&res, Check{Run: "x", Kind: tc.kind}, outputFixture(t, tc.file), nil)
		if !res.ZeroTests {
			t.Errorf("%s: not zero tests: %+v", tc.file, res)
		}
	}
	var res CheckResult
	describe(&res, Check{Run: "x", Kind: KindCTest}, outputFixture(t, "ctest_pass.txt"), nil)
	if res.ZeroTests {
		t.Errorf("ctest_pass.txt counted as zero tests")
	}
}
