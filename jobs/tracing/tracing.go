// Package tracing sends a worker's traces (a root span per job, a child
// span per phase) to an OpenTelemetry collector over OTLP/HTTP when the
// operator names one with the SDK's own variables; without one nothing is
// built and no span records anything.
//
// Only cmd/patchwright imports this package: the SDK and the exporter stay
// out of the packages that make spans (jobs/githubjob, jobs/pipeline),
// which see the trace API alone.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/patchwright/patchwright/internal/logkey"
)

// The variables that turn tracing on: the OpenTelemetry SDK's own, so a
// collector sidecar or an operator's usual environment works unchanged.
// Either one, non-empty, is enough; the exporter then reads them (and
// _HEADERS, _TIMEOUT, _CERTIFICATE…) itself.
const (
	EnvEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
)

// The export timeout's variables: when neither is set, DefaultExportTimeout
// bounds each export instead of the SDK's 10 seconds.
const (
	envTimeout       = "OTEL_EXPORTER_OTLP_TIMEOUT"
	envTracesTimeout = "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"
)

// DefaultExportTimeout bounds one export to the collector, retries
// included, when the operator set no timeout: a collector that is down
// costs a batch of spans, never a job's time (spans are exported in the
// background) and at most this at a worker's shutdown.
const DefaultExportTimeout = 5 * time.Second

// ShutdownTimeout bounds Shutdown: the spans still queued when a worker
// stops get this long to reach the collector.
const ShutdownTimeout = DefaultExportTimeout

// ServiceName is the resource's service.name unless OTEL_SERVICE_NAME
// or OTEL_RESOURCE_ATTRIBUTES names another.
const ServiceName = "patchwright"

// InstrumentationName names the tracer every span of a job comes from.
const InstrumentationName = "github.com/patchwright/patchwright"

// Tracing is a process's trace pipeline: a tracer provider batching spans
// to the OTLP/HTTP exporter. A nil *Tracing is tracing turned off.
type Tracing struct {
	provider *sdktrace.TracerProvider
}

// Configured reports whether the environment names an OTLP endpoint.
func Configured() bool {
	return os.Getenv(EnvEndpoint) != "" || os.Getenv(EnvTracesEndpoint) != ""
}

// Start builds the trace pipeline when Configured, reading the SDK's
// variables (endpoint, headers, timeout, sampler, batching, resource);
// version becomes service.version. A failed export is logged to log as a
// warning (the SDK's error handler is process-wide: the last Start's log
// gets them). It returns nil and no error when no endpoint is configured.
// An error is a variable the exporter cannot use.
func Start(ctx context.Context, version string, log *slog.Logger) (*Tracing, error) {
	if !Configured() {
		return nil, nil
	}
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn("job traces: spans not exported", logkey.Err, err)
	}))
	if err := CheckEnv(); err != nil {
		return nil, err
	}
	var opts []otlptracehttp.Option
	if os.Getenv(envTimeout) == "" && os.Getenv(envTracesTimeout) == "" {
		opts = append(opts, otlptracehttp.WithTimeout(DefaultExportTimeout))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("OpenTelemetry exporter (%s): %w", EnvEndpoint, err)
	}
	res, err := resource.New(ctx,
		// The environment's come last, so they win.
		resource.WithAttributes(attribute.String("service.name", ServiceName), attribute.String("service.version", version)),
		resource.WithFromEnv())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("OpenTelemetry resource (OTEL_RESOURCE_ATTRIBUTES): %w", err)
	}
	// The batcher exports in the background: ending a span never waits
	// on the collector, and a full queue drops spans, not jobs.
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return &Tracing{provider: tp}, nil
}

// CheckEnv refuses an endpoint the exporter would not use as given: the
// SDK drops a malformed one with a log line and sends to localhost
// instead, which would look like tracing that works. Start checks it;
// cmd checks it with the other settings, before anything starts.
func CheckEnv() error {
	for _, env := range []string{EnvEndpoint, EnvTracesEndpoint} {
		v := os.Getenv(env)
		if v == "" {
			continue
		}
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			// The value is not repeated: it may hold credentials.
			return fmt.Errorf("%s: not an http:// or https:// URL of an OTLP/HTTP collector, such as http://otel-collector:4318", env)
		}
	}
	return nil
}

// Tracer is the tracer jobs make their spans with; nil when t is nil
// (githubjob.Pipeline then makes none).
func (t *Tracing) Tracer() trace.Tracer {
	if t == nil {
		return nil
	}
	return t.provider.Tracer(InstrumentationName)
}

// Shutdown exports the spans still queued and stops the exporter, within
// ctx and at most ShutdownTimeout, so a collector that is down delays a
// worker's exit by no more; nil t does nothing.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, ShutdownTimeout)
	defer cancel()
	return t.provider.Shutdown(ctx)
}
