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
	// The Rakefile's test task, narrowed by its own TEST and TESTOPTS,
	// loads the framework as the project does; the selection is quoted
	// once for our shell and once for the one rake runs ruby through.
	cmd := reportedCommand(KindTestUnit, []NewTest{{Dir: ".", File: "test/test_x.rb", ID: "TestThing#test_err"}}, "bundle exec rake test")
	if want := `bundle exec rake test TEST='test/test_x.rb' TESTOPTS='-v --name='\''/^(test_err)$/'\'''`; cmd != want {
		t.Errorf("command %q, want %q", cmd, want)
	}
	cmd = reportedCommand(KindMinitest, []NewTest{{Dir: ".", File: "test/x_test.rb", ID: "XTest#test_a"}, {Dir: ".", File: "test/x_test.rb", ID: "XTest#test_b"}}, "rake test")
	if want := `rake test TEST='test/x_test.rb' TESTOPTS='-v --name='\''/^(test_a|test_b)$/'\'''`; cmd != want {
		t.Errorf("command %q, want %q", cmd, want)
	}
}

// TestTestUnitSubTestCase: test-unit 3.5 lists a sub_test_case's tests
// under its name, indented below its parent's tests, and names its
// class "Parent::name" in the Failure: and Error: blocks (the output is
// what the test image's test-unit printed, nested two deep).
func TestTestUnitSubTestCase(t *testing.T) {
	out := outputFixture(t, "testunit_subtestcase.txt")
	got := testUnitVerdicts(outputLines(out))
	want := map[string]string{"TestSlug#test_spaces": ".", "TestSlug#test_zlast": ".",
		"TestSlug::nil title#test_nil": "E", "TestSlug::nil title::deeper (x)#test_deep": "F"}
	if !maps.Equal(got, want) {
		t.Errorf("verdicts %v, want %v", got, want)
	}
	s := ParseTestOutput(KindTestUnit, out)
	if s == nil || s.Passed != 2 || s.Failed != 2 {
		t.Fatalf("summary %+v, want 2 passed, 2 failed", s)
	}
	if want := []string{"TestSlug::nil title#test_nil", "TestSlug::nil title::deeper (x)#test_deep"}; !reflect.DeepEqual(s.FailedTests, want) {
		t.Errorf("failed tests %q, want %q", s.FailedTests, want)
	}
}
