package ledger

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func fixedClock() func() time.Time {
	t := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return func() time.Time {
		t = t.Add(time.Second)
		return t
	}
}

func sampleEvents() []Payload {
	return []Payload{
		&RunStart{Model: "openai:gpt-test", Limits: Limits{MaxSteps: 5}, Tools: []string{"read_file"}},
		&ModelTurn{Step: 1, Model: "openai:gpt-test", InputTokens: 100, OutputTokens: 7, StopReason: "tool_use",
			ToolCalls: []RequestedCall{{ID: "c1", Name: "run", Arguments: `{"command":"go test ./..."}`}}},
		&ToolCall{Step: 1, CallID: "c1", Tool: "run", Arguments: `{"command":"go test ./..."}`, Result: "exit 0", ResultBytes: 6},
		&Command{Step: 1, CallID: "c1", Tool: "run", CommandRecord: CommandRecord{
			Command: "go test ./...", ExitCode: 0, Duration: 2 * time.Second, Output: "ok", OutputBytes: 2,
			StdoutSHA256: "ab", StderrSHA256: "cd"}},
		&RunStop{Reason: "finished", Detail: "the model called finish", Steps: 1, Summary: "fixed"},
	}
}

func TestWriteAndReadBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.jsonl")
	lw, err := Create(path, Options{Now: fixedClock()})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range sampleEvents() {
		if _, err := lw.Append(p); err != nil {
			t.Fatalf("append %s: %v", p.EventType(), err)
		}
	}
	if err := lw.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := lw.Append(&RunStop{}); err == nil {
		t.Error("append after Close succeeded")
	}

	log, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if log.TornTail {
		t.Error("TornTail set on a complete ledger")
	}
	mem := lw.Records()
	if len(log.Records) != 5 || len(mem) != 5 {
		t.Fatalf("read %d records, memory has %d, want 5", len(log.Records), len(mem))
	}
	wantTypes := []string{TypeRunStart, TypeModelTurn, TypeToolCall, TypeCommand, TypeRunStop}
	for i, rec := range log.Records {
		if rec.Seq != int64(i+1) || rec.Type != wantTypes[i] {
			t.Errorf("record %d: seq %d type %s, want %d %s", i, rec.Seq, rec.Type, i+1, wantTypes[i])
		}
		if !bytes.Equal(rec.Raw, mem[i].Raw) {
			t.Errorf("record %d: file and memory differ:\n%s\n%s", i, rec.Raw, mem[i].Raw)
		}
		if i > 0 && !rec.Time.After(log.Records[i-1].Time) {
			t.Errorf("record %d: time %v not after previous", i, rec.Time)
		}
	}
	p, err := log.Records[3].Payload()
	if err != nil {
		t.Fatal(err)
	}
	cmd, ok := p.(*Command)
	if !ok || cmd.Command != "go test ./..." || cmd.Duration != 2*time.Second || cmd.StdoutSHA256 != "ab" {
		t.Errorf("command event read back as %#v", p)
	}
}

func TestLineIsFlatObject(t *testing.T) {
	var buf bytes.Buffer
	lw := New(&buf, Options{Now: fixedClock()})
	if _, err := lw.Append(&ToolCall{Step: 2, CallID: "x", Tool: "edit", ErrorCode: "no_match"}); err != nil {
		t.Fatal(err)
	}
	want := `{"seq":1,"time":"2026-01-02T03:04:06Z","type":"tool_call","step":2,"call_id":"x","tool":"edit","arguments":"","result":"","result_bytes":0,"error_code":"no_match","duration_ns":0}` + "\n"
	if buf.String() != want {
		t.Errorf("line:\n got %s\nwant %s", buf.String(), want)
	}
}

