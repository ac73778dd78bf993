package report

import (
	"strings"
	"testing"

	"github.com/patchwright/patchwright/verify"
	"github.com/patchwright/patchwright/verify/findings"
)

// TestHarnessFirstInNotVerified: the files of the test harness the change
// wrote open "Not verified", before what was missing and before every
// other finding, whatever their paths sort as.
func TestHarnessFirstInNotVerified(t *testing.T) {
	in := Input{
		Missing: []string{"No lint check."},
		Findings: []Finding{
			{Kind: findings.TestSkipped, Path: "a.go", Line: 1, Detail: "A skip was added."},
			{Kind: findings.HarnessChanged, Path: "z/conftest.py", Line: 1, Detail: "The change adds z/conftest.py."},
			{Kind: findings.Scope, Path: "b.go", Detail: "Unrelated."},
			{Kind: findings.HarnessChanged, Path: "pytest.py", Line: 1, Detail: "The change adds pytest.py."},
		},
		Final: []verify.CheckResult{{Name: "test", Command: "python -m pytest", Phase: verify.Final, Ran: true, Passed: true}},
	}
	got := NotVerified(in)
	if len(got) < 5 {
		t.Fatalf("not verified %q", got)
	}
	for i, want := range []string{"z/conftest.py", "pytest.py", "No lint check", "A skip was added", "Unrelated"} {
		if !strings.Contains(got[i], want) {
			t.Errorf("line %d = %q, want it to name %q\n%q", i, got[i], want, got)
		}
	}
}
