package tracing_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/patchwright/patchwright/jobs/tracing"
	"github.com/patchwright/patchwright/jobs/tracing/otlptest"
)

func TestOffWithoutAnEndpoint(t *testing.T) {
	otlptest.ClearEnv(t)
	tr, err := tracing.Start(context.Background(), "v1", discard)
	if tr != nil || err != nil {
		t.Fatalf("Start = %v, %v; want nil, nil: no endpoint, no exporter", tr, err)
	}
	if tr.Tracer() != nil {
		t.Error("a tracer without an endpoint")
	}
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Error(err)
	}
}

func TestBadEndpointIsRefused(t *testing.T) {
	for name, tc := range map[string]struct{ env, value string }{
		"no scheme":   {tracing.EnvEndpoint, "otel-collector:4318"},
		"grpc scheme": {tracing.EnvTracesEndpoint, "grpc://otel-collector:4317"},
		"no host":     {tracing.EnvEndpoint, "http://"},
		"not a URL":   {tracing.EnvTracesEndpoint, "http://user:s3cret@[::1"},
	} {
		t.Run(name, func(t *testing.T) {
			otlptest.ClearEnv(t)
			t.Setenv(tc.env, tc.value)
			tr, err := tracing.Start(context.Background(), "v1", discard)
			if err == nil {
				tr.Shutdown(context.Background())
				t.Fatal("started; want an error naming the variable")
			}
			if !strings.HasPrefix(err.Error(), tc.env+": ") || strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error %q: want it to name %s and not repeat the value", err, tc.env)
			}
		})
	}
}

// The SDK's own variables reach the wire: the endpoint, the headers (a
// collector's token), the resource; service.name and service.version are
// ours unless OTEL_SERVICE_NAME says otherwise.
func TestSpansReachTheCollector(t *testing.T) {
	for name, tc := range map[string]struct {
		env         map[string]string
		wantService string
	}{
		"endpoint": {env: map[string]string{tracing.EnvEndpoint: ""}, wantService: tracing.ServiceName},
		"traces endpoint and service name": {
			env:         map[string]string{tracing.EnvTracesEndpoint: "/v1/traces", "OTEL_SERVICE_NAME": "pw-prod"},
			wantService: "pw-prod",
		},
	} {
		t.Run(name, func(t *testing.T) {
			otlptest.ClearEnv(t)
			rcv := otlptest.New(t)
			for k, v := range tc.env {
				if k == tracing.EnvEndpoint || k == tracing.EnvTracesEndpoint {
					v = rcv.URL + v
				}
				t.Setenv(k, v)
			}
			t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer collector-token")
			tr, err := tracing.Start(context.Background(), "v1.2.3", discard)
			if err != nil || tr == nil {
				t.Fatalf("Start = %v, %v", tr, err)
			}
			_, span := tr.Tracer().Start(context.Background(), "a job")
			span.End()
			if err := tr.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			spans := rcv.Spans()
			if len(spans) != 1 || spans[0].Name != "a job" {
				t.Fatalf("spans %+v, want the one", spans)
			}
			res := spans[0].Resource
			if res["service.name"] != tc.wantService || res["service.version"] != "v1.2.3" {
				t.Errorf("resource %v", res)
			}
			if h := rcv.Header(); h.Get("Authorization") != "Bearer collector-token" || h.Get("Content-Type") != "application/x-protobuf" {
				t.Errorf("request headers %v", h)
			}
		})
	}
}

// A collector that never answers costs a job nothing: ending spans never
// waits on it (more than the batcher's queue holds are ended while every
// export hangs), and Shutdown gives up at its bound rather than waiting
// for the collector.
func TestHungCollectorCostsNoJobTime(t *testing.T) {
	otlptest.ClearEnv(t)
	rcv := otlptest.New(t)
	rcv.Hang()
	t.Setenv(tracing.EnvEndpoint, rcv.URL)
	tr, err := tracing.Start(context.Background(), "v1", discard)
	if err != nil {
		t.Fatal(err)
	}
	for range 3000 {
		_, span := tr.Tracer().Start(context.Background(), "phase")
		span.End()
	}
	if err := tr.Shutdown(context.Background()); err == nil {
		t.Error("Shutdown reported every span exported to a collector that never answered")
	}
	if rcv.Requests() == 0 {
		t.Error("no export was tried")
	}
}

// A collector that is not there at all (connection refused) is the
// same, and the failed export is logged as a warning.
func TestAbsentCollector(t *testing.T) {
	otlptest.ClearEnv(t)
	rcv := otlptest.New(t)
	url := rcv.URL
	rcv.Close()
	t.Setenv(tracing.EnvEndpoint, url)
	var logged syncBuffer
	tr, err := tracing.Start(context.Background(), "v1", slog.New(slog.NewTextHandler(&logged, nil)))
	if err != nil {
		t.Fatal(err)
	}
	_, span := tr.Tracer().Start(context.Background(), "phase")
	span.End()
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Logf("Shutdown: %v", err)
	}
	if out := logged.String(); !strings.Contains(out, "level=WARN") || !strings.Contains(out, "spans not exported") || !strings.Contains(out, "connection refused") {
		t.Errorf("log %q: want a warning that the spans were not exported, and why", out)
	}
}

var discard = slog.New(slog.DiscardHandler)

// syncBuffer is a bytes.Buffer the exporter's goroutine may write to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
