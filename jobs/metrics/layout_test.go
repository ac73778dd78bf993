package metrics

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLeaf: webhook, the worker, the pipeline and the GitHub adapter may
// all record into this package, so it must import none of them (or any
// other package of ours), or one of them would end up importing itself.
func TestLeaf(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	const self = "github.com/patchwright/patchwright/jobs/metrics"
	out, err := exec.Command("go", "list", "-deps", self).Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, d := range strings.Fields(string(out)) {
		if strings.HasPrefix(d, "github.com/patchwright/patchwright/") && d != self {
			t.Errorf("jobs/metrics depends on %s", d)
		}
	}
}
