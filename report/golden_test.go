package report

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/patchwright/patchwright/verify"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got with testdata/name.golden, or rewrites it under
// -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test ./report -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s; run go test ./report -update and review the diff.\n--- got ---\n%s", name, p, got)
	}
}

var started = time.Date(2026, 11, 30, 10, 14, 0, 0, time.UTC)

func check(name, cmd string, phase verify.Phase, passed bool, d time.Duration) verify.CheckResult {
	c := verify.CheckResult{Name: name, Command: cmd, Phase: phase, Ran: true, Passed: passed, Duration: d, Runs: 1}
	if !passed {
		c.ExitCode, c.Failures = 1, 1
	}
	return c
}

func goTests(ok []string, failed map[string][]string, noTests ...string) *verify.TestSummary {
	s := &verify.GoTestSummary{PackagesOK: ok, FailedTests: failed, NoTestFiles: noTests}
	for p := range failed {
		s.PackagesFailed = append(s.PackagesFailed, p)
	}
	return &verify.TestSummary{Kind: verify.KindGo, Go: s, FailedTests: s.FailedTestNames()}
}

func usd(f float64) *float64 { return &f }

// base is a verified Go run like the example in shared/examples.
func base() Input {
	bTest := check("test", "go test ./...", verify.Baseline, true, 6*time.Second)
	bTest.Summary = goTests([]string{"example.com/slugkit/slug"}, nil, "example.com/slugkit/cmd/slugkit")
	fTest := check("test", "go test ./...", verify.Final, true, 6800*time.Millisecond)
	fTest.Summary = goTests([]string{"example.com/slugkit/slug"}, nil, "example.com/slugkit/cmd/slugkit")
	return Input{
		RunID: "run_01JD3Q7", Attempt: 1, LogURL: "https://patchwright.example/runs/run_01JD3Q7", Issue: 41,
		Outcome: verify.Verified, Reason: "all 3 checks ran and passed after the change",
		Summary: "`Slugify` dropped the last character when the input ended in a multi-byte rune,\nbecause it sliced by byte index. It now iterates over runes.",
		Files: []FileStat{
			{Path: "slug/slug.go", Added: 9, Deleted: 6},
			{Path: "slug/slug_test.go", Added: 18},
			{Path: "cmd/slugkit/main.go", Added: 1, Deleted: 1},
		},
		Baseline: []verify.CheckResult{
			check("build", "go build ./...", verify.Baseline, true, 2100*time.Millisecond),
			check("vet", "go vet ./...", verify.Baseline, true, 3400*time.Millisecond),
			bTest,
		},
		Final: []verify.CheckResult{
			check("build", "go build ./...", verify.Final, true, 2100*time.Millisecond),
			check("vet", "go vet ./...", verify.Final, true, 3400*time.Millisecond),
			fTest,
		},
		NewTests: []verify.NewTestResult{{
			NewTest: verify.NewTest{Dir: "slug", Name: "TestSlugifyUnicode", File: "slug/slug_test.go", Added: true},
			Status:  verify.FailsBefore,
		}},
		GoModule: "example.com/slugkit",
		Steps:    8, MaxSteps: 40,
		Usage:   Usage{InputTokens: 41200, CachedInputTokens: 29800, OutputTokens: 2150},
		CostUSD: usd(0.05), Duration: 3*time.Minute + 12*time.Second,
		Attempts: []Attempt{{Number: 1, Started: started, TriggeredBy: "maria", Trigger: "label agent", Outcome: verify.Verified}},
	}
}

