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
			got := checkFindings([]Check{{Name: "test", Baseline: "go test ./...", Final: "go test ./...", BaselineRan: tc.base, FinalRan: tc.final}})
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
