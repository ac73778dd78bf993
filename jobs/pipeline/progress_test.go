package pipeline

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/agent/tools"
)

// TestPhaseSpans: each phase is a child span of Job.Span, ended when the
// next starts; model turns and tool calls recorded in the ledger are
// events of the phase they happen in, and a call to a tool that does not
// exist does not carry the model's made-up name. A run that ends before
// PhaseDone still ends its open span.
func TestPhaseSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	_, root := tp.Tracer("test").Start(context.Background(), "job")
	out := t.TempDir()
	r := &run{e: &Executor{}, job: Job{ID: "traced", OutDir: out, Span: root}}
	r.traceUnder(root)
	if err := r.openLedger(filepath.Join(out, FileLedger)); err != nil {
		t.Fatal(err)
	}
	defer r.closeLedger()
	r.phase(PhaseClone)
	r.phase(PhaseAgent)
	for _, p := range []ledger.Payload{
		&ledger.ModelTurn{Step: 1, Model: "openai:m", InputTokens: 10, OutputTokens: 2, Text: "my secret plan"},
		&ledger.ToolCall{Step: 1, Tool: "read_file", Arguments: `{"path":"a"}`},
		&ledger.ToolCall{Step: 1, Tool: "made_up_secret_tool", ErrorCode: tools.NotFound},
	} {
		if _, err := r.ledger.Append(p); err != nil {
			t.Fatal(err)
		}
	}
	r.phase(PhaseFinal)
	r.endTrace()

	var names []string
	for _, s := range rec.Ended() {
		names = append(names, s.Name())
		if s.Parent().SpanID() != root.SpanContext().SpanID() || s.Parent().TraceID() != root.SpanContext().TraceID() {
			t.Errorf("span %q is not a child of the job's span", s.Name())
		}
	}
	if want := []string{"clone", "agent", "final"}; !slices.Equal(names, want) {
		t.Fatalf("ended spans %q, want %q (final ended by endTrace)", names, want)
	}
	agent := rec.Ended()[1]
	var events []string
	for _, ev := range agent.Events() {
		desc := ev.Name
		for _, a := range ev.Attributes {
			desc += " " + string(a.Key) + "=" + a.Value.String()
		}
		events = append(events, desc)
	}
	want := []string{
		"model turn patchwright.step=1 patchwright.model=openai:m patchwright.input_tokens=10 patchwright.output_tokens=2",
		"tool call patchwright.step=1 patchwright.tool=read_file",
		"tool call patchwright.step=1 patchwright.tool_error=not_found",
	}
	if !slices.Equal(events, want) {
		t.Errorf("agent span events:\n%q\nwant\n%q", events, want)
	}
}

// Without a recording span nothing is made, and nothing fails.
func TestNoSpanNoPhaseSpans(t *testing.T) {
	r := &run{e: &Executor{}}
	r.phase(PhaseClone)
	r.observe(&ledger.ToolCall{Step: 1, Tool: "read_file"})
	r.endTrace()
	if r.spans.cur != nil {
		t.Error("a phase span without a job span")
	}
}

// BenchmarkPhase is a phase start with tracing off (no job span, the
// baseline) and on (a recording span, its spans dropped by a processor
// that keeps nothing): what tracing adds to the seam every phase goes
// through.
func BenchmarkPhase(b *testing.B) {
	tp := sdktrace.NewTracerProvider()
	_, root := tp.Tracer("bench").Start(context.Background(), "job")
	for name, span := range map[string]trace.Span{"off": nil, "on": root} {
		b.Run(name, func(b *testing.B) {
			r := &run{e: &Executor{}}
			r.traceUnder(span)
			for i := 0; b.Loop(); i++ {
				r.phase([]Phase{PhaseSetup, PhaseAgent}[i%2])
			}
			r.endTrace()
		})
	}
}
