package verify

import (
	"strings"
	"testing"
)

func pass(name string, phase Phase) CheckResult {
	return CheckResult{Name: name, Command: "cmd " + name, Phase: phase, Ran: true, Passed: true, Runs: 1}
}

func fail(name string, phase Phase) CheckResult {
	return CheckResult{Name: name, Command: "cmd " + name, Phase: phase, Ran: true, ExitCode: 1, Runs: 3, Failures: 3}
}

func TestDecide(t *testing.T) {
	flaky := fail("test", Final)
	flaky.Flaky, flaky.Failures = true, 2
	timedOut := fail("test", Final)
	timedOut.TimedOut = true
	notRun := CheckResult{Name: "test", Phase: Final, ExitCode: -1, NotRunReason: "build failed"}
	base := []CheckResult{pass("build", Baseline), pass("test", Baseline)}

	tests := map[string]struct {
		in        OutcomeInput
		want      Outcome
		reasonHas string
	}{
		"all pass": {OutcomeInput{FilesChanged: 1, Baseline: base,
			Final: []CheckResult{pass("build", Final), pass("test", Final)}}, Verified, "all 2 checks"},
		"fixes a failing test": {OutcomeInput{FilesChanged: 1,
			Baseline: []CheckResult{pass("build", Baseline), fail("test", Baseline)},
			Final:    []CheckResult{pass("build", Final), pass("test", Final)}}, Verified, "ran and passed"},
		"regression": {OutcomeInput{FilesChanged: 1, Baseline: base,
			Final: []CheckResult{pass("build", Final), fail("test", Final)}}, Failed, "test (cmd test) passed before the change and failed (exit 1)"},
		"timeout after passing baseline": {OutcomeInput{FilesChanged: 1, Baseline: base,
			Final: []CheckResult{pass("build", Final), timedOut}}, Failed, "timed out"},
		"regression outranks not run": {OutcomeInput{FilesChanged: 1, Baseline: base,
			Final: []CheckResult{fail("build", Final), notRun}}, Failed, "build"},
		"already failing": {OutcomeInput{FilesChanged: 1,
			Baseline: []CheckResult{pass("build", Baseline), fail("test", Baseline)},
			Final:    []CheckResult{pass("build", Final), fail("test", Final)}}, Unverified, "already failing"},
		"flaky is never passed": {OutcomeInput{FilesChanged: 1, Baseline: base,
			Final: []CheckResult{pass("build", Final), flaky}}, Unverified, "flaky (2 of 3 runs failed)"},
		"check could not run": {OutcomeInput{FilesChanged: 1,
			Baseline: []CheckResult{fail("build", Baseline), {Name: "test", Phase: Baseline, NotRunReason: "build failed"}},
			Final:    []CheckResult{fail("build", Final), notRun}}, Unverified, "test did not run (build failed)"},
		"fails with no baseline run": {OutcomeInput{FilesChanged: 1,
			Baseline: []CheckResult{fail("build", Baseline), {Name: "test", Phase: Baseline, NotRunReason: "build failed"}},
			Final:    []CheckResult{pass("build", Final), fail("test", Final)}}, Unverified, "did not run before the change"},
		"no baseline at all": {OutcomeInput{FilesChanged: 1,
			Final: []CheckResult{fail("test", Final)}}, Unverified, "no baseline"},
		"no checks": {OutcomeInput{FilesChanged: 2}, Unverified, "no verification check"},
		"no change": {OutcomeInput{Baseline: base, Final: []CheckResult{pass("build", Final)}}, NoChange, "without changing"},
		"stopped with a change": {OutcomeInput{StopReason: "step limit of 40 reached", FilesChanged: 3, Baseline: base,
			Final: []CheckResult{pass("build", Final), pass("test", Final)}}, Stopped, "step limit of 40"},
		"infrastructure wins": {OutcomeInput{InfraError: "docker: container died", StopReason: "cancel", FilesChanged: 1}, Error, "container died"},
		"reason is one line":  {OutcomeInput{StopReason: "a\nb\n\tc"}, Stopped, "a b c"},
		"a secret fails a passing change": {OutcomeInput{FilesChanged: 1, Baseline: base, Secret: "rule aws-access-token in a.go line 3",
			Final: []CheckResult{pass("build", Final), pass("test", Final)}}, Failed, "rule aws-access-token in a.go line 3), so nothing was committed"},
		"a secret in a stopped run": {OutcomeInput{StopReason: "step limit of 40 reached", FilesChanged: 1, Secret: "rule x in y line 1"},
			Stopped, "step limit of 40 reached; the change adds what looks like a secret"},
		"a secret does not hide an infrastructure failure": {OutcomeInput{InfraError: "docker died", FilesChanged: 1, Secret: "rule x in y line 1"},
			Error, "docker died"},
		"a blocking finding unverifies": {OutcomeInput{FilesChanged: 1, Baseline: base, Blocking: []string{"The test TestAdd was deleted.", "x"},
			Final: []CheckResult{pass("build", Final), pass("test", Final)}}, Unverified, "every check passed, but the test TestAdd was deleted (and 1 more findings)"},
		"a changed harness unverifies, named first": {OutcomeInput{FilesChanged: 1, Baseline: base, Harness: []string{"main_test.go"}, Blocking: []string{"The test TestAdd was deleted."},
			Final: []CheckResult{pass("build", Final), pass("test", Final)}}, Unverified, "every check passed, but the change edits how tests run (main_test.go), so the checks prove only what that harness reports (and 1 more findings)"},
		"a changed harness of many files is named in part": {OutcomeInput{FilesChanged: 1, Baseline: base, Harness: []string{"a", "b", "c", "d", "e"},
			Final: []CheckResult{pass("build", Final), pass("test", Final)}}, Unverified, "how tests run (a, b, c and 2 more)"},
		"a changed harness leaves a regression failed": {OutcomeInput{FilesChanged: 1, Baseline: base, Harness: []string{"conftest.py"},
			Final: []CheckResult{pass("build", Final), fail("test", Final)}}, Failed, "passed before the change"},
		"a blocking finding leaves a regression failed": {OutcomeInput{FilesChanged: 1, Baseline: base, Blocking: []string{"A skip was added."},
			Final: []CheckResult{pass("build", Final), fail("test", Final)}}, Failed, "passed before the change"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, reason := Decide(tc.in)
			if got != tc.want {
				t.Errorf("Decide = %s (%q), want %s", got, reason, tc.want)
			}
			if !strings.Contains(reason, tc.reasonHas) {
				t.Errorf("reason %q does not contain %q", reason, tc.reasonHas)
			}
			if strings.Contains(reason, "\n") {
				t.Errorf("reason %q spans lines", reason)
			}
		})
	}
}