func TestTornTailIsDropped(t *testing.T) {
	var buf bytes.Buffer
	lw := New(&buf, Options{Now: fixedClock()})
	for _, p := range sampleEvents()[:3] {
		if _, err := lw.Append(p); err != nil {
			t.Fatal(err)
		}
	}
	full := buf.String()
	// A process that stops mid-write leaves part of the next line.
	torn := full + `{"seq":4,"time":"2026-01-02T03:04:09Z","type":"comm`
	log, err := Read(strings.NewReader(torn))
	if err != nil {
		t.Fatal(err)
	}
	if len(log.Records) != 3 || !log.TornTail {
		t.Errorf("got %d records, torn=%v; want 3, true", len(log.Records), log.TornTail)
	}
	// A complete last object without its newline is kept.
	log, err = Read(strings.NewReader(strings.TrimSuffix(full, "\n")))
	if err != nil || len(log.Records) != 3 || log.TornTail {
		t.Errorf("unterminated complete line: %d records, torn=%v, err=%v", len(log.Records), log.TornTail, err)
	}
}

func TestReadRejectsBadLedgers(t *testing.T) {
	line := func(seq int) string {
		return `{"seq":` + string(rune('0'+seq)) + `,"time":"2026-01-02T03:04:05Z","type":"run_start"}` + "\n"
	}
	cases := map[string]string{
		"garbage in the middle": line(1) + "not json\n" + line(2),
		"sequence gap":          line(1) + line(3),
		"sequence repeated":     line(1) + line(1),
		"missing type":          `{"seq":1,"time":"2026-01-02T03:04:05Z"}` + "\n",
		"not starting at one":   line(2),
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := Read(strings.NewReader(in)); err == nil {
				t.Errorf("Read accepted %q", in)
			}
		})
	}
	t.Run("empty is an empty ledger", func(t *testing.T) {
		log, err := Read(strings.NewReader(""))
		if err != nil || len(log.Records) != 0 {
			t.Errorf("got %v, %v", log, err)
		}
	})
}

type outsider struct {
	Name string `json:"name"`
}

func (*outsider) EventType() string { return "test_check" }

// TestTypesAreClosed: every declared type decodes into its own payload,
// and a type outside the set is refused on writing and skipped on reading.
func TestTypesAreClosed(t *testing.T) {
	if len(Types()) != len(types) || len(types) < 18 {
		t.Fatalf("Types() = %v", Types())
	}
	for _, typ := range Types() {
		p := newPayload(typ)
		if p == nil || p.EventType() != typ {
			t.Errorf("%s: payload %T says %q", typ, p, typeOf(p))
		}
	}
	var buf bytes.Buffer
	lw := New(&buf, Options{Now: fixedClock()})
	if _, err := lw.Append(&outsider{Name: "vet"}); !errors.Is(err, ErrUnknownType) {
		t.Errorf("appending an undeclared type: err = %v, want ErrUnknownType", err)
	}
	if _, err := lw.Append(&RunStop{Reason: "finished"}); err != nil {
		t.Fatalf("a refused type broke the writer: %v", err)
	}
	buf.WriteString(`{"seq":2,"time":"2026-01-02T03:04:05Z","type":"test_check","name":"vet"}` + "\n")
	log, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := log.Records[1].Payload(); !errors.Is(err, ErrUnknownType) {
		t.Errorf("undeclared type: err = %v, want ErrUnknownType", err)
	}
}

func typeOf(p Payload) string {
	if p == nil {
		return "nothing"
	}
	return p.EventType()
}

// TestOwnedFieldsRoundTrip: a check's fields, owned by verify, are
// written flat beside the envelope and read back without it.
func TestOwnedFieldsRoundTrip(t *testing.T) {
	fields, err := ObjectOf(map[string]any{"name": "vet", "passed": true})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	lw := New(&buf, Options{Now: fixedClock()})
	if _, err := lw.Append(&CheckEvent{Fields: fields}); err != nil {
		t.Fatal(err)
	}
	if _, err := lw.Append(&NewTestEvent{}); err != nil {
		t.Fatal(err)
	}
	want := `{"seq":1,"time":"2026-01-02T03:04:06Z","type":"check","name":"vet","passed":true}`
	if line, _, _ := strings.Cut(buf.String(), "\n"); line != want {
		t.Errorf("line = %s\nwant   %s", line, want)
	}
	log, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	p, err := log.Records[0].Payload()
	if err != nil {
		t.Fatal(err)
	}
	if got := string(p.(*CheckEvent).Fields); got != `{"name":"vet","passed":true}` {
		t.Errorf("fields read back = %s", got)
	}
	if _, err := ObjectOf([]int{1}); err == nil {
		t.Error("ObjectOf accepted an array")
	}
}

