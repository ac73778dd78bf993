package verify

import (
	"reflect"
	"testing"
)

const goTestOutput = "--- FAIL: TestParse (0.00s)\n" +
	"    --- FAIL: TestParse/leap_year (0.00s)\n" +
	"        date_test.go:12: got 28, want 29\n" +
	"--- FAIL: TestFormat (0.00s)\n" +
	"FAIL\n" +
	"FAIL\texample.com/m/date\t0.003s\n" +
	"ok  \texample.com/m/slug\t(cached)\n" +
	"?   \texample.com/m/cmd/tool\t[no test files]\n" +
	"# example.com/m/broken [example.com/m/broken.test]\n" +
	"broken/x_test.go:3:2: undefined: Nope\n" +
	"FAIL\texample.com/m/broken [build failed]\n" +
	"FAIL\n"

func TestParseGoTest(t *testing.T) {
	s := ParseGoTest(goTestOutput)
	if s == nil {
		t.Fatal("ParseGoTest returned nil for go test output")
	}
	want := &GoTestSummary{
		PackagesOK:          []string{"example.com/m/slug"},
		PackagesFailed:      []string{"example.com/m/date", "example.com/m/broken"},
		PackagesBuildFailed: []string{"example.com/m/broken"},
		NoTestFiles:         []string{"example.com/m/cmd/tool"},
		FailedTests:         map[string][]string{"example.com/m/date": {"TestParse", "TestFormat"}},
		PassedTests:         map[string][]string{},
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("ParseGoTest:\n got %+v\nwant %+v", s, want)
	}
	if got := s.FailedTestNames(); !reflect.DeepEqual(got, []string{"TestFormat", "TestParse"}) {
		t.Errorf("FailedTestNames = %v", got)
	}
}

func TestParseGoTestVerbose(t *testing.T) {
	out := "=== RUN   TestA\n--- PASS: TestA (0.00s)\n=== RUN   TestB\n--- FAIL: TestB (0.00s)\nFAIL\nFAIL\tm/p\t0.01s\n"
	s := ParseGoTest(out)
	if got := s.PassedTests["m/p"]; !reflect.DeepEqual(got, []string{"TestA"}) {
		t.Errorf("passed tests = %v, want [TestA]", got)
	}
	if got := s.FailedTests["m/p"]; !reflect.DeepEqual(got, []string{"TestB"}) {
		t.Errorf("failed tests = %v, want [TestB]", got)
	}
}

func TestParseGoTestNotGoTest(t *testing.T) {
	for name, out := range map[string]string{
		"empty":     "",
		"npm":       "> jest\nTests: 1 failed\n",
		"bare FAIL": "FAIL\n",
		"flag-like": "ok -v\n",
	} {
		t.Run(name, func(t *testing.T) {
			if s := ParseGoTest(out); s != nil {
				t.Errorf("ParseGoTest(%q) = %+v, want nil", out, s)
			}
		})
	}
}

func TestGoTestRerun(t *testing.T) {
	failing := &GoTestSummary{FailedTests: map[string][]string{"m/b": {"TestY"}, "m/a": {"TestX", "TestY"}}}
	tests := map[string]struct {
		command string
		summary *GoTestSummary
		want    string
	}{
		"plain": {"go test ./...", failing, "go test -count=1 -run '^(TestX|TestY)$' m/a m/b"},
		"keeps flags": {"go test -race -tags=integration ./...", failing,
			"go test -count=1 -race -tags=integration -run '^(TestX|TestY)$' m/a m/b"},
		"drops run and count":      {"go test -count=1 -run=Foo ./...", failing, "go test -count=1 -run '^(TestX|TestY)$' m/a m/b"},
		"flag with separate value": {"go test -tags integration ./...", failing, ""},
		"shell pipeline":           {"go test ./... | tee out", failing, ""},
		"not go test":              {"make test", failing, ""},
		"no failing tests":         {"go test ./...", &GoTestSummary{}, ""},
		"nil summary":              {"go test ./...", nil, ""},
		"build failed": {"go test ./...", &GoTestSummary{
			FailedTests: map[string][]string{"m/a": {"TestX"}}, PackagesBuildFailed: []string{"m/b"}}, ""},
		"forged test name": {"go test ./...", &GoTestSummary{
			FailedTests: map[string][]string{"m/a": {"TestX';rm"}}}, ""},
		"forged package": {"go test ./...", &GoTestSummary{
			FailedTests: map[string][]string{"m/a;rm": {"TestX"}}}, ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := goTestRerun(tc.command, tc.summary); got != tc.want {
				t.Errorf("goTestRerun(%q) =\n %q\nwant\n %q", tc.command, got, tc.want)
			}
		})
	}
}