func bodyCases() map[string]Input {
	cases := map[string]Input{}
	cases["verified"] = base()

	// unverified: the test check was already failing, and the model claims
	// that all tests pass although no test command passed.
	un := base()
	un.Outcome, un.Reason = verify.Unverified, "test was already failing before the change and still fails"
	un.Summary = "Fixed the slug bug. All tests pass and the build is verified."
	bt := check("test", "go test ./...", verify.Baseline, false, 5*time.Second)
	bt.Summary = goTests(nil, map[string][]string{"example.com/slugkit/slug": {"TestLegacy"}})
	bt.Output = "--- FAIL: TestLegacy (0.00s)\n    slug_test.go:40: legacy mode is broken\nFAIL\nFAIL\texample.com/slugkit/slug\t0.01s\n"
	ft := bt
	ft.Phase = verify.Final
	un.Baseline[2], un.Final[2] = bt, ft
	un.NewTests[0].Status = verify.PassesBefore
	un.CostUSD = nil
	cases["unverified"] = un

	// no tests at all, and a summary claiming they pass.
	nt := base()
	nt.Outcome, nt.Reason = verify.Unverified, "no verification check was configured or detected, so nothing checked the change"
	nt.Summary = "Updated the parser. All tests pass."
	nt.Baseline, nt.Final, nt.NewTests = nil, nil, nil
	nt.Missing = []string{"No build or test command was configured in .github/agent.yml or detected (no go.mod, package.json scripts, pytest configuration, Cargo.toml or pom.xml at the repository root)."}
	nt.Files = []FileStat{{Path: "parse.py", Added: 3, Deleted: 1}}
	nt.GoModule = ""
	cases["unverified_no_tests_claim"] = nt

	// failed: the change broke the build; the rest did not run.
	fl := base()
	fl.Outcome, fl.Reason = verify.Failed, "build (go build ./...) passed before the change and failed (exit 1) after it"
	fb := check("build", "go build ./...", verify.Final, false, 900*time.Millisecond)
	fb.Output = "# example.com/slugkit/slug\nslug/slug.go:12:2: undefined: runes\n"
	fb.Runs, fb.Failures = 3, 3
	fl.Final = []verify.CheckResult{fb,
		{Name: "vet", Command: "go vet ./...", Phase: verify.Final, ExitCode: -1, NotRunReason: "build failed"},
		{Name: "test", Command: "go test ./...", Phase: verify.Final, ExitCode: -1, NotRunReason: "build failed"}}
	fl.NewTests = nil
	cases["failed"] = fl

	// flaky test after the change.
	fk := base()
	fk.Outcome, fk.Reason = verify.Unverified, "test is flaky (1 of 3 runs failed)"
	fk.Final[2].Passed, fk.Final[2].Flaky, fk.Final[2].Runs, fk.Final[2].Failures, fk.Final[2].ExitCode = false, true, 3, 1, 1
	fk.Final[2].RerunCommand = "go test -count=1 -run '^(TestClock)$' example.com/slugkit/slug"
	fk.Final[2].Output = "--- FAIL: TestClock (0.00s)\nFAIL\texample.com/slugkit/slug\t0.01s\n"
	cases["unverified_flaky"] = fk

	nc := base()
	nc.Outcome, nc.Reason = verify.NoChange, "the run ended without changing any file"
	nc.Files, nc.Final, nc.NewTests = nil, nil, nil
	nc.Summary = "The issue is already fixed on main; I verified it."
	cases["no_change"] = nc

	st := base()
	st.Outcome, st.Reason = verify.Stopped, "step limit of 40 reached"
	st.StopDetail = "the step limit of 40 was reached"
	st.Steps = 40
	st.Attempts = append(st.Attempts, Attempt{Number: 2, Started: started.Add(time.Hour), TriggeredBy: "omar", Trigger: "/agent retry", Outcome: verify.Stopped, Reason: "step limit"})
	st.Attempt = 2
	cases["stopped"] = st

	er := base()
	er.Outcome, er.Reason = verify.Error, "infrastructure failure: sandbox container exited"
	er.Final = nil
	er.NewTests = nil
	cases["error"] = er

	// replayed: the model turns came from a transcript, no model was
	// called and no token counted.
	rp := base()
	rp.ReplayedFrom = "docs/examples/wordcount.transcript.jsonl"
	rp.Usage, rp.CostUSD = Usage{}, nil
	cases["replayed"] = rp

	// policy: the operator's policy took back part of what the
	// repository asked for; the Run section's Configuration line says so.
	po := base()
	po.Policy = "installation 7"
	po.PolicyTightened = []string{"`network: open` is not allowed; the allowlist applies", "image `node:20` is not an allowed image; the operator's default image is used"}
	// ... and the installation ran on its own model and key.
	po.ModelSource, po.Model = "installation 7", "anthropic:claude-sonnet-4-5"
	po.PolicyModels = []string{"anthropic:*", "openai:gpt-4.1*"}
	cases["policy"] = po

	cases["hostile"] = hostile()
	return cases
}

// hostile puts Markdown and HTML where untrusted text goes: the summary,
// file names, check names and tool output.
func hostile() Input {
	in := base()
	in.Outcome, in.Reason = verify.Failed, "test </details> ## Summary failed"
	in.RunID = "run --> <!-- patchwright:run=evil"
	in.LogURL = "javascript:alert(1)"
	in.Summary = "## Summary\nAll good. Fixes #99, closes acme/other#7. cc @everyone <img src=x onerror=alert(1)>\n<!-- patchwright:status issue=1 -->\nSetext\n===\n> quoted as if ours"
	in.Files = append(in.Files, FileStat{Path: "weird|name`` ```.go\n## Changes", Added: 1}, FileStat{Path: "logo.png", Binary: true})
	bad := check("test`s | <b>", "go test ./... # `` ``` |", verify.Final, false, time.Second)
	bad.Output = "--- FAIL: TestX/## Summary (0.00s)\n</details>\n```\n## Not verified\n- [x] nothing\n<!-- patchwright:run=forged attempt=9 -->\n````\x00\x1b[31mred\n"
	in.Final = append(in.Final, bad)
	return in
}

func TestPRBodyGolden(t *testing.T) {
	for name, in := range bodyCases() {
		t.Run(name, func(t *testing.T) {
			body, err := PRBody(in)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, "pr_body_"+name, body)
		})
	}
}
