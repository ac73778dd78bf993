package main

import (
	"testing"

	"github.com/patchwright/patchwright/sandbox"
)

func TestSandboxLimits(t *testing.T) {
	lim, err := sandboxLimits("4g", "1.5", "256")
	if err != nil || lim.MemoryBytes != 4<<30 || lim.CPUs != 1.5 || lim.PIDs != 256 {
		t.Fatalf("sandboxLimits = %+v, %v", lim, err)
	}
	if lim, err := sandboxLimits("", "", ""); err != nil || lim != (sandbox.Limits{}) {
		t.Fatalf("empty settings = %+v, %v; want the defaults", lim, err)
	}
	for name, in := range map[string][3]string{"memory": {"lots", "", ""}, "tiny memory": {"1k", "", ""},
		"cpus": {"", "-1", ""}, "pids": {"", "", "3"}} {
		if _, err := sandboxLimits(in[0], in[1], in[2]); err == nil {
			t.Errorf("%s %q: no error", name, in)
		}
	}
}
