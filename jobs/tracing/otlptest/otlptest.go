// Package otlptest is an OTLP/HTTP trace receiver for tests: an httptest
// server that decodes what the real exporter sends (protobuf, as
// collectors take it) into plain spans a test can assert on.
package otlptest

import (
	"compress/gzip"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"
)

// TracesPath is where OTLP/HTTP sends traces under a base endpoint.
const TracesPath = "/v1/traces"

// Span is one received span. IDs are lower-case hex; ParentSpanID is ""
// for a root.
type Span struct {
	TraceID, SpanID, ParentSpanID string
	Name                          string
	// Kind is the OTLP enum's value (5 is consumer).
	Kind int32
	// Attributes hold strings, int64s, float64s and bools.
	Attributes map[string]any
	Events     []Event
	// StatusCode is the OTLP enum's value (2 is error); StatusMessage its
	// description.
	StatusCode    int32
	StatusMessage string
	// Resource is the resource's attributes, as Attributes.
	Resource map[string]any
}

// Event is one span event.
type Event struct {
	Name       string
	Attributes map[string]any
}

// ClearEnv unsets, for the test, every variable that could steer the
// exporter, so a developer's own environment cannot decide a test.
func ClearEnv(t *testing.T) {
	t.Helper()
	for _, env := range []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
		"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
		"OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
		"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
		"OTEL_EXPORTER_OTLP_COMPRESSION", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION",
		"OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES", "OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG",
	} {
		t.Setenv(env, "") // restored when the test ends
		os.Unsetenv(env)
	}
}

// Receiver is the test collector.
type Receiver struct {
	// URL is the base endpoint (OTEL_EXPORTER_OTLP_ENDPOINT); traces are
	// taken at URL + TracesPath.
	URL string

	srv      *httptest.Server
	hang     atomic.Bool
	release  chan struct{}
	closing  sync.Once
	requests atomic.Int64

	mu     sync.Mutex
	spans  []Span
	header http.Header
}

// New starts a receiver, closed when the test ends.
func New(t testing.TB) *Receiver {
	r := &Receiver{release: make(chan struct{})}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	r.URL = r.srv.URL
	t.Cleanup(r.Close)
	return r
}

// Hang makes every later request wait, unanswered, until Close: a
// collector that accepts connections and never replies.
func (r *Receiver) Hang() { r.hang.Store(true) }

// Close lets hung requests go and stops the server; later exports find
// the port closed.
func (r *Receiver) Close() {
	r.closing.Do(func() {
		close(r.release)
		r.srv.Close()
	})
}

// Requests is how many export requests arrived, hung ones included.
func (r *Receiver) Requests() int { return int(r.requests.Load()) }

// Spans are the spans received so far, in the order they arrived.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// Header is the last export request's header.
func (r *Receiver) Header() http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.header.Clone()
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	r.requests.Add(1)
	if r.hang.Load() {
		select {
		case <-r.release:
		case <-req.Context().Done():
		}
		return
	}
	if req.Method != http.MethodPost || req.URL.Path != TracesPath {
		http.Error(w, "want POST "+TracesPath, http.StatusNotFound)
		return
	}
	body := io.Reader(req.Body)
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	raw, err := io.ReadAll(body)
	var msg coltracepb.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(raw, &msg)
	}
	if err != nil {
		http.Error(w, "not an OTLP protobuf export: "+err.Error(), http.StatusBadRequest)
		return
	}
	r.record(req.Header, &msg)
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func (r *Receiver) record(h http.Header, msg *coltracepb.ExportTraceServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.header = h.Clone()
	for _, rs := range msg.GetResourceSpans() {
		res := attrs(rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				sp := Span{
					TraceID: hex.EncodeToString(s.GetTraceId()), SpanID: hex.EncodeToString(s.GetSpanId()),
					ParentSpanID: hex.EncodeToString(s.GetParentSpanId()), Name: s.GetName(), Kind: int32(s.GetKind()),
					Attributes: attrs(s.GetAttributes()), StatusCode: int32(s.GetStatus().GetCode()),
					StatusMessage: s.GetStatus().GetMessage(), Resource: res,
				}
				for _, e := range s.GetEvents() {
					sp.Events = append(sp.Events, Event{Name: e.GetName(), Attributes: attrs(e.GetAttributes())})
				}
				r.spans = append(r.spans, sp)
			}
		}
	}
}

func attrs(kvs []*commonpb.KeyValue) map[string]any {
	m := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		switch v := kv.GetValue().GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			m[kv.GetKey()] = v.StringValue
		case *commonpb.AnyValue_IntValue:
			m[kv.GetKey()] = v.IntValue
		case *commonpb.AnyValue_DoubleValue:
			m[kv.GetKey()] = v.DoubleValue
		case *commonpb.AnyValue_BoolValue:
			m[kv.GetKey()] = v.BoolValue
		default:
			m[kv.GetKey()] = kv.GetValue().String()
		}
	}
	return m
}
