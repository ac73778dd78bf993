package verify

import (
	"reflect"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/sandbox"
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
	s := ParseTestOutput(KindGo, goTestOutput).GoTests()
	if s == nil {
		t.Fatal("the go parser returned nil for go test output")
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
		t.Errorf("go parser:\n got %+v\nwant %+v", s, want)
	}
	if got := s.FailedTestNames(); !reflect.DeepEqual(got, []string{"TestFormat", "TestParse"}) {
		t.Errorf("FailedTestNames = %v", got)
	}
}

func TestParseGoTestVerbose(t *testing.T) {
	out := "=== RUN   TestA\n--- PASS: TestA (0.00s)\n=== RUN   TestB\n--- FAIL: TestB (0.00s)\nFAIL\nFAIL\tm/p\t0.01s\n"
	s := ParseTestOutput(KindGo, out).GoTests()
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
			if s := ParseTestOutput(KindGo, out); s != nil {
				t.Errorf("ParseTestOutput(go, %q) = %+v, want nil", out, s)
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

// TestReadGoJSON reads real go test -json output (testdata/output, see
// SOURCES.md): a build failure, a failing test with subtests and a skip,
// a package without test files and a TestMain that exits 0.
func TestReadGoJSON(t *testing.T) {
	s, text := readGo(outputFixture(t, "go_json_mixed.jsonl"))
	if s == nil {
		t.Fatal("not recognised")
	}
	const p = "example.com/cap/"
	wantRan := []string{p + "calc.TestAdd", p + "calc.TestSub"}
	if !s.Named || !reflect.DeepEqual(s.RanTests, wantRan) || !reflect.DeepEqual(s.SkippedTests, []string{p + "calc.TestSkipped"}) {
		t.Errorf("named %v, ran %v, skipped %v; want %v and [%scalc.TestSkipped]", s.Named, s.RanTests, s.SkippedTests, wantRan, p)
	}
	if s.Passed != 1 || s.Failed != 1 || s.Skipped != 1 || s.NoTests || !reflect.DeepEqual(s.FailedTests, []string{"TestAdd"}) {
		t.Errorf("counts %+v", s)
	}
	g := s.Go
	want := &GoTestSummary{
		PackagesOK:          []string{p + "skipper"},
		PackagesFailed:      []string{p + "broken", p + "calc"},
		PackagesBuildFailed: []string{p + "broken"},
		NoTestFiles:         []string{p + "empty"},
		FailedTests:         map[string][]string{p + "calc": {"TestAdd"}},
		PassedTests:         map[string][]string{p + "calc": {"TestSub"}},
	}
	if !reflect.DeepEqual(g, want) {
		t.Errorf("packages:\n got %+v\nwant %+v", g, want)
	}
	// The text is what go test without -json prints: the build error,
	// the failing test's log, every package line; no passing test and no
	// framing.
	for _, line := range []string{"broken/broken_test.go:5:32: declared and not used: unused", "FAIL\texample.com/cap/broken [build failed]",
		"calc_test.go:8: Add(2, 3) = -1, want 5", "--- FAIL: TestAdd", "FAIL\texample.com/cap/calc\t", "?   \texample.com/cap/empty\t[no test files]", "ok  \texample.com/cap/skipper\t"} {
		if !strings.Contains(text, line) {
			t.Errorf("text lacks %q:\n%s", line, text)
		}
	}
	for _, line := range []string{"=== RUN", "--- PASS: TestSub", "not today", `"Action"`} {
		if strings.Contains(text, line) {
			t.Errorf("text has %q:\n%s", line, text)
		}
	}
	// The same run's text output gives the same packages.
	plain := ParseTestOutput(KindGo, outputFixture(t, "go_json_mixed_text.txt"))
	if plain.Named || !reflect.DeepEqual(plain.Go.PackagesFailed, g.PackagesFailed) || !reflect.DeepEqual(plain.Go.PackagesOK, g.PackagesOK) {
		t.Errorf("text parse %+v disagrees with -json %+v", plain.Go, g)
	}
}

// TestReadGoJSONTestMainExit: a TestMain that exits 0 without m.Run
// prints "ok"; the events show no test ran.
func TestReadGoJSONTestMainExit(t *testing.T) {
	s, _ := readGo(outputFixture(t, "go_json_testmain_exit.jsonl"))
	if s == nil || !s.Named || !s.NoTests || s.Ran() != 0 || len(s.Go.PackagesOK) != 1 {
		t.Fatalf("summary %+v, want named, no tests, one ok package", s)
	}
	if got := zeroTests(KindGo, 0, s); !strings.Contains(got, "no test function ran") {
		t.Errorf("zeroTests = %q", got)
	}
	pass, _ := readGo(outputFixture(t, "go_json_pass.jsonl"))
	if pass == nil || pass.NoTests || pass.Passed != 2 || pass.Skipped != 1 || zeroTests(KindGo, 0, pass) != "" {
		t.Errorf("passing run %+v", pass)
	}
}

// TestReadGoCutStream: names read from a stream whose middle was dropped
// are not all the names.
func TestReadGoCutStream(t *testing.T) {
	out := joinOutput(sandbox.Output{Head: []byte(`{"Action":"pass","Package":"m/a","Test":"TestA"}` + "\n"),
		Tail: []byte(`{"Action":"pass","Package":"m/a"}` + "\n"), Total: 1 << 20})
	res := CheckResult{Ran: true, Passed: true}
	describe(&res, Check{Run: "go test ./...", Kind: KindGo}, out, nil)
	if res.Summary == nil || res.Summary.Named {
		t.Errorf("summary %+v, want read but not named", res.Summary)
	}
}