func TestOneLineCutsAtRune(t *testing.T) {
	got := oneLine(strings.Repeat("é", 400))
	if !strings.HasSuffix(got, "…") || len(got) > 304 {
		t.Fatalf("oneLine kept %d bytes", len(got))
	}
	for _, r := range strings.TrimSuffix(got, "…") {
		if r != 'é' {
			t.Fatalf("oneLine split a rune: %q", got)
		}
	}
}

func TestExitText(t *testing.T) {
	for _, c := range []struct {
		command string
		code    int
		want    string
	}{
		{"python -m pytest", 5, "exit 5, pytest collected no tests"},
		{"pytest -q tests/", 5, "exit 5, pytest collected no tests"},
		{"cd src && python3 -m pytest", 5, "exit 5, pytest collected no tests"},
		{"python -m pytest", 1, "exit 1"},
		{"go test ./...", 5, "exit 5"},
		{"./run-pytests.sh", 5, "exit 5"},
	} {
		r := CheckResult{Command: c.command, ExitCode: c.code, Ran: true}
		if got := r.ExitText(); got != c.want {
			t.Errorf("%q exit %d: %q, want %q", c.command, c.code, got, c.want)
		}
	}
}

func TestDecideCouldNotRunAndZeroTests(t *testing.T) {
	couldNot := func(phase Phase) CheckResult {
		return CheckResult{Name: "test", Command: "python -m pytest", Phase: phase, ExitCode: 127, Runs: 1,
			CouldNotRun: true, NotRunReason: "`python` not found in the image"}
	}
	zeroPass := pass("test", Final)
	zeroPass.ZeroTests, zeroPass.ZeroTestsDetail = true, "mocha ran no test"
	zeroExit5 := CheckResult{Name: "test", Command: "python -m pytest", Phase: Final, Ran: true, ExitCode: 5, Runs: 1,
		ZeroTests: true, ZeroTestsDetail: "pytest collected no tests (exit 5)"}
	base := []CheckResult{pass("build", Baseline), pass("test", Baseline)}
	tests := map[string]struct {
		in        OutcomeInput
		want      Outcome
		reasonHas string
	}{
		"could not run in both phases": {OutcomeInput{FilesChanged: 1,
			Baseline: []CheckResult{pass("build", Baseline), couldNot(Baseline)},
			Final:    []CheckResult{pass("build", Final), couldNot(Final)}},
			Unverified, "test could not run: `python` not found in the image"},
		"could not run after passing is the change's doing": {OutcomeInput{FilesChanged: 1, Baseline: base,
			Final: []CheckResult{pass("build", Final), couldNot(Final)}},
			Failed, "passed before the change and could not run after it"},
		"zero tests with exit 0": {OutcomeInput{FilesChanged: 1, Baseline: base,
			Final: []CheckResult{pass("build", Final), zeroPass}},
			Unverified, "test ran no tests: mocha ran no test"},
		"pytest exit 5 is no regression": {OutcomeInput{FilesChanged: 1, Baseline: base,
			Final: []CheckResult{pass("build", Final), zeroExit5}},
			Unverified, "test ran no tests: pytest collected no tests (exit 5)"},
		"a regression elsewhere still wins": {OutcomeInput{FilesChanged: 1, Baseline: base,
			Final: []CheckResult{fail("build", Final), couldNot(Final)}},
			Failed, "build"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, reason := Decide(tc.in)
			if got != tc.want || !strings.Contains(reason, tc.reasonHas) {
				t.Errorf("Decide = %s (%q), want %s with %q", got, reason, tc.want, tc.reasonHas)
			}
		})
	}
}

