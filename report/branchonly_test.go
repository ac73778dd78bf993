package report

import (
	"strings"
	"testing"

	"github.com/patchwright/patchwright/report/marker"
)

func TestBranchOnly(t *testing.T) {
	got := BranchOnly(7, "agent/issue-7", "## Summary\n\nFixed.\n")
	if !strings.HasPrefix(got, marker.Status(7)+"\n> [!NOTE]\n> The operator's policy allows no pull requests") || !strings.Contains(got, "`agent/issue-7`") || !strings.HasSuffix(got, "## Summary\n\nFixed.\n") {
		t.Errorf("BranchOnly = %q", got)
	}
	if got := BranchOnly(7, "b", strings.Repeat("é", MaxBody)); len(got) > MaxBody || !strings.HasPrefix(got, marker.Status(7)) {
		t.Errorf("a full body: %d bytes, want at most %d", len(got), MaxBody)
	}
}
