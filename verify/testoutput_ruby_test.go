package verify

import (
	"maps"
	"reflect"
	"testing"
)

// TestTestUnitOutput: test-unit's own output, as ruby printed it in the
// test image, plain and verbose: its counts (an error is a failing test),
// the names its Failure: and Error: blocks give, and each test's mark.
func TestTestUnitOutput(t *testing.T) {
	for _, file := range []string{"testunit_fail.txt", "testunit_verbose_fail.txt"} {
		s := ParseTestOutput(KindTestUnit, outputFixture(t, file))
		if s == nil {
			t.Fatalf("%s: no summary", file)
		}
		if s.Kind != KindTestUnit || s.Passed != 1 || s.Failed != 2 || !s.Counted || s.NoTests {
			t.Errorf("%s: summary %+v, want 1 passed, 2 failed", file, *s)
		}
		if want := []string{"TestThing#test_err", "TestThing#test_fail"}; !reflect.DeepEqual(s.FailedTests, want) {
			t.Errorf("%s: failed tests %q, want %q", file, s.FailedTests, want)
		}
	}
	got := testUnitVerdicts(outputLines(outputFixture(t, "testunit_verbose_fail.txt")))
	want := map[string]string{"TestThing#test_err": "E", "TestThing#test_fail": "F", "TestThing#test_ok": "."}
	if !maps.Equal(got, want) {
		t.Errorf("verdicts %v, want %v", got, want)
	}
	if v := testUnitVerdicts(outputLines(outputFixture(t, "testunit_fail.txt"))); len(v) != 0 {
		t.Errorf("the plain output has no per-test lines, read %v", v)
	}
	if s := ParseTestOutput(KindTestUnit, "1 tests, 1 assertions, 0 failures, 1 errors, 0 pendings, 0 omissions, 0 notifications\n"); s == nil || s.Failed != 1 || s.Passed != 0 {
		t.Errorf("one error: %+v, want one failed", s)
	}
}

// TestTestUnitNewTestVerdicts: a new test-unit test is read from the
// verbose run on the original code: an error is a failure before the
// change, as is a failed assertion; one that passed did not show it.
func TestTestUnitNewTestVerdicts(t *testing.T) {
	out := outputFixture(t, "testunit_verbose_fail.txt")
	s := ParseTestOutput(KindTestUnit, out)
	got := map[string]NewTestStatus{}
	for _, name := range []string{"TestThing#test_err", "TestThing#test_fail", "TestThing#test_ok", "TestThing#test_gone"} {
		got[name], _ = classifyReported(NewTest{Lang: LangRuby, Kind: KindTestUnit, Name: name, ID: name}, 1, out, s)
	}
	want := map[string]NewTestStatus{"TestThing#test_err": FailsBefore, "TestThing#test_fail": FailsBefore, "TestThing#test_ok": PassesBefore, "TestThing#test_gone": NotRunBefore}
	if !maps.Equal(got, want) {
		t.Errorf("statuses %v, want %v", got, want)
	}
	cmd := reportedCommand(KindTestUnit, []NewTest{{Dir: ".", File: "test/test_x.rb", ID: "TestThing#test_err"}}, "bundle exec rake test")
	if want := `bundle exec ruby -Ilib -Itest 'test/test_x.rb' -v -n '/^(test_err)$/'`; cmd != want {
		t.Errorf("command %q, want %q", cmd, want)
	}
}
