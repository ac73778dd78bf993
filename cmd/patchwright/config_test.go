package main

import (
	"testing"
	"time"

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

func TestWorkerBounds(t *testing.T) {
	var cfg config
	if err := parseWorkerBounds("0", "3", "5m", &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.installationConcurrency != -1 || cfg.repoConcurrency != 3 || cfg.shutdownGrace != 5*time.Minute {
		t.Fatalf("0, 3, 5m = %+v; want none, 3, 5m", cfg)
	}
	cfg = config{}
	if err := parseWorkerBounds("", "", "", &cfg); err != nil || cfg.installationConcurrency != 0 || cfg.repoConcurrency != 0 || cfg.shutdownGrace != 0 {
		t.Fatalf("unset = %+v, %v; want the defaults (0)", cfg, err)
	}
}
