package findings

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func checkCases() map[string]analysisCase {
	return map[string]analysisCase{
		"checks/zero tests ran": {
			checks: []Check{{Name: "build", Baseline: "go build ./...", Final: "go build ./..."}, {Name: "test", Baseline: "go test ./...", Final: "go test ./...", ZeroTests: true}},
			want:   []string{"no_tests_ran :0"},
		},
		"checks/tests ran": {
			checks: []Check{{Name: "test", Baseline: "python -m pytest", Final: "python -m pytest"}},
		},
		"checks/command narrowed": {
			checks: []Check{{Name: "test", Baseline: "go test ./...", Final: "go test -run TestHello ./..."}},
			want:   []string{"test_skipped :0"},
		},
		"checks/check dropped at the end": {
			checks: []Check{{Name: "test (npm)", Baseline: "npm test"}},
			want:   []string{"test_skipped :0"},
		},
		"checks/check added at the end": {
			checks: []Check{{Name: "lint", Final: "npm run lint"}},
		},
	}
}

func TestChecks(t *testing.T) { golden(t, "checks", runCases(t, checkCases())) }

func scopeCases() map[string]analysisCase {
	big := strings.Repeat("line\n", 40)
	var many []File
	for i := range 4 {
		many = append(many, add(fmt.Sprintf("pkg/f%d.go", i), "package pkg\n"))
	}
	return map[string]analysisCase{
		"scope/too many files": {
			files:  many,
			limits: Limits{MaxChangedFiles: 3},
			want:   []string{"scope :0"},
		},
		"scope/at the file limit": {
			files:  many[:3],
			limits: Limits{MaxChangedFiles: 3},
		},
		"scope/too many lines": {
			files:  []File{mod("a.txt", big, strings.ReplaceAll(big, "line", "row"))},
			limits: Limits{MaxChangedLines: 79},
			want:   []string{"scope :0"},
		},
		"scope/at the line limit": {
			files:  []File{mod("a.txt", big, strings.ReplaceAll(big, "line", "row"))},
			limits: Limits{MaxChangedLines: 80},
		},
		"scope/binary files count no lines": {
			files:  []File{mod("logo.png", "\x89PNG\x00"+big, "\x89PNG\x00"+big+big)},
			limits: Limits{MaxChangedLines: 1},
		},
		"scope/read paths are cleaned": {
			files: []File{mod("internal/billing/charge.go", "package billing\n", "package billing\n\nvar Rate = 2\n")},
			read:  []string{"./internal/billing/../billing/rate.go"},
		},
		"scope/no limits": {
			files: many,
		},
		"scope/file not read for the findings": {
			files:  []File{{Path: "internal/billing/huge.go", Base: []byte("package billing\n"), Unread: true}, mod("a.txt", big, big+"x\n")},
			read:   []string{"a.txt"},
			limits: Limits{MaxChangedFiles: 1, MaxChangedLines: 1},
			want:   []string{"scope :0", "scope internal/billing/huge.go:0"},
		},
		"scope/unrelated file listed": {
			files: []File{
				mod("internal/greet/greet.go", goCode1, replace(goCode1, "hello", "hi")),
				mod("internal/billing/charge.go", "package billing\n", "package billing\n\nvar Rate = 2\n"),
			},
			read: []string{"internal/greet/greet.go"},
			want: []string{"scope internal/billing/charge.go:2"},
		},
		"scope/related by folder, subject, issue and dependency": {
			title: "Greeting is wrong in cmd/hello/main.go",
			files: []File{
				add("internal/greet/polite.go", "package greet\n"),
				add("tests/test_greet.py", "def test_x():\n    pass\n"),
				mod("cmd/hello/main.go", "package main\n", "package main\n\nfunc main() {}\n"),
				mod("go.sum", "", "example.com/x v1.0.0 h1:abc=\n"),
			},
			read: []string{"internal/greet/greet.go", "app/greet.py"},
			want: []string{"new_dependency go.sum:1"},
		},
		"scope/issue names the folder": {
			title: "The billing module rounds wrongly",
			files: []File{mod("internal/billing/charge.go", "package billing\n", "package billing\n\nvar Rate = 2\n")},
			read:  []string{"README.md"},
		},
		"scope/model read nothing": {
			files: []File{mod("internal/billing/charge.go", "package billing\n", "package billing\n\nvar Rate = 2\n")},
			read:  []string{},
			want:  []string{"scope internal/billing/charge.go:2"},
		},
		"scope/deleted unrelated file": {
			files: []File{del("old/unused.go", "package old\n")},
			read:  []string{},
			want:  []string{"scope old/unused.go:0"},
		},
	}
}

