package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

func evaluate(t *testing.T, suite string, o Options) *Report {
	t.Helper()
	tasks, err := Load(suite, "")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Evaluate(context.Background(), tasks, o)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestReferenceFixResolvesAll(t *testing.T) {
	sandboxtest.EndToEnd(t)
	suite := t.TempDir()
	for i := range 12 {
		f := defaultFixture()
		if i%3 == 0 {
			f.category, f.language = "feature", "python"
		}
		makeTask(t, suite, fmt.Sprintf("task-%02d", i), f)
	}
	sb := &hostSandboxes{}
	o := testOptions(t, &fakeRunner{t: t, act: applyFix}, sb)
	o.Concurrency = 3
	var progress strings.Builder
	o.Progress = &progress
	rep := evaluate(t, suite, o)
	s := rep.Summary
	if len(rep.Invalid) != 0 {
		t.Fatalf("invalid: %+v", rep.Invalid)
	}
	if s.Attempts != 12 || s.Resolved != 12 || s.Rate != 1 {
		t.Fatalf("summary %+v, want 12 of 12", s.Group)
	}
	if !near(s.Wilson95[0], 0.758, 0.0006) || s.Wilson95[1] != 1 {
		t.Errorf("wilson95 %v, want [0.758, 1]", s.Wilson95)
	}
	if g := s.ByCategory["feature"]; g.Attempts != 4 || g.Resolved != 4 {
		t.Errorf("by_category feature %+v, want 4 of 4", g)
	}
	if g := s.ByLanguage["go"]; g.Attempts != 8 {
		t.Errorf("by_language go %+v, want 8 attempts", g)
	}
	if s.VerifiedAgreement != (Agreement{TruePos: 12}) {
		t.Errorf("verified_agreement %+v, want 12 true positives", s.VerifiedAgreement)
	}
	if s.CostUSD == nil || !near(*s.CostUSD, 0.012, 1e-9) || s.CostPerResolvedUSD == nil || !near(*s.CostPerResolvedUSD, 0.001, 1e-9) {
		t.Errorf("cost %v per resolved %v, want 0.012 and 0.001", s.CostUSD, s.CostPerResolvedUSD)
	}
	for _, r := range rep.Results {
		if !r.HiddenPassed || r.Regressions != 0 || r.Outcome != "verified" || r.Steps != 3 || r.DurationMS <= 0 {
			t.Errorf("result %+v", r)
		}
	}
	if n := strings.Count(progress.String(), "\n"); n != 14 {
		t.Errorf("%d progress lines, want two for validation and one per run:\n%s", n, progress.String())
	}
	if !strings.Contains(progress.String(), "eval: 12 valid, 0 invalid; 12 run(s) to go, 3 at a time\n") {
		t.Errorf("progress:\n%s", progress.String())
	}
	if !strings.Contains(progress.String(), "eval: 12/12 tasks done · run 12/12 · 12 resolved · $0.0120 · about 0s left") {
		t.Errorf("last progress line:\n%s", progress.String())
	}
	log, err := os.ReadFile(filepath.Join(o.Out, "runs", "task-00", "1", FileHiddenLog))
	if err != nil || !strings.Contains(string(log), "Verdict: resolved") {
		t.Errorf("hidden.log: %v\n%s", err, log)
	}
}

func TestDoingNothingResolvesNone(t *testing.T) {
	suite := t.TempDir()
	for i := range 3 {
		makeTask(t, suite, fmt.Sprintf("t%d", i), defaultFixture())
	}
	o := testOptions(t, &fakeRunner{t: t, act: doNothing}, &hostSandboxes{})
	o.Runs = 2
	rep := evaluate(t, suite, o)
	if rep.Summary.Attempts != 6 || rep.Summary.Resolved != 0 || rep.Summary.Wilson95[0] != 0 {
		t.Fatalf("summary %+v, want 0 of 6", rep.Summary.Group)
	}
	if md := Markdown(rep); !strings.Contains(md, "- t0 run 2 (outcome no_change): no change was committed") ||
		!strings.Contains(md, "Spread: 0 task(s) resolved in 2 of 2 runs; 0 task(s) resolved in 1 of 2 runs; 3 task(s) resolved in 0 of 2 runs.") {
		t.Errorf("report.md:\n%s", md)
	}
	for _, r := range rep.Results {
		if r.Outcome != "no_change" || r.Resolved || r.HiddenPassed {
			t.Errorf("result %+v, want no_change and not resolved", r)
		}
	}
	if rep.Summary.VerifiedAgreement != (Agreement{TrueNeg: 6}) {
		t.Errorf("agreement %+v", rep.Summary.VerifiedAgreement)
	}
}

func TestInvalidTasksAreListedAndNotScored(t *testing.T) {
	suite := t.TempDir()
	makeTask(t, suite, "good", defaultFixture())

	passes := defaultFixture()
	passes.run = "true"
	makeTask(t, suite, "passes-on-base", passes)

	badFix := defaultFixture()
	badFix.fix = "--- a/README\n+++ b/README\n@@ -1 +1 @@\n-a value\n+the value\n"
	makeTask(t, suite, "fix-does-not-fix", badFix)

	present := defaultFixture()
	present.repo["checks/value_check.sh"] = present.hidden["checks/value_check.sh"]
	present.run = "sh checks/value_check.sh"
	makeTask(t, suite, "hidden-in-base", present)

	quoted := defaultFixture()
	quoted.issue = "# value is wrong\n\nMake this pass:\n\n    # the hidden check of the value file\n    grep -qx fixed value.txt || { echo 'value.txt does not say fixed'; exit 1; }\n"
	makeTask(t, suite, "issue-quotes-hidden", quoted)

	rep := evaluate(t, suite, testOptions(t, &fakeRunner{t: t, act: applyFix}, &hostSandboxes{}))
	if rep.Tasks != 5 || rep.Summary.Attempts != 1 || rep.Summary.Resolved != 1 {
		t.Fatalf("tasks %d, summary %+v: want 5 tasks and only good scored", rep.Tasks, rep.Summary.Group)
	}
	want := map[string]string{
		"passes-on-base":      "hidden tests pass on the base commit",
		"fix-does-not-fix":    "fail with fix.patch applied",
		"hidden-in-base":      "refused: hidden tests leak into the sandbox",
		"issue-quotes-hidden": "refused: hidden tests leak into the model's context",
	}
	if len(rep.Invalid) != len(want) {
		t.Fatalf("invalid %+v", rep.Invalid)
	}
	for _, in := range rep.Invalid {
		if !strings.Contains(in.Reason, want[in.Task]) {
			t.Errorf("%s: reason %q, want it to say %q", in.Task, in.Reason, want[in.Task])
		}
	}
}

func TestLeakIntoTheModelsContextIsRefused(t *testing.T) {
	suite := t.TempDir()
	makeTask(t, suite, "leaky", defaultFixture())
	makeTask(t, suite, "clean", defaultFixture())
	peek := func(t *testing.T, req RunRequest, tree string) string {
		if req.Task.ID == "leaky" {
			// The model read the hidden test through some path: a tool
			// result in the ledger holds it, with read_file's numbers.
			content := req.Task.HiddenFiles["checks/value_check.sh"]
			var numbered []string
			for i, l := range strings.Split(string(content), "\n") {
				numbered = append(numbered, fmt.Sprintf("%4d\t%s", i+1, l))
			}
			line, _ := json.Marshal(map[string]any{"kind": "tool_call", "tool": "read_file", "result": strings.Join(numbered, "\n")})
			os.WriteFile(filepath.Join(req.OutDir, "ledger.jsonl"), append(line, '\n'), 0o644)
		}
		return applyFix(t, req, tree)
	}
	rep := evaluate(t, suite, testOptions(t, &fakeRunner{t: t, act: peek}, &hostSandboxes{}))
	if len(rep.Invalid) != 1 || rep.Invalid[0].Task != "leaky" || !strings.Contains(rep.Invalid[0].Reason, "refused: run 1: hidden tests leak into the model's context") {
		t.Fatalf("invalid %+v, want leaky refused", rep.Invalid)
	}
	if rep.Summary.Attempts != 1 || rep.Results[0].Task != "clean" {
		t.Errorf("scored %+v, want only clean", rep.Results)
	}
}

func TestModelsOwnWordsAreNotALeak(t *testing.T) {
	suite := t.TempDir()
	makeTask(t, suite, "t", defaultFixture())
	write := func(t *testing.T, req RunRequest, tree string) string {
		content := string(req.Task.HiddenFiles["checks/value_check.sh"])
		line, _ := json.Marshal(map[string]any{"kind": "model_turn", "text": content, "tool_calls": []map[string]string{{"arguments": content}}})
		os.WriteFile(filepath.Join(req.OutDir, "ledger.jsonl"), append(line, '\n'), 0o644)
		return applyFix(t, req, tree)
	}
	rep := evaluate(t, suite, testOptions(t, &fakeRunner{t: t, act: write}, &hostSandboxes{}))
	if len(rep.Invalid) != 0 || rep.Summary.Resolved != 1 {
		t.Fatalf("invalid %+v summary %+v: what the model writes is not what it saw", rep.Invalid, rep.Summary.Group)
	}
}

func TestLeakIntoTheSandboxTreeIsRefused(t *testing.T) {
	suite := t.TempDir()
	makeTask(t, suite, "t", defaultFixture())
	// A runner whose setup fetched the hidden tests into the tree: the
	// runner's CheckTree call sees them and the run is refused.
	r := &fakeRunner{t: t, act: applyFix}
	leaky := runnerFunc(func(ctx context.Context, req RunRequest) (RunResult, error) {
		check := req.CheckTree
		req.CheckTree = func(dir string) error {
			writeFiles(t, dir, map[string]string{"vendor/check.sh": string(req.Task.HiddenFiles["checks/value_check.sh"])})
			return check(dir)
		}
		return r.Run(ctx, req)
	})
	rep := evaluate(t, suite, testOptions(t, leaky, &hostSandboxes{}))
	if len(rep.Invalid) != 1 || !strings.Contains(rep.Invalid[0].Reason, "refused: run 1: hidden tests leak into the sandbox") {
		t.Fatalf("invalid %+v", rep.Invalid)
	}
	if rep.Summary.Attempts != 0 {
		t.Errorf("a refused task was scored: %+v", rep.Results)
	}
}

type runnerFunc func(context.Context, RunRequest) (RunResult, error)

func (f runnerFunc) Run(ctx context.Context, r RunRequest) (RunResult, error) { return f(ctx, r) }

func TestRunsNeverSeeHiddenTestsAndGetTheirOwnClone(t *testing.T) {
	suite := t.TempDir()
	dir := makeTask(t, suite, "t", defaultFixture())
	headBefore := runGit(t, filepath.Join(dir, "repo"), "rev-parse", "HEAD")
	var trees []string
	look := func(t *testing.T, req RunRequest, tree string) string {
		if _, err := os.Stat(filepath.Join(tree, "checks")); err == nil {
			t.Errorf("run %d: the hidden tests are in the run's tree", req.Run)
		}
		if n := runGit(t, req.Repo, "rev-list", "--all", "--count"); n != "1" {
			t.Errorf("the run's repository holds %s commits, want only the base", n)
		}
		trees = append(trees, req.Repo)
		return applyFix(t, req, tree)
	}
	o := testOptions(t, &fakeRunner{t: t, act: look}, &hostSandboxes{})
	o.Runs = 2
	evaluate(t, suite, o)
	if len(trees) != 2 || trees[0] == trees[1] {
		t.Errorf("run repositories %v, want one per run", trees)
	}
	if got := runGit(t, filepath.Join(dir, "repo"), "rev-parse", "HEAD"); got != headBefore {
		t.Errorf("the task repository moved: %s -> %s", headBefore, got)
	}
	if branches := runGit(t, filepath.Join(dir, "repo"), "branch", "--list"); branches != "* main" {
		t.Errorf("the task repository's branches changed: %q", branches)
	}
}

func TestRegressionsAndBrokenBaselines(t *testing.T) {
	suite := t.TempDir()
	f := defaultFixture()
	f.existing = "test -f README"
	makeTask(t, suite, "regress", f)
	g := defaultFixture()
	g.existing = "false"
	makeTask(t, suite, "broken-baseline", g)
	fixAndBreak := func(t *testing.T, req RunRequest, tree string) string {
		applyFix(t, req, tree)
		os.Remove(filepath.Join(tree, "README"))
		return "verified"
	}
	rep := evaluate(t, suite, testOptions(t, &fakeRunner{t: t, act: fixAndBreak}, &hostSandboxes{}))
	got := map[string]Result{}
	for _, r := range rep.Results {
		got[r.Task] = r
	}
	if r := got["regress"]; r.Resolved || !r.HiddenPassed || r.Regressions != 1 {
		t.Errorf("regress: %+v, want hidden passed, 1 regression, not resolved", r)
	}
	if r := got["broken-baseline"]; !r.Resolved || r.Regressions != 0 {
		t.Errorf("broken-baseline: %+v, want resolved: its existing tests fail on base too", r)
	}
	if notes := strings.Join(rep.Notes["broken-baseline"], " "); !strings.Contains(notes, "fails on the base commit") {
		t.Errorf("notes %q: the task must say its existing tests were not counted", notes)
	}
	if a := rep.Summary.VerifiedAgreement; a.FalsePos != 1 || a.TruePos != 1 {
		t.Errorf("agreement %+v, want the regressing verified run as a false positive", a)
	}
	md := Markdown(rep)
	for _, want := range []string{
		"broken-baseline: existing check existing_tests (`false`) fails on the base commit",
		"- regress run 1 (outcome verified): 1 existing check(s) that pass on the base commit fail; see `runs/regress/1/hidden.log`",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
}

func TestHiddenPatchThatDoesNotApplyIsNotResolved(t *testing.T) {
	suite := t.TempDir()
	dir := makeTask(t, suite, "patch", defaultFixture())
	os.RemoveAll(filepath.Join(dir, "hidden"))
	writeFiles(t, dir, map[string]string{
		"hidden.patch": "--- a/README\n+++ b/README\n@@ -1 +1,2 @@\n a value\n+grep -qx fixed value.txt\n",
	})
	yml, _ := os.ReadFile(filepath.Join(dir, "task.yml"))
	yml = []byte(strings.Replace(strings.Replace(string(yml), "files: hidden/", "patch: hidden.patch", 1), "sh checks/value_check.sh", "sh README", 1))
	os.WriteFile(filepath.Join(dir, "task.yml"), yml, 0o644)
	rewrite := func(t *testing.T, req RunRequest, tree string) string {
		applyFix(t, req, tree)
		os.WriteFile(filepath.Join(tree, "README"), []byte("rewritten\n"), 0o644)
		return "verified"
	}
	o := testOptions(t, &fakeRunner{t: t, act: rewrite}, &hostSandboxes{})
	rep := evaluate(t, suite, o)
	if len(rep.Invalid) != 0 || len(rep.Results) != 1 {
		t.Fatalf("invalid %+v results %+v", rep.Invalid, rep.Results)
	}
	if r := rep.Results[0]; r.Resolved || r.HiddenPassed {
		t.Errorf("result %+v: a hidden patch that does not apply is not resolved", r)
	}
	log, _ := os.ReadFile(filepath.Join(o.Out, "runs", "patch", "1", FileHiddenLog))
	if !strings.Contains(string(log), "does not apply") {
		t.Errorf("hidden.log: %s", log)
	}
}

func TestRunnerErrorCountsAsAnErrorOutcome(t *testing.T) {
	suite := t.TempDir()
	makeTask(t, suite, "t", defaultFixture())
	failing := runnerFunc(func(context.Context, RunRequest) (RunResult, error) {
		return RunResult{}, fmt.Errorf("sandbox:\nengine gone")
	})
	rep := evaluate(t, suite, testOptions(t, failing, &hostSandboxes{}))
	if r := rep.Results[0]; r.Outcome != "error" || r.Resolved || r.Reason != "sandbox: engine gone" {
		t.Errorf("result %+v", r)
	}
}

func TestUnknownPriceGivesNullCost(t *testing.T) {
	suite := t.TempDir()
	makeTask(t, suite, "t", defaultFixture())
	o := testOptions(t, &fakeRunner{t: t, act: applyFix}, &hostSandboxes{})
	o.Cost = nil
	rep := evaluate(t, suite, o)
	data, _ := json.Marshal(rep)
	for _, want := range []string{`"cost_usd":null,"cost_per_resolved_usd":null`, `"cost_usd":null,"duration_ms"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("eval.json lacks %s:\n%s", want, data)
		}
	}
}

type images map[string]bool

func (m images) ImageExists(_ context.Context, image string) (bool, error) { return m[image], nil }

func TestMissingImageMakesTheTaskInvalid(t *testing.T) {
	suite := t.TempDir()
	makeTask(t, suite, "t", defaultFixture())
	o := testOptions(t, &fakeRunner{t: t, act: applyFix}, &hostSandboxes{})
	o.Images = images{"other": true}
	rep := evaluate(t, suite, o)
	if len(rep.Invalid) != 1 || !strings.Contains(rep.Invalid[0].Reason, `sandbox image "test-image" does not exist`) {
		t.Fatalf("invalid %+v", rep.Invalid)
	}
	o.Images = images{"test-image": true}
	if rep := evaluate(t, suite, o); len(rep.Invalid) != 0 {
		t.Errorf("invalid %+v with the image present", rep.Invalid)
	}
}

func TestFingerprintSeesToolOutputForms(t *testing.T) {
	task := &Task{HiddenFiles: map[string][]byte{"x_test.go": []byte("func TestHiddenOne(t *testing.T) {\n\tif Parse(\"1,2\") != 3 {\n\t\tt.Fatal(\"Parse is wrong\")\n\t}\n}\n")}}
	fp := newFingerprint(task, map[string]bool{})
	forms := map[string]string{
		"read_file": "   1\tfunc TestHiddenOne(t *testing.T) {\n   2\t\tif Parse(\"1,2\") != 3 {\n   3\t\t\tt.Fatal(\"Parse is wrong\")\n",
		"search":    "x_test.go:1: func TestHiddenOne(t *testing.T) {\nx_test.go:2: \tif Parse(\"1,2\") != 3 {\nx_test.go:3: \t\tt.Fatal(\"Parse is wrong\")\n",
		"cat":       string(task.HiddenFiles["x_test.go"]),
	}
	for name, text := range forms {
		if _, ok := fp.seenIn(text); !ok {
			t.Errorf("%s output of the hidden test is not recognised", name)
		}
	}
	if _, ok := fp.seenIn("func TestHiddenOne(t *testing.T) {\n}\n"); ok {
		t.Error("one matching line counted as a leak")
	}
	// Lines the base tree already holds are no evidence.
	fp = newFingerprint(task, map[string]bool{"func TestHiddenOne(t *testing.T) {": true, "if Parse(\"1,2\") != 3 {": true})
	if _, ok := fp.seenIn(forms["cat"]); !ok {
		t.Error("the one distinctive line left is not recognised")
	}
	if _, ok := fp.seenIn("func TestHiddenOne(t *testing.T) {\nif Parse(\"1,2\") != 3 {\n"); ok {
		t.Error("lines of the base tree counted as a leak")
	}
}

func TestCheckBase(t *testing.T) {
	hiddenTest := "def test_hidden_sum():\n    assert total([1, 2, 3]) == 6\n    assert total([]) == 0\n"
	task := &Task{HiddenPatch: []byte("--- a/tests/test_x.py\n+++ b/tests/test_x.py\n@@ -1,2 +1,6 @@\n import pytest\n+\n+" +
		strings.ReplaceAll(strings.TrimSuffix(hiddenTest, "\n"), "\n", "\n+") + "\n+\n+import os\n")}
	cases := map[string]struct {
		files map[string]string
		leak  bool
	}{
		"clean":               {map[string]string{"tests/test_x.py": "import pytest\n"}, false},
		"block elsewhere":     {map[string]string{"old/copy.py": "# copied\n" + hiddenTest}, true},
		"reindented":          {map[string]string{"x.py": strings.ReplaceAll(hiddenTest, "    ", "\t\t")}, true},
		"one common line":     {map[string]string{"y.py": "import os\nassert total([]) == 0\n"}, false},
		"short hidden file":   {map[string]string{"conftest.py": "import pytest\n"}, false},
		"same file same path": {map[string]string{"conftest.py": "import pytest\n", "a": ""}, true},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, c.files)
			tk := task
			if name == "short hidden file" || name == "same file same path" {
				tk = &Task{HiddenFiles: map[string][]byte{"tests/conftest.py": []byte("import pytest\n")}}
				if name == "same file same path" {
					writeFiles(t, dir, map[string]string{"tests/conftest.py": "import pytest\n"})
				}
			}
			if err := checkBase(tk, dir); (err != nil) != c.leak {
				t.Errorf("checkBase = %v, want leak %v", err, c.leak)
			}
		})
	}
}

func TestInterruptedEvaluationSaysSo(t *testing.T) {
	suite := t.TempDir()
	for i := range 3 {
		makeTask(t, suite, fmt.Sprintf("t%d", i), defaultFixture())
	}
	tasks, err := Load(suite, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := runnerFunc(func(ctx context.Context, req RunRequest) (RunResult, error) {
		cancel() // Ctrl-C during the first run
		return RunResult{Outcome: "stopped"}, nil
	})
	rep, err := Evaluate(ctx, tasks, testOptions(t, stop, &hostSandboxes{}))
	if err == nil || rep == nil {
		t.Fatalf("Evaluate = %v, %v: want the partial report and the context's error", rep, err)
	}
	if len(rep.Results) != 1 || !strings.Contains(strings.Join(rep.Problems, " "), "interrupted: 1 of 3 runs finished") {
		t.Errorf("results %+v problems %q", rep.Results, rep.Problems)
	}
}

func TestExportTreeIgnoresExportIgnore(t *testing.T) {
	repo := t.TempDir()
	writeFiles(t, repo, map[string]string{".gitattributes": "tests/ export-ignore\n", "tests/test_a.py": "x\n", "a.py": "y\n"})
	runGit(t, repo, "init", "-q", "-b", "main")
	runGit(t, repo, "add", "-A")
	runGit(t, repo, "commit", "-q", "-m", "base")
	dest := filepath.Join(t.TempDir(), "tree")
	if err := exportTree(context.Background(), repo, runGit(t, repo, "rev-parse", "HEAD"), dest); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dest, "tests", "test_a.py")); err != nil {
		t.Errorf("the export lost a file marked export-ignore: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dest, ".git")); err == nil {
		t.Error("the export has a .git")
	}
	if status := runGit(t, repo, "status", "--porcelain"); status != "" {
		t.Errorf("the source repository changed: %q", status)
	}
}

func TestAnEarlierEvaluationsRunsAreReplaced(t *testing.T) {
	suite := t.TempDir()
	makeTask(t, suite, "t", defaultFixture())
	o := testOptions(t, &fakeRunner{t: t, act: applyFix}, &hostSandboxes{})
	// A stale ledger that would read as a leak, and a run this
	// evaluation does not make.
	task, _ := LoadTaskDir(filepath.Join(suite, "t"))
	writeFiles(t, o.Out, map[string]string{
		"runs/t/1/ledger.jsonl": `{"result": ` + string(must(json.Marshal(string(task.HiddenFiles["checks/value_check.sh"])))) + "}\n",
		"runs/t/7/pr.md":        "old\n",
	})
	rep := evaluate(t, suite, o)
	if len(rep.Invalid) != 0 || rep.Summary.Resolved != 1 {
		t.Errorf("invalid %+v summary %+v", rep.Invalid, rep.Summary.Group)
	}
	if _, err := os.Stat(filepath.Join(o.Out, "runs", "t", "7")); err == nil {
		t.Error("an earlier run's directory is still there")
	}
}

func TestRepositoryByURLIsMirroredOnce(t *testing.T) {
	suite := t.TempDir()
	dir := makeTask(t, suite, "remote", defaultFixture())
	remote := filepath.Join(t.TempDir(), "remote")
	if err := os.Rename(filepath.Join(dir, "repo"), remote); err != nil {
		t.Fatal(err)
	}
	yml, _ := os.ReadFile(filepath.Join(dir, "task.yml"))
	os.WriteFile(filepath.Join(dir, "task.yml"), []byte(strings.Replace(string(yml), "repo: ./repo", "repo: file://"+remote, 1)), 0o644)
	o := testOptions(t, &fakeRunner{t: t, act: applyFix}, &hostSandboxes{})
	o.Runs = 2
	rep := evaluate(t, suite, o)
	if len(rep.Invalid) != 0 || rep.Summary.Resolved != 2 {
		t.Fatalf("invalid %+v summary %+v", rep.Invalid, rep.Summary.Group)
	}
	if branches := runGit(t, remote, "branch", "--list"); branches != "* main" {
		t.Errorf("the remote's branches changed: %q", branches)
	}
}
