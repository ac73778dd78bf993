package findings

import (
	"strings"
	"testing"
)

func TestMissingTestsAreNoTestsRan(t *testing.T) {
	known := func(names ...string) TestNames { return TestNames{Known: true, Names: names} }
	base := known("m/calc.TestAdd", "m/calc.TestSub", "m/a.TestA", "m/b.TestB", "m/c.TestC")
	for name, tc := range map[string]struct {
		final TestNames
		base  TestNames
		want  []string // in the detail; nil: no finding
	}{
		"all still run":       {final: known("m/calc.TestAdd", "m/calc.TestSub", "m/a.TestA", "m/b.TestB", "m/c.TestC", "m/calc.TestNew"), base: base},
		"one gone":            {final: known("m/calc.TestSub", "m/a.TestA", "m/b.TestB", "m/c.TestC"), base: base, want: []string{"`m/calc.TestAdd`", "which ran at baseline"}},
		"many gone":           {final: known(), base: base, want: []string{"`m/calc.TestAdd`, `m/calc.TestSub`, `m/a.TestA` and 2 more"}},
		"final not named":     {final: TestNames{}, base: base},
		"baseline not named":  {final: known(), base: TestNames{Names: []string{"m/calc.TestAdd"}}},
		"hostile name quoted": {final: known(), base: known("m.Test`x`"), want: []string{"`m.Test'x'`"}},
	} {
		t.Run(name, func(t *testing.T) {
			got := checkFindings([]Check{{Name: "test", Baseline: "go test ./...", Final: "go test ./...", BaselineRan: tc.base, FinalRan: tc.final}}, nil)
			if tc.want == nil {
				if len(got) != 0 {
					t.Fatalf("findings %+v, want none", got)
				}
				return
			}
			if len(got) != 1 || got[0].Kind != NoTestsRan || !Blocks(got[0].Kind) {
				t.Fatalf("findings %+v, want one blocking no_tests_ran", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got[0].Detail, w) {
					t.Errorf("detail %q lacks %q", got[0].Detail, w)
				}
			}
		})
	}
}

// A test the change renamed or moved ran under its new name: it did not
// stop running. Only a test whose new name did not run either is missing.
func TestRenamedTestsAreFollowed(t *testing.T) {
	goBase := "package calc\n\nimport \"testing\"\n\nfunc TestZeroWidthJointer(t *testing.T) {\n\tif got := Width(\"a\\u200db\"); got != 1 {\n\t\tt.Errorf(\"Width = %d, want 1\", got)\n\t}\n}\n\nfunc TestOther(t *testing.T) {}\n"
	goNext := strings.Replace(strings.Replace(goBase, "Jointer", "Joiner", 1), "want 1", "want 2", 1)
	goNext = strings.Replace(goNext, "got != 1", "got != 2", 1)
	pyBase := "def test_parse():\n    assert parse('a') == ['a']\n"
	pyNext := "def test_parse_single():\n    assert parse('a') == ['a']\n"
	known := func(names ...string) TestNames { return TestNames{Known: true, Names: names} }
	for name, tc := range map[string]struct {
		files       []File
		base, final TestNames
		missing     string // "" when nothing is missing
	}{
		"go rename ran": {
			files: []File{{Path: "calc_test.go", Base: []byte(goBase), New: []byte(goNext)}},
			base:  known("m/calc.TestZeroWidthJointer", "m/calc.TestOther"),
			final: known("m/calc.TestZeroWidthJoiner", "m/calc.TestOther"),
		},
		"go rename did not run": {
			files:   []File{{Path: "calc_test.go", Base: []byte(goBase), New: []byte(goNext)}},
			base:    known("m/calc.TestZeroWidthJointer", "m/calc.TestOther"),
			final:   known("m/calc.TestOther"),
			missing: "`m/calc.TestZeroWidthJointer`",
		},
		"pytest moved and renamed": {
			files: []File{{Path: "tests/test_a.py", Base: []byte(pyBase), New: []byte("")}, {Path: "tests/test_b.py", New: []byte(pyNext)}},
			base:  known("tests/test_a.py::test_parse"),
			final: known("tests/test_b.py::test_parse_single"),
		},
		"junit module moved": {
			files: []File{{Path: "tests/test_a.py", Base: []byte(pyBase), New: []byte("")}, {Path: "tests/test_b.py", New: []byte(pyBase)}},
			base:  known("tests.test_a.test_parse"),
			final: known("tests.test_b.test_parse"),
		},
		"a longer name is not the renamed one": {
			files:   []File{{Path: "calc_test.go", Base: []byte(goBase), New: []byte(goNext)}},
			base:    known("m/calc.TestZeroWidthJointer", "m/calc.TestOther"),
			final:   known("m/calc.TestZeroWidthJoinerX", "m/calc.TestOther"),
			missing: "`m/calc.TestZeroWidthJointer`",
		},
	} {
		t.Run(name, func(t *testing.T) {
			got := Analyze(Input{Files: tc.files, IssueTitle: "Width", Read: []string{"calc_test.go", "tests/test_a.py", "tests/test_b.py"},
				Checks: []Check{{Name: "test", Baseline: "go test ./...", Final: "go test ./...", BaselineRan: tc.base, FinalRan: tc.final}}})
			var missing []Finding
			for _, f := range got {
				if f.Kind == NoTestsRan {
					missing = append(missing, f)
				}
			}
			switch {
			case tc.missing == "" && len(missing) > 0:
				t.Fatalf("findings %+v, want no %s", missing, NoTestsRan)
			case tc.missing != "" && (len(missing) != 1 || !strings.Contains(missing[0].Detail, tc.missing)):
				t.Fatalf("findings %+v, want one %s naming %s", missing, NoTestsRan, tc.missing)
			}
		})
	}
}

func TestReplaceWord(t *testing.T) {
	for _, tc := range []struct{ s, old, new, want string }{
		{"m/calc.TestA", "TestA", "TestB", "m/calc.TestB"},
		{"m/calc.TestAB", "TestA", "TestB", "m/calc.TestAB"},
		{"m/calc.TestA/TestA_sub", "TestA", "TestB", "m/calc.TestB/TestA_sub"},
		{"TestA.TestA", "TestA", "TestB", "TestA.TestB"},
		{"", "TestA", "TestB", ""},
	} {
		if got, _ := replaceWord(tc.s, tc.old, tc.new); got != tc.want {
			t.Errorf("replaceWord(%q, %q, %q) = %q, want %q", tc.s, tc.old, tc.new, got, tc.want)
		}
	}
}