func TestScope(t *testing.T) { golden(t, "scope", runCases(t, scopeCases())) }

func TestUnrelatedCap(t *testing.T) {
	var files []File
	for i := range maxPerFile + 3 {
		files = append(files, add(fmt.Sprintf("d%02d/x.go", i), "package x\n"))
	}
	fs := Analyze(Input{Files: files, Read: []string{}})
	if len(fs) != maxPerFile+1 {
		t.Fatalf("%d findings, want %d listed and one summary: %v", len(fs), maxPerFile, where(fs))
	}
	if fs[0].Path != "" || !strings.HasPrefix(fs[0].Detail, "3 more changed files") {
		t.Errorf("summary = %+v", fs[0])
	}
}

func TestBlocks(t *testing.T) {
	for kind, want := range map[string]bool{
		TestsRemoved: true, TestSkipped: true, AssertionChanged: true, OnlyTestsChanged: true, NoTestsRan: true,
		NewDependency: false, Scope: false, "protected_path": false, "secret": false, "large_file": false, "": false,
	} {
		if got := Blocks(kind); got != want {
			t.Errorf("Blocks(%q) = %v, want %v", kind, got, want)
		}
	}
	fs := []Finding{{Kind: Scope}, {Kind: TestsRemoved, Path: "a"}, {Kind: NewDependency}, {Kind: NoTestsRan}}
	if got := where(Blocking(fs)); strings.Join(got, ",") != "tests_removed a:0,no_tests_ran :0" {
		t.Errorf("Blocking = %v", got)
	}
}

func TestSummary(t *testing.T) {
	tests := map[string]struct {
		fs   []Finding
		want string
	}{
		"none": {nil, ""},
		"blocking and review": {
			[]Finding{{Kind: TestSkipped, Path: "a_test.go", Line: 4}, {Kind: NewDependency, Path: "go.mod", Line: 7}, {Kind: NoTestsRan}},
			"findings: the change cannot be reported as verified because of 2 findings (test_skipped a_test.go:4, no_tests_ran); restore the removed or skipped tests, make the test check run the tests; a reviewer will be asked to check 1 finding (new_dependency go.mod:7).",
		},
		"assertions and only tests": {
			[]Finding{{Kind: AssertionChanged, Path: "a_test.py", Line: 3}, {Kind: OnlyTestsChanged, Path: "a_test.py", Line: 1}},
			"findings: the change cannot be reported as verified because of 2 findings (assertion_changed a_test.py:3, only_tests_changed a_test.py:1); put back the original expectations and fix the code instead, fix the code the issue is about, not only its tests.",
		},
		"review only": {
			[]Finding{{Kind: Scope}},
			"findings: a reviewer will be asked to check 1 finding (scope).",
		},
		"many": {
			[]Finding{{Kind: TestsRemoved, Path: "a"}, {Kind: TestsRemoved, Path: "b"}, {Kind: TestsRemoved, Path: "c"}, {Kind: TestsRemoved, Path: "d"}, {Kind: TestsRemoved, Path: "e"}, {Kind: TestsRemoved, Path: "f"}, {Kind: TestsRemoved, Path: "g"}},
			"findings: the change cannot be reported as verified because of 7 findings (tests_removed a, tests_removed b, tests_removed c, tests_removed d, tests_removed e, and 2 more); restore the removed or skipped tests.",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := Summary(tc.fs)
			if got != tc.want {
				t.Errorf("Summary =\n%s\nwant\n%s", got, tc.want)
			}
			if strings.Contains(got, "\n") {
				t.Error("summary is more than one line")
			}
		})
	}
}

