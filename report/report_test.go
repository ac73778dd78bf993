package report

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/patchwright/patchwright/report/marker"
	"github.com/patchwright/patchwright/verify"
)

// headings returns the level-2 headings of a Markdown body outside code
// fences, in order.
func headings(body string) []string {
	var out []string
	for _, line := range strings.Split(outsideFences(body), "\n") {
		if strings.HasPrefix(line, "## ") {
			out = append(out, line)
		}
	}
	return out
}

// outsideFences returns the lines of body that are not inside a fenced
// code block, where GitHub renders everything literally.
func outsideFences(body string) string {
	var out []string
	fence := ""
	for _, line := range strings.Split(body, "\n") {
		if m := regexp.MustCompile("^(`{3,})").FindString(line); m != "" {
			switch {
			case fence == "":
				fence = m
			case len(m) >= len(fence) && strings.TrimSpace(line) == m:
				fence = ""
			}
			continue
		}
		if fence == "" {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

var contractHeadings = []string{"## Summary", "## Changes", "## Verification", "## Not verified", "## Run"}

func TestPRBodyStructure(t *testing.T) {
	for name, in := range bodyCases() {
		t.Run(name, func(t *testing.T) {
			body, err := PRBody(in)
			if err != nil {
				t.Fatal(err)
			}
			if got := headings(body); !reflect.DeepEqual(got, contractHeadings) {
				t.Errorf("headings = %q, want exactly %q", got, contractHeadings)
			}
			// One run marker, and one history marker when there is a
			// history: nothing the run controls can forge another.
			if n := strings.Count(outsideFences(body), "<!-- patchwright:run="); n != 1 {
				t.Errorf("body has %d run markers, want 1", n)
			}
			if n, want := strings.Count(outsideFences(body), "<!-- patchwright:"), 1+min(len(in.Attempts), 1); n != want {
				t.Errorf("body has %d patchwright markers, want %d", n, want)
			}
			if open, closed := strings.Count(outsideFences(body), "<details>"), strings.Count(outsideFences(body), "</details>"); open != closed {
				t.Errorf("%d <details> but %d </details> outside code fences", open, closed)
			}
			if strings.Contains(body, "@everyone") || strings.Contains(body, "#99") || strings.Contains(body, "<img") {
				t.Errorf("hostile summary leaked through:\n%s", body)
			}
			if in.Issue > 0 && strings.Count(body, "Closes #") != 1 {
				t.Errorf("want exactly one Closes line")
			}
		})
	}
}

func TestPRBodyDoesNotRepeatClaims(t *testing.T) {
	in := bodyCases()["unverified_no_tests_claim"]
	body, err := PRBody(in)
	if err != nil {
		t.Fatal(err)
	}
	notVerified := body[strings.Index(body, "## Not verified"):strings.Index(body, "## Run")]
	if !strings.Contains(notVerified, `The model's summary says "All tests pass": no test command ran and passed after the change`) {
		t.Errorf("the unbacked claim is not listed as the model's claim:\n%s", notVerified)
	}
	if strings.Contains(notVerified, "Nothing") {
		t.Error(`"Not verified" says Nothing although nothing was verified`)
	}
	// The claim appears only in the quoted summary and in Not verified.
	if n := strings.Count(body, "All tests pass"); n != 2 {
		t.Errorf("claim appears %d times, want 2 (summary and Not verified)", n)
	}
}

func TestClaimBackedByPassingTest(t *testing.T) {
	final := []verify.CheckResult{{Name: "test", Command: "go test ./...", Phase: verify.Final, Ran: true, Passed: true}}
	if got := unbackedClaims("All tests pass and it builds.", final, verify.Verified); len(got) != 0 {
		t.Errorf("claims backed by a passing go test were flagged: %q", got)
	}
	flaky := []verify.CheckResult{{Name: "test", Command: "go test ./...", Phase: verify.Final, Ran: true, Flaky: true}}
	if got := unbackedClaims("All tests pass.", flaky, verify.Unverified); len(got) != 1 {
		t.Errorf("a flaky test backed the claim: %q", got)
	}
	if got := unbackedClaims("Lint passes.", final, verify.Verified); len(got) != 1 {
		t.Errorf("lint claim without a lint check not flagged: %q", got)
	}
}

func TestNothingOnlyWhenNothing(t *testing.T) {
	in := base()
	in.Final = append(in.Final, verify.CheckResult{Name: "lint", Command: "golangci-lint run", Phase: verify.Final, Ran: true, Passed: true})
	in.Files = in.Files[:2] // drop the untested cmd/slugkit file
	body, err := PRBody(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(body, "## Not verified\n\nNothing") {
		t.Errorf("a fully verified run should say Nothing:\n%s", body)
	}
}

func TestPRBodyOverLimit(t *testing.T) {
	in := base()
	in.Outcome = verify.Failed
	huge := strings.Repeat("very long failing output line with `ticks` and </details>\n", 5000)
	for i := range 30 {
		c := verify.CheckResult{Name: fmt.Sprintf("check%d", i), Command: "make check", Phase: verify.Final, Ran: true, ExitCode: 2, Output: huge}
		in.Final = append(in.Final, c)
		c.Phase = verify.Baseline
		in.Baseline = append(in.Baseline, c)
	}
	for i := range 1000 {
		in.Files = append(in.Files, FileStat{Path: fmt.Sprintf("gen/%04d_%s.go", i, strings.Repeat("x", 60)), Added: i})
	}
	in.Summary = strings.Repeat("The model wrote far too much. ", 2000)
	body, err := PRBody(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(body) >= MaxBody {
		t.Fatalf("body is %d bytes, limit %d", len(body), MaxBody)
	}
	for _, want := range []string{"listed in the run log", "summary was cut", "## Run"} {
		if !strings.Contains(body, want) {
			t.Errorf("over-limit body lacks %q", want)
		}
	}
	if got := headings(body); !reflect.DeepEqual(got, contractHeadings) {
		t.Errorf("headings = %q", got)
	}
	golden(t, "pr_body_over_limit", body)
}

func TestFromLedger(t *testing.T) {
	// Built in memory from the same event types the runner writes.
	bodies := []string{
		`{"seq":1,"time":"2026-11-30T10:14:00Z","type":"run_start","model":"m","limits":{"max_steps":40},"tools":[],"prompt_sha256":"","prompt":""}`,
		`{"seq":2,"time":"2026-11-30T10:14:01Z","type":"check","name":"test","command":"go test ./...","phase":"baseline","ran":true,"exit_code":1,"passed":false,"runs":3,"failures":3,"duration_ms":1500}`,
		`{"seq":3,"time":"2026-11-30T10:14:02Z","type":"some_future_event","x":1}`,
		`{"seq":4,"time":"2026-11-30T10:14:03Z","type":"run_stop","reason":"step_limit","detail":"40 steps","steps":40,"usage":{"input_tokens":10,"output_tokens":2,"cached_input_tokens":5},"summary":"done"}`,
		`{"seq":5,"time":"2026-11-30T10:14:04Z","type":"check","name":"test","command":"go test ./...","phase":"final","ran":true,"exit_code":0,"passed":true,"runs":1,"failures":0,"duration_ms":1200}`,
		`{"seq":6,"time":"2026-11-30T10:14:05Z","type":"new_test_before","dir":"slug","name":"TestNew","file":"slug/a_test.go","added":true,"status":"passes_before","command":"go test"}`,
	}
	log := readLog(t, strings.Join(bodies, "\n")+"\n")
	in, err := FromLedger(log)
	if err != nil {
		t.Fatal(err)
	}
	if in.Steps != 40 || in.MaxSteps != 40 || in.Usage.CachedInputTokens != 5 || in.Summary != "done" || in.StopDetail != "40 steps" {
		t.Errorf("run facts = %+v", in)
	}
	if len(in.Baseline) != 1 || in.Baseline[0].Passed || in.Baseline[0].Duration != 1500*time.Millisecond {
		t.Errorf("baseline = %+v", in.Baseline)
	}
	if len(in.Final) != 1 || !in.Final[0].Passed {
		t.Errorf("final = %+v", in.Final)
	}
	if len(in.NewTests) != 1 || in.NewTests[0].Status != verify.PassesBefore {
		t.Errorf("new tests = %+v", in.NewTests)
	}
}

func TestAnnotations(t *testing.T) {
	out := "# example.com/m/slug\n./slug/slug.go:12:2: undefined: runes\n" +
		"--- FAIL: TestParse (0.00s)\n    date_test.go:40: got 28, want 29\n" +
		"FAIL\texample.com/m/date\t0.01s\n" +
		"/usr/local/go/src/x.go:1:1: outside\n../escape.go:3: outside\n" +
		"    orphan_test.go:3: from a package outside the module\nFAIL\tother.org/x\t0.1s\n"
	got := Annotations(out, "example.com/m")
	want := []Annotation{
		{Path: "slug/slug.go", StartLine: 12, EndLine: 12, AnnotationLevel: "failure", Message: "undefined: runes"},
		{Path: "date/date_test.go", StartLine: 40, EndLine: 40, AnnotationLevel: "failure", Message: "got 28, want 29"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Annotations =\n%+v\nwant\n%+v", got, want)
	}
	data, _ := json.Marshal(got[0])
	if !strings.Contains(string(data), `"annotation_level":"failure"`) || !strings.Contains(string(data), `"start_line":12`) {
		t.Errorf("annotation JSON %s lacks go-github field names", data)
	}
}

func TestCheckRunBatchesAndLimit(t *testing.T) {
	var out strings.Builder
	for i := range 120 {
		fmt.Fprintf(&out, "pkg/f.go:%d:1: error %d\n", i+1, i)
	}
	out.WriteString(strings.Repeat("x", 200000))
	final := verify.CheckResult{Name: "build", Command: "go build ./...", Phase: verify.Final, Ran: true, ExitCode: 1, Output: out.String()}
	b := verify.CheckResult{Name: "build", Phase: verify.Baseline, Ran: true, Passed: true}
	cr, err := CheckRun(final, &b, "example.com/m", "https://log.example/run/1")
	if err != nil {
		t.Fatal(err)
	}
	if cr.Conclusion != "failure" || cr.Title != "failed (exit 1); passed before the change" {
		t.Errorf("conclusion %q title %q", cr.Conclusion, cr.Title)
	}
	if len(cr.Summary) > MaxCheckRunSummary {
		t.Errorf("summary is %d bytes", len(cr.Summary))
	}
	if !strings.Contains(cr.Summary, "full log") {
		t.Error("cut output does not point to the full log")
	}
	sizes := []int{}
	for _, b := range cr.Annotations {
		sizes = append(sizes, len(b))
	}
	if !reflect.DeepEqual(sizes, []int{50, 50, 20}) {
		t.Errorf("batch sizes = %v, want [50 50 20]", sizes)
	}
}

func TestCheckRunGolden(t *testing.T) {
	cases := map[string]verify.CheckResult{
		"passed":  {Name: "test", Command: "go test ./...", Phase: verify.Final, Ran: true, Passed: true, Runs: 1, Duration: 2 * time.Second},
		"not_run": {Name: "test", Command: "go test ./...", Phase: verify.Final, ExitCode: -1, NotRunReason: "build failed"},
		"flaky": {Name: "test", Command: "go test ./...", Phase: verify.Final, Ran: true, ExitCode: 1, Flaky: true, Runs: 3, Failures: 1,
			RerunCommand: "go test -count=1 -run '^(TestClock)$' example.com/m", Output: "--- FAIL: TestClock (0.00s)\nFAIL\texample.com/m\t0.01s\n"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			cr, err := CheckRun(c, nil, "example.com/m", "")
			if err != nil {
				t.Fatal(err)
			}
			golden(t, "check_run_"+name, cr.Conclusion+"\n"+cr.Title+"\n\n"+cr.Summary)
		})
	}
}

func TestStatusComment(t *testing.T) {
	s := Status{Issue: 41, RunURL: "https://patchwright.example/runs/r1", TriggeredBy: "maria"}
	for _, p := range []Phase{PhaseQueued, PhaseWorking, PhaseVerifying, PhaseDone, PhaseFailed} {
		t.Run(string(p), func(t *testing.T) {
			s := s
			s.Phase = p
			if p != PhaseQueued {
				s.BaseBranch, s.BaseCommit, s.Image = "main", "4be1c02d9e", "golang:1.23"
				s.Baseline = []verify.CheckResult{{Name: "build", Ran: true, Passed: true}, {Name: "test", Ran: true, ExitCode: 1}}
				s.Step, s.MaxSteps, s.LastAction = 5, 40, "ran `go test ./slug/...`"
			}
			switch p {
			case PhaseDone:
				s.PullRequestURL, s.Outcome, s.Reason = "https://github.example/acme/slugkit/pull/42", verify.Verified, "all 3 checks ran and passed"
			case PhaseFailed:
				s.Outcome, s.Reason, s.Reached = verify.Error, "the sandbox container exited", PhaseVerifying
			}
			got, err := StatusComment(s)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(got, marker.Status(41)+"\n") {
				t.Errorf("status comment does not start with its marker:\n%s", got)
			}
			golden(t, "status_"+string(p), got)
		})
	}
	if _, err := StatusComment(Status{Issue: 1, Phase: "dancing"}); err == nil {
		t.Error("an unknown phase was rendered")
	}
}

func TestFailureComment(t *testing.T) {
	for _, name := range []string{"stopped", "no_change", "error", "failed"} {
		t.Run(name, func(t *testing.T) {
			in := bodyCases()[name]
			in.Issue = 58
			got, err := FailureComment(in)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(got, marker.Status(58)) || !strings.Contains(got, "What you can do:") {
				t.Errorf("failure comment lacks marker or advice:\n%s", got)
			}
			golden(t, "failure_"+name, got)
		})
	}
}

// TestFailureCommentOfAMerge: a merge that still conflicts is answered
// with what to do about the merge (`/agent rebase`), not the issue's
// advice to add detail and retry.
func TestFailureCommentOfAMerge(t *testing.T) {
	in := bodyCases()["failed"]
	in.Issue, in.Merging = 58, true
	got, err := FailureComment(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "`/agent rebase`") || strings.Contains(got, "`/agent retry`") {
		t.Errorf("a merge's failure comment gives the issue's advice:\n%s", got)
	}
}

// TestPRBodyWhy: the verification section says why detection chose each
// command, one clause per reason after the table, with the checks that
// share it; a configured check (no reason) is not named, a reason cannot
// break out of its line, and the contract's headings stay.
func TestPRBodyWhy(t *testing.T) {
	in := base()
	for _, cs := range [][]verify.CheckResult{in.Baseline, in.Final} {
		for i := range cs {
			cs[i].Why = "go.mod: the go command, per module"
		}
	}
	configured := check("lint", "make lint", verify.Final, true, time.Second)
	hostile := check("test (web: npm)", "cd web && npm test", verify.Final, true, time.Second)
	hostile.Why = "package.json's `test` script\n## Injected <img src=x>"
	in.Final = append(in.Final, configured, hostile)
	body, err := PRBody(in)
	if err != nil {
		t.Fatal(err)
	}
	if got := headings(body); !reflect.DeepEqual(got, contractHeadings) {
		t.Errorf("headings = %q, want %q", got, contractHeadings)
	}
	verification := body[strings.Index(body, "## Verification"):strings.Index(body, "## Not verified")]
	want := "Why these commands: go.mod: the go command, per module (`build`, `vet`, `test`); package.json's `test` script \\#\\# Injected &lt;img src=x&gt; (`test (web: npm)`)."
	if !strings.Contains(verification, want) {
		t.Errorf("verification lacks\n%s\n%s", want, verification)
	}
	if strings.Contains(verification, "`lint`)") {
		t.Errorf("a configured check is given a reason:\n%s", verification)
	}
	// Without any reason (every check configured) there is no such line.
	body, err = PRBody(base())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(body, "Why these commands") {
		t.Errorf("why line without reasons:\n%s", body)
	}
}

// TestPRBodyNamesTestsAsTheyChanged: a renamed test that fails before
// says "renamed" and its old name; an edited test is "changed", not
// "new"; a test whose only edit is a message that passes before is not
// reported at all.
func TestPRBodyNamesTestsAsTheyChanged(t *testing.T) {
	for name, tc := range map[string]struct {
		test    verify.NewTest
		status  verify.NewTestStatus
		want    string
		wantNot string
	}{
		"renamed demonstrates": {test: verify.NewTest{Name: "TestZeroWidthJoiner", RenamedFrom: "TestZeroWidthJointer"}, status: verify.FailsBefore,
			want: "The renamed test `TestZeroWidthJoiner` (was `TestZeroWidthJointer`) fails on the original code and passes with the change, so it demonstrates the fix."},
		"moved and renamed": {test: verify.NewTest{Name: "TestB", RenamedFrom: "TestA", MovedFrom: "a_test.go"}, status: verify.FailsBefore,
			want: "The renamed test `TestB` (was `TestA` in `a_test.go`) fails"},
		"changed passes before": {test: verify.NewTest{Name: "TestEdited"}, status: verify.PassesBefore,
			want: "The changed test `TestEdited` also passes without the change", wantNot: "new test"},
		"message only passes before": {test: verify.NewTest{Name: "TestMsg", LiteralOnly: true}, status: verify.PassesBefore,
			wantNot: "TestMsg"},
		"message only fails before": {test: verify.NewTest{Name: "TestMsg", LiteralOnly: true}, status: verify.FailsBefore,
			want: "The changed test `TestMsg` fails on the original code"},
	} {
		t.Run(name, func(t *testing.T) {
			in := base()
			in.NewTests = []verify.NewTestResult{{NewTest: tc.test, Status: tc.status}}
			body, err := PRBody(in)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want != "" && !strings.Contains(body, tc.want) {
				t.Errorf("body lacks %q:\n%s", tc.want, body)
			}
			if tc.wantNot != "" && strings.Contains(body, tc.wantNot) {
				t.Errorf("body has %q:\n%s", tc.wantNot, body)
			}
		})
	}
}

// TestChecksAreWhatVerifySays: the report asks verify what a check is. A
// passing `node --test` is a JavaScript test run, a passing `go vet` a
// linter, and a check named for neither is neither.
func TestChecksAreWhatVerifySays(t *testing.T) {
	const noJS = "no JavaScript/TypeScript test command ran"
	const noLint = "No linter is configured"
	for name, tc := range map[string]struct {
		final   []verify.CheckResult
		file    string
		want    []string
		wantNot []string
	}{
		"node --test tests JavaScript": {final: []verify.CheckResult{check("test", "node --test", verify.Final, true, time.Second)},
			file: "lib/sum.js", wantNot: []string{noJS}},
		"a build is no JavaScript test": {final: []verify.CheckResult{check("build", "npm run build", verify.Final, true, time.Second)},
			file: "lib/sum.js", want: []string{noJS}},
		"go vet is a linter": {final: []verify.CheckResult{check("vet", "go vet ./...", verify.Final, true, time.Second), check("test", "go test ./...", verify.Final, true, time.Second)},
			file: "calc.go", wantNot: []string{noLint}},
		"go test is no linter": {final: []verify.CheckResult{check("test", "go test ./...", verify.Final, true, time.Second)},
			file: "calc.go", want: []string{noLint}},
		"Ruby with no test run is said": {final: []verify.CheckResult{check("lint", "bundle exec rubocop", verify.Final, true, time.Second)},
			file: "lib/gem.rb", want: []string{"touches Ruby files but no Ruby test command ran"}},
		"a Ruby test run covers Ruby": {final: []verify.CheckResult{check("test", "bundle exec rake test", verify.Final, true, time.Second)},
			file: "lib/gem.rb", wantNot: []string{"no Ruby test command ran"}},
		"PHP with no test run is said": {final: []verify.CheckResult{check("lint", "vendor/bin/phpstan analyse", verify.Final, true, time.Second)},
			file: "src/Html2Text.php", want: []string{"touches PHP files but no PHP test command ran"}},
		"a PHPUnit run covers PHP": {final: []verify.CheckResult{check("test", "vendor/bin/phpunit", verify.Final, true, time.Second)},
			file: "src/Html2Text.php", wantNot: []string{"no PHP test command ran"}},
	} {
		t.Run(name, func(t *testing.T) {
			in := base()
			in.Baseline, in.Final, in.NewTests, in.GoModule = nil, tc.final, nil, ""
			in.Files = []FileStat{{Path: tc.file, Added: 1}}
			body, err := PRBody(in)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("body lacks %q:\n%s", w, body)
				}
			}
			for _, w := range tc.wantNot {
				if strings.Contains(body, w) {
					t.Errorf("body has %q:\n%s", w, body)
				}
			}
		})
	}
}

// TestPRBodySaysHowChecksRan: a check the runner adapted to the image
// (the image's phpunit for a missing vendor/bin/phpunit) says so.
func TestPRBodySaysHowChecksRan(t *testing.T) {
	in := base()
	in.Final[2].Note = "`vendor/bin/phpunit` is missing (there is no `vendor/`: `composer install` did not run or failed in setup), so the check ran the image's `phpunit`"
	body, err := PRBody(in)
	if err != nil {
		t.Fatal(err)
	}
	want := "How they ran: `test`: `vendor/bin/phpunit` is missing (there is no `vendor/`: `composer install` did not run or failed in setup), so the check ran the image's `phpunit`."
	if !strings.Contains(body, want) {
		t.Errorf("body lacks %q:\n%s", want, body)
	}
}

// TestTestEditOutsideTests: a test file whose edit holds no new or
// changed test (uniseg's fix changed a table of cases the tests share) is
// named in Not verified: nothing ran the edit on the original code. A
// file with a new test, and test data, are not.
func TestTestEditOutsideTests(t *testing.T) {
	const said = "`width_test.go` changed, but no new or changed test was found in it"
	in := base()
	in.Baseline, in.GoModule = nil, ""
	in.Final = []verify.CheckResult{check("test", "go test ./...", verify.Final, true, time.Second)}
	in.NewTests = []verify.NewTestResult{{NewTest: verify.NewTest{File: "step_test.go", Name: "TestStep", Added: true}, Status: verify.FailsBefore}}
	in.Files = []FileStat{{Path: "width.go", Added: 3}, {Path: "width_test.go", Added: 3, Deleted: 3}, {Path: "step_test.go", Added: 9},
		{Path: "testdata/cases.golden", Added: 2}}
	body, err := PRBody(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(body, said) {
		t.Errorf("body lacks %q:\n%s", said, body)
	}
	for _, not := range []string{"`step_test.go` changed, but", "`testdata/cases.golden` changed, but"} {
		if strings.Contains(body, not) {
			t.Errorf("body has %q:\n%s", not, body)
		}
	}
	in.Final = []verify.CheckResult{check("vet", "go vet ./...", verify.Final, true, time.Second)}
	if body, _ := PRBody(in); strings.Contains(body, said) {
		t.Errorf("said with no test run after the change:\n%s", body)
	}
}
