package pipeline

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/agent/tools"
)

// openLedger creates the run's ledger file, its first events the images
// prepare resolved. Each event the ledger records
// also updates the progress (step, last tool, tokens), so what a person
// watches is read from the same record as the report.
func (r *run) openLedger(path string) error {
	lw, err := ledger.Create(path, ledger.Options{Now: r.e.Now, Observe: r.observe})
	if err != nil {
		return err
	}
	r.ledger = lw
	r.recordImages()
	return nil
}

func (r *run) closeLedger() {
	if r.ledger != nil {
		r.ledger.Close()
	}
}

// observe updates the progress from one ledger event.
func (r *run) observe(p ledger.Payload) {
	r.mu.Lock()
	switch e := p.(type) {
	case *ledger.ModelTurn:
		r.progress.Step = e.Step
		r.progress.InputTokens += e.InputTokens
		r.progress.OutputTokens += e.OutputTokens
		r.spans.modelTurnLocked(e)
	case *ledger.ToolCall:
		r.progress.Step = e.Step
		r.progress.Tool = e.Tool
		r.spans.toolCallLocked(e)
	default:
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	r.report()
}

// phase starts a phase and reports it.
func (r *run) phase(name Phase) {
	r.mu.Lock()
	r.progress.Phase = name
	r.clock.startLocked(name, r.e.now())
	r.spans.startLocked(name)
	r.mu.Unlock()
	r.report()
}

func (r *run) report() {
	if r.job.Progress == nil {
		return
	}
	r.mu.Lock()
	p := r.progress
	r.mu.Unlock()
	p.Elapsed = r.e.now().Sub(r.start)
	r.job.Progress(p)
}

// Span names and attribute keys of a run's phases (docs/operating.md,
// "Traces"). Counts and names only: never a prompt, an argument, an
// output or a secret.
const (
	tracerName       = "github.com/patchwright/patchwright/jobs/pipeline"
	spanEventTurn    = "model turn"
	spanEventTool    = "tool call"
	attrPhase        = "patchwright.phase"
	attrStep         = "patchwright.step"
	attrModel        = "patchwright.model"
	attrInputTokens  = "patchwright.input_tokens"
	attrOutputTokens = "patchwright.output_tokens"
	attrTool         = "patchwright.tool"
	attrToolError    = "patchwright.tool_error"
)

// phaseSpans are a run's phases as spans, children of Job.Span: as with
// the phaseClock, each start ends the phase before. Model turns and tool
// calls are events of the phase they happen in. Without a recording span
// (tracing off, `patchwright run`) nothing is made. Guarded by run.mu.
type phaseSpans struct {
	root trace.Span
	cur  trace.Span
}

// traceUnder makes the run's phase spans children of root.
func (r *run) traceUnder(root trace.Span) {
	r.mu.Lock()
	r.spans.root = root
	r.mu.Unlock()
}

// endTrace ends the phase span still open: a run that ended before
// PhaseDone (a clone that failed) leaves one.
func (r *run) endTrace() {
	r.mu.Lock()
	r.spans.startLocked(PhaseDone)
	r.mu.Unlock()
}

func (s *phaseSpans) startLocked(name Phase) {
	if s.cur != nil {
		s.cur.End()
		s.cur = nil
	}
	if s.root == nil || !s.root.IsRecording() || name == PhaseDone {
		return
	}
	parent := trace.ContextWithSpan(context.Background(), s.root)
	_, s.cur = s.root.TracerProvider().Tracer(tracerName).Start(parent, string(name),
		trace.WithAttributes(attribute.String(attrPhase, string(name))))
}

func (s *phaseSpans) modelTurnLocked(e *ledger.ModelTurn) {
	if s.cur == nil {
		return
	}
	s.cur.AddEvent(spanEventTurn, trace.WithAttributes(attribute.Int(attrStep, e.Step), attribute.String(attrModel, e.Model),
		attribute.Int64(attrInputTokens, e.InputTokens), attribute.Int64(attrOutputTokens, e.OutputTokens)))
}

func (s *phaseSpans) toolCallLocked(e *ledger.ToolCall) {
	if s.cur == nil {
		return
	}
	attrs := []attribute.KeyValue{attribute.Int(attrStep, e.Step)}
	// A call to a tool that does not exist is answered not_found, and its
	// name is the model's own text: it stays out.
	if e.ErrorCode != tools.NotFound {
		attrs = append(attrs, attribute.String(attrTool, e.Tool))
	}
	if e.ErrorCode != "" {
		attrs = append(attrs, attribute.String(attrToolError, string(e.ErrorCode)))
	}
	s.cur.AddEvent(spanEventTool, trace.WithAttributes(attrs...))
}
