package githubjob_test

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/patchwright/patchwright/agent/provider"
	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/jobs/tracing"
	"github.com/patchwright/patchwright/jobs/tracing/otlptest"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// A job's trace reaches an OTLP/HTTP collector as the real exporter sends
// it: one root span for the job, with what it ran on and how it ended,
// and a child span per phase, in the order they ran, in the same trace;
// the model's turns and tool calls are events of the agent phase. No
// attribute carries the text, the model's words or a tool's
// arguments.
func TestJobTraceReachesTheCollector(t *testing.T) {
	sandboxtest.EndToEnd(t)
	rcv := otlptest.New(t)
	otlptest.ClearEnv(t)
	t.Setenv(tracing.EnvEndpoint, rcv.URL)
	tr, err := tracing.Start(context.Background(), "test", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	turns := fixGreeting()
	turns[0].Usage = provider.Usage{InputTokens: 500_000, OutputTokens: 10}
	e := newE2E(t, turns...)
	e.pipe.Executor.Prices = provider.Prices{"openai:" + pt.OpenAIModel: {Input: 1}}
	e.pipe.Tracer = tr.Tracer()
	e.startWorker()

	if code := e.label(1, "delivery-trace-1"); code != http.StatusAccepted {
		t.Fatalf("label: %d, want 202", code)
	}
	if info := e.waitTask("delivery-trace-1", asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted {
		t.Fatalf("task ended %s: %s", info.State, info.LastErr)
	}
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := rcv.Spans()
	root := onlyRoot(t, spans)
	want := map[string]any{
		"patchwright.installation_id": int64(e2eInst),
		"patchwright.repository":      owner + "/" + repoName,
		"patchwright.issue":           int64(1),
		"patchwright.task_id":         "delivery-trace-1",
		"patchwright.retry":           int64(0),
		"patchwright.attempt":         int64(1),
		"patchwright.model":           "openai:" + pt.OpenAIModel,
		"patchwright.outcome":         "verified",
	}
	for k, v := range want {
		if root.Attributes[k] != v {
			t.Errorf("root attribute %s = %#v, want %#v", k, root.Attributes[k], v)
		}
	}
	if cost, _ := root.Attributes["patchwright.cost_usd"].(float64); math.Abs(cost-0.5) > 1e-9 {
		t.Errorf("root cost %#v, want 0.5 (500,000 input tokens at $1 a million)", root.Attributes["patchwright.cost_usd"])
	}
	if root.Kind != 5 || root.StatusCode == 2 || root.Resource["service.name"] != tracing.ServiceName {
		t.Errorf("root kind %d, status %d, resource %v: want a consumer span, not an error, of service %s",
			root.Kind, root.StatusCode, root.Resource, tracing.ServiceName)
	}

	var phases []string
	var agent otlptest.Span
	for _, s := range spans {
		if s.SpanID == root.SpanID {
			continue
		}
		if s.TraceID != root.TraceID || s.ParentSpanID != root.SpanID {
			t.Errorf("span %q is in trace %s under %s, want under the job's span %s of trace %s", s.Name, s.TraceID, s.ParentSpanID, root.SpanID, root.TraceID)
		}
		if s.Attributes["patchwright.phase"] != s.Name {
			t.Errorf("span %q has phase attribute %#v", s.Name, s.Attributes["patchwright.phase"])
		}
		phases = append(phases, s.Name)
		if s.Name == "agent" {
			agent = s
		}
	}
	wantPhases := []string{"clone", "sandbox", "setup", "baseline", "agent", "final", "secret scan", "commit", "publish"}
	if !slices.Equal(phases, wantPhases) {
		t.Errorf("phase spans %q, want %q", phases, wantPhases)
	}
	checkAgentEvents(t, agent, len(turns))
	checkNoText(t, spans, "helo", "Greeting is misspelled", "it should say hello", "Fixed the spelling", "old_text")
}

// onlyRoot is the one span without a parent, the job's.
func onlyRoot(t *testing.T, spans []otlptest.Span) otlptest.Span {
	t.Helper()
	var roots []otlptest.Span
	for _, s := range spans {
		if s.ParentSpanID == "" {
			roots = append(roots, s)
		}
	}
	if len(roots) != 1 || roots[0].Name != "patchwright job" {
		t.Fatalf("root spans %+v (of %d spans), want one named %q", roots, len(spans), "patchwright job")
	}
	return roots[0]
}

// checkAgentEvents wants a model turn event per scripted turn and the
// tools the script called, by name.
func checkAgentEvents(t *testing.T, agent otlptest.Span, turns int) {
	t.Helper()
	var modelTurns int
	var tools []string
	for _, ev := range agent.Events {
		switch ev.Name {
		case "model turn":
			modelTurns++
		case "tool call":
			tools = append(tools, fmt.Sprint(ev.Attributes["patchwright.tool"]))
		}
	}
	if modelTurns != turns || !slices.Contains(tools, "read_file") || !slices.Contains(tools, "edit") {
		t.Errorf("agent span events %+v: want %d model turns and the read_file and edit calls", agent.Events, turns)
	}
}

// checkNoText fails if any attribute of any span, event or resource holds
// one of words.
func checkNoText(t *testing.T, spans []otlptest.Span, words ...string) {
	t.Helper()
	for _, s := range spans {
		all := []map[string]any{s.Attributes, s.Resource}
		for _, ev := range s.Events {
			all = append(all, ev.Attributes)
		}
		for _, m := range all {
			for k, v := range m {
				for _, w := range words {
					if strings.Contains(fmt.Sprint(v), w) {
						t.Errorf("span %q attribute %s = %q carries %q", s.Name, k, v, w)
					}
				}
			}
		}
		if strings.Contains(s.StatusMessage, "helo") {
			t.Errorf("span %q status %q", s.Name, s.StatusMessage)
		}
	}
}

// A planning run (`/agent plan`) is a trace too: its root span says
// whether a plan came, and its model loop is the agent phase. The edit
// it tried is a tool it does not have (not_found): the event keeps the
// error code, not the name the model sent.
func TestPlanTrace(t *testing.T) {
	sandboxtest.EndToEnd(t)
	rcv := otlptest.New(t)
	otlptest.ClearEnv(t)
	t.Setenv(tracing.EnvTracesEndpoint, rcv.URL+otlptest.TracesPath)
	tr, err := tracing.Start(context.Background(), "test", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	e := newE2E(t,
		call("edit", `{"edits":[{"path":"greeting.txt","old_text":"helo","new_text":"hello"}]}`),
		call("read_file", `{"path":"greeting.txt"}`),
		call("submit_plan", `{"files":["greeting.txt"],"approach":"Replace helo with hello.","verification":"grep -qx hello greeting.txt","risks":"None seen."}`),
	)
	e.pipe.Tracer = tr.Tracer()
	if code := e.comment(1, false, "/agent plan keep the trailing newline", "delivery-plan-trace"); code != http.StatusAccepted {
		t.Fatalf("/agent plan: %d, want 202", code)
	}
	e.startWorker()
	if info := e.waitTask("delivery-plan-trace", asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted {
		t.Fatalf("plan task ended %s: %s", info.State, info.LastErr)
	}
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := rcv.Spans()
	var root otlptest.Span
	var phases []string
	var agent otlptest.Span
	for _, s := range spans {
		switch {
		case s.ParentSpanID == "":
			root = s
		case s.Name == "agent":
			agent = s
			fallthrough
		default:
			phases = append(phases, s.Name)
		}
	}
	if root.Name != "patchwright plan" || root.Attributes["patchwright.outcome"] != "planned" || root.Attributes["patchwright.task_id"] != "delivery-plan-trace" {
		t.Errorf("root span %q with %v: want patchwright plan, planned, its task", root.Name, root.Attributes)
	}
	if want := []string{"clone", "agent"}; !slices.Equal(phases, want) {
		t.Errorf("phase spans %q, want %q", phases, want)
	}
	var calls []string
	for _, ev := range agent.Events {
		if ev.Name == "tool call" {
			calls = append(calls, fmt.Sprintf("%v/%v", ev.Attributes["patchwright.tool"], ev.Attributes["patchwright.tool_error"]))
		}
	}
	if want := []string{"<nil>/not_found", "read_file/<nil>", "submit_plan/<nil>"}; !slices.Equal(calls, want) {
		t.Errorf("tool call events (tool/error) %q, want %q", calls, want)
	}
	checkNoText(t, spans, "helo", "Replace helo", "trailing newline", "greeting.txt")
}
