package githubjob

import (
	"context"
	"errors"

	"github.com/hibiken/asynq"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/patchwright/patchwright/jobs/pipeline"
)

// The root span of a job's trace and its attributes (docs/operating.md,
// "Traces"); the pipeline adds a child span per phase. Identifiers,
// counts and outcomes only: never a prompt, the issue's text, the
// model's output, an error's text or a secret.
const (
	spanJob  = "patchwright job"
	spanPlan = "patchwright plan"

	attrInstallation = "patchwright.installation_id"
	attrRepository   = "patchwright.repository"
	attrIssue        = "patchwright.issue"
	attrTask         = "patchwright.task_id"
	attrRetry        = "patchwright.retry"
	attrAttempt      = "patchwright.attempt"
	attrModel        = "patchwright.model"
	attrOutcome      = "patchwright.outcome"
	attrCost         = "patchwright.cost_usd"
)

// jobSpan is the root span of one job; its zero value (no tracer) does
// nothing.
type jobSpan struct{ span trace.Span }

// startSpan starts a's root span, named name, with what is known before
// the job runs. The span is not put in ctx: the pipeline gets it in
// pipeline.Job.Span, and the libraries' own instrumentation (the Docker
// client's) finds none to add its spans to.
func (p *Pipeline) startSpan(ctx context.Context, name string, a request) jobSpan {
	if p.Tracer == nil {
		return jobSpan{}
	}
	_, span := p.Tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(
		attribute.Int64(attrInstallation, a.issue.InstallationID),
		attribute.String(attrRepository, a.issue.Owner+"/"+a.issue.Repo),
		attribute.Int(attrIssue, a.issue.Number),
		attribute.String(attrTask, a.at.TaskID),
		attribute.Int(attrRetry, a.at.Retry),
		attribute.String(attrModel, p.executor(a.issue).Provider.Model()),
	))
	return jobSpan{span}
}

// under makes job's phases children of the span, and records the
// attempt's number in the issue's history that prepare read (0:
// unknown, left out).
func (s jobSpan) under(job *pipeline.Job) {
	if s.span == nil {
		return
	}
	job.Span = s.span
	if job.Attempt.Number > 0 {
		s.span.SetAttributes(attribute.Int(attrAttempt, job.Attempt.Number))
	}
}

// end records how the job ended (outcome and cost when it got as far as
// a result) and ends the span. err is what asynq sees: the status says
// only which kind of failure it was, since an error's text can quote
// what a repository or GitHub answered.
func (s jobSpan) end(outcome string, cost *float64, err error) {
	if s.span == nil {
		return
	}
	if outcome != "" {
		s.span.SetAttributes(attribute.String(attrOutcome, outcome))
	}
	if cost != nil {
		s.span.SetAttributes(attribute.Float64(attrCost, *cost))
	}
	switch {
	case err == nil:
	case errors.Is(err, pipeline.ErrConfig):
		s.span.SetStatus(codes.Error, "configuration error")
	case errors.Is(err, asynq.SkipRetry):
		s.span.SetStatus(codes.Error, "failed, not retried")
	default:
		s.span.SetStatus(codes.Error, "failed, to be retried")
	}
	s.span.End()
}

// outcomeOf and costOf read a run's result for its span; "" and nil
// before there is one.
func outcomeOf(res *pipeline.Result) string {
	if res == nil {
		return ""
	}
	return string(res.Outcome)
}

func costOf(res *pipeline.Result) *float64 {
	if res == nil {
		return nil
	}
	return res.CostUSD
}

// planOutcome is a planning run's outcome for its span: "planned" or
// "no plan"; "" before the run ended.
func planOutcome(res *pipeline.PlanResult) string {
	switch {
	case res == nil:
		return ""
	case res.Plan != "":
		return "planned"
	}
	return "no plan"
}

func planCostOf(res *pipeline.PlanResult) *float64 {
	if res == nil {
		return nil
	}
	return res.CostUSD
}
