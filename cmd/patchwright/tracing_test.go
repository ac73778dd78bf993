package main

import (
	"slices"
	"testing"

	"github.com/patchwright/patchwright/jobs/tracing"
	"github.com/patchwright/patchwright/jobs/tracing/otlptest"
)

// collectTraces points the SDK's traces endpoint at a receiver for the
// commands the test starts afterwards.
func collectTraces(t *testing.T) *otlptest.Receiver {
	t.Helper()
	rcv := otlptest.New(t)
	otlptest.ClearEnv(t)
	t.Setenv(tracing.EnvTracesEndpoint, rcv.URL+otlptest.TracesPath)
	return rcv
}

// checkJobTraces wants, once the worker has stopped (its last spans
// flushed), jobs root spans of repo, each verified and with its phases
// under it: the worker command's wiring, from the variable to the wire.
func checkJobTraces(t *testing.T, rcv *otlptest.Receiver, repo string, jobs int) {
	t.Helper()
	spans := rcv.Spans()
	var roots []otlptest.Span
	for _, s := range spans {
		if s.ParentSpanID == "" {
			roots = append(roots, s)
		}
	}
	if len(roots) != jobs {
		t.Fatalf("%d root spans of %d spans, want %d jobs: %+v", len(roots), len(spans), jobs, roots)
	}
	for _, root := range roots {
		var phases []string
		for _, s := range spans {
			if s.ParentSpanID == root.SpanID {
				phases = append(phases, s.Name)
			}
		}
		if root.Name != "patchwright job" || root.Attributes["patchwright.repository"] != repo ||
			root.Attributes["patchwright.outcome"] != "verified" || root.Resource["service.name"] != tracing.ServiceName {
			t.Errorf("root span %q %v %v: want a verified job of %s by service %s", root.Name, root.Attributes, root.Resource, repo, tracing.ServiceName)
		}
		if !slices.Contains(phases, "agent") || !slices.Contains(phases, "publish") {
			t.Errorf("job %v has phase spans %q, want its phases", root.Attributes["patchwright.task_id"], phases)
		}
	}
}