// TestJSON pins the result.json shape of docs/design.md §4.5.
func TestJSON(t *testing.T) {
	b, err := json.Marshal(Finding{Kind: TestsRemoved, Path: "a_test.go", Line: 3, Detail: "x."})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"kind":"tests_removed","path":"a_test.go","line":3,"detail":"x."}`; string(b) != want {
		t.Errorf("JSON = %s, want %s", b, want)
	}
}

// TestOrder: findings come sorted by path and line whatever produced
// them, so the report is stable.
func TestOrder(t *testing.T) {
	fs := Analyze(Input{
		Files: []File{
			mod("z_test.go", goTest1, replace(goTest1, "func TestHello(t *testing.T) {\n", "func TestHello(t *testing.T) {\n\tt.Skip()\n")),
			mod("go.mod", goMod1, replace(goMod1, "uuid v1.6.0", "uuid v1.7.0")),
			mod("a_test.go", goTest1, replace(goTest1, "func TestHello(t *testing.T) {\n", "func TestHello(t *testing.T) {\n\tt.Skip()\n")),
		},
		Checks: []Check{{Name: "test", Baseline: "go test ./...", Final: "go test ./...", ZeroTests: true}},
		Read:   []string{"z_test.go", "go.mod", "a_test.go"},
	})
	want := "no_tests_ran :0,test_skipped a_test.go:6,new_dependency go.mod:6,test_skipped z_test.go:6"
	if got := strings.Join(where(fs), ","); got != want {
		t.Errorf("order = %s, want %s", got, want)
	}
}

// TestBadInput: files that do not parse give what can be said without
// parsing them, and never a panic.
func TestBadInput(t *testing.T) {
	junk := "\x00\xff{{{ ]]] <<<\n"
	tests := map[string]struct {
		files []File
		want  []string
	}{
		"garbage in every kind of file": {
			files: func() []File {
				var fs []File
				for _, p := range []string{"go.mod", "go.sum", "package.json", "package-lock.json", "yarn.lock", "pnpm-lock.yaml", "requirements.txt", "pyproject.toml",
					"poetry.lock", "Pipfile.lock", "Cargo.toml", "Cargo.lock", "pom.xml", "pytest.ini", "setup.cfg", "tox.ini", "jest.config.js", ".mocharc.yml",
					"tests/conftest.py", "x_test.go", "tests/test_x.py", "x.test.js", "x.test.ts", "x.test.tsx", "tests/x.rs", "src/test/java/XTest.java"} {
					fs = append(fs, mod(p, junk, junk+junk))
				}
				return fs
			}(),
			// requirements.txt reads "{{{ ]]] <<<" as no requirement; the
			// garbage test files have no tests before or after, and are no
			// helpers, not parsing; the runner configuration changed.
			want: []string{"harness_changed .mocharc.yml:2", "harness_changed jest.config.js:2", "harness_changed pytest.ini:2", "harness_changed tests/conftest.py:2", "harness_changed tox.ini:2"},
		},
		"test file turned to garbage": {
			files: []File{mod("greet_test.go", goTest1, junk)},
			want:  []string{"tests_removed greet_test.go:0"},
		},
		"valid manifest from garbage": {
			files: []File{mod("go.mod", junk, goMod1)},
			want:  []string{"new_dependency go.mod:6", "new_dependency go.mod:7"},
		},
		"empty files": {
			files: []File{mod("go.mod", "", ""), mod("a_test.go", "", "")},
		},
		"a file without change": {
			files: []File{mod("greet_test.go", goTest1, goTest1)},
		},
		"no files": {},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := where(Analyze(Input{Files: tc.files, IssueTitle: "Add a thing", Read: readAll(tc.files)}))
			if tc.want == nil {
				tc.want = []string{}
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("findings %v, want %v", got, tc.want)
			}
		})
	}
}

func TestReportsBug(t *testing.T) {
	for title, want := range map[string]bool{
		"Parser crashes on empty input":           true,
		"greet() returns the wrong value":         true,
		"NullPointerException in Greeter":         true,
		"TypeError when name is None":             true,
		"Add a --json flag":                       false,
		"Add tests for the parser":                false,
		"Flaky test TestHello fails on CI":        false,
		"Support Unicode names in the greeting":   false,
		"Login does not work behind a proxy":      true,
		"Output shows the name instead of the ID": true,
	} {
		if got := reportsBug(title, ""); got != want {
			t.Errorf("reportsBug(%q) = %v, want %v", title, got, want)
		}
	}
}

// BenchmarkAnalyze measures a change to a large Go test file (500 tests,
// one edited) beside a 5,000-entry go.sum that gained one line (which
// counts as a change of behaviour, so the edit is no finding).
func BenchmarkAnalyze(b *testing.B) {
	var tests, sum strings.Builder
	tests.WriteString("package big\n\nimport \"testing\"\n")
	for i := range 500 {
		fmt.Fprintf(&tests, "\nfunc Test%d(t *testing.T) {\n\tif f(%d) != %d {\n\t\tt.Fatal(\"no\")\n\t}\n}\n", i, i, i*2)
	}
	for i := range 5000 {
		fmt.Fprintf(&sum, "example.com/m%d v1.0.%d h1:abc=\n", i, i)
	}
	base := tests.String()
	in := Input{Files: []File{
		{Path: "big_test.go", Base: []byte(base), New: []byte(strings.Replace(base, "f(7) != 14", "f(7) != 15", 1))},
		{Path: "go.sum", Base: []byte(sum.String()), New: []byte(sum.String() + "example.com/new v1.0.0 h1:x=\n")},
	}, Read: []string{"big.go"}, Limits: Limits{30, 1500}}
	for b.Loop() {
		if fs := Analyze(in); len(fs) != 1 {
			b.Fatalf("findings: %v", where(fs))
		}
	}
}