// A dependency the change needs that setup held back makes checks that
// passed or failed without it unverified; a secret still fails the run,
// and a stop still stops it.
func TestDecideNotFetched(t *testing.T) {
	pass := []CheckResult{{Name: "test", Command: "go test ./...", Ran: true, Passed: true}}
	fail := []CheckResult{{Name: "test", Command: "go test ./...", Ran: true, ExitCode: 1}}
	held := []string{"Go module evil.example.com/x"}
	cases := map[string]struct {
		in   OutcomeInput
		want Outcome
	}{
		"passed":          {OutcomeInput{FilesChanged: 1, Baseline: pass, Final: pass, NotFetched: held}, Unverified},
		"failed":          {OutcomeInput{FilesChanged: 1, Baseline: pass, Final: fail, NotFetched: held}, Unverified},
		"secret":          {OutcomeInput{FilesChanged: 1, Baseline: pass, Final: pass, NotFetched: held, Secret: "rule x in a"}, Failed},
		"stopped":         {OutcomeInput{StopReason: "budget", NotFetched: held}, Stopped},
		"already failing": {OutcomeInput{FilesChanged: 1, Baseline: fail, Final: fail, NotFetched: held}, Unverified},
		"none":            {OutcomeInput{FilesChanged: 1, Baseline: pass, Final: pass}, Verified},
	}
	for name, c := range cases {
		o, reason := Decide(c.in)
		if o != c.want {
			t.Errorf("%s: %s (%s), want %s", name, o, reason, c.want)
		}
		if c.want == Unverified && !strings.Contains(reason, "evil.example.com/x") {
			t.Errorf("%s: the reason does not name the module: %s", name, reason)
		}
	}
}