type notObject struct{}

func (notObject) EventType() string            { return "bad" }
func (notObject) MarshalJSON() ([]byte, error) { return []byte(`[1]`), nil }

func TestAppendRejectsNonObject(t *testing.T) {
	lw := New(nil, Options{})
	if _, err := lw.Append(notObject{}); err == nil {
		t.Error("a payload that is not a JSON object was accepted")
	}
	if _, err := lw.Append(&RunStart{}); err != nil {
		t.Errorf("a rejected payload broke the writer: %v", err)
	}
}

type failingWriter struct{ n int }

func (f *failingWriter) Write(p []byte) (int, error) {
	f.n++
	if f.n > 1 {
		return 0, os.ErrClosed
	}
	return len(p), nil
}

func TestWriteErrorIsSticky(t *testing.T) {
	lw := New(&failingWriter{}, Options{})
	if _, err := lw.Append(&RunStart{}); err != nil {
		t.Fatal(err)
	}
	if _, err := lw.Append(&RunStop{}); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("second append: %v", err)
	}
	if _, err := lw.Append(&RunStop{}); err == nil {
		t.Error("append after a failed write succeeded: the ledger would have a hole")
	}
	if n := len(lw.Records()); n != 1 {
		t.Errorf("memory has %d records, want 1", n)
	}
}

func TestSyncedFileSurvivesWithoutClose(t *testing.T) {
	// What a crash leaves: the file as written so far, never closed.
	path := filepath.Join(t.TempDir(), "ledger.jsonl")
	lw, err := Create(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lw.Close() })
	for _, p := range sampleEvents()[:2] {
		if _, err := lw.Append(p); err != nil {
			t.Fatal(err)
		}
	}
	log, err := ReadFile(path)
	if err != nil || len(log.Records) != 2 {
		t.Fatalf("read %d records, err %v", len(log.Records), err)
	}
	var turn ModelTurn
	if err := log.Records[1].Decode(&turn); err != nil || turn.InputTokens != 100 || turn.ToolCalls[0].Name != "run" {
		t.Errorf("decoded %+v, %v", turn, err)
	}
	var raw map[string]any
	if err := json.Unmarshal(log.Records[1].Raw, &raw); err != nil || raw["type"] != TypeModelTurn {
		t.Errorf("raw line %s", log.Records[1].Raw)
	}
}

// TestProcessStoppedMidRun runs a child process that records three events,
// starts a fourth line and exits without closing anything, as a worker
// killed mid-run would; the parent reads what it left.
func TestProcessStoppedMidRun(t *testing.T) {
	if path := os.Getenv("LEDGER_CHILD_PATH"); path != "" {
		lw, err := Create(path, Options{})
		if err != nil {
			os.Exit(3)
		}
		for _, p := range sampleEvents()[:3] {
			if _, err := lw.Append(p); err != nil {
				os.Exit(4)
			}
		}
		f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		f.WriteString(`{"seq":4,"time":"2026-01-02T03:04:09Z","type":"command","step":1,"comm`)
		os.Exit(2)
	}
	path := filepath.Join(t.TempDir(), "ledger.jsonl")
	cmd := exec.Command(os.Args[0], "-test.run=^TestProcessStoppedMidRun$")
	cmd.Env = append(os.Environ(), "LEDGER_CHILD_PATH="+path)
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("child: %v", err)
	}
	log, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(log.Records) != 3 || !log.TornTail {
		t.Fatalf("got %d records, torn=%v; want 3, true", len(log.Records), log.TornTail)
	}
	if log.Records[2].Type != TypeToolCall {
		t.Errorf("last complete event is %s", log.Records[2].Type)
	}
}
