// Package ledger records every fact of an agent run as JSON lines: model
// turns, tool calls, commands and run-level events, in order, written and
// synced as each happens. The ledger is the only source the report may
// quote, so an event that is not here did not happen as far as anyone
// reading the result is concerned.
//
// Each line is one JSON object with three envelope fields, "seq" (1, 2, …),
// "time" (RFC 3339 with nanoseconds) and "type", followed by the fields of
// the event's payload. The event types are a closed set, declared in
// events.go with their payloads: the file is the contract of ledger.jsonl.
package ledger

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Payload is the body of one event. EventType names it on the "type" field;
// the payload must marshal to a JSON object whose fields do not use the
// envelope names seq, time and type.
type Payload interface {
	EventType() string
}

// Record is one event as written or read back.
type Record struct {
	Seq  int64     `json:"seq"`
	Time time.Time `json:"time"`
	Type string    `json:"type"`
	// Raw is the whole line, envelope included, without the newline.
	Raw json.RawMessage `json:"-"`
}

// Decode unmarshals the event's fields into v, typically a pointer to the
// payload struct named by Type.
func (r Record) Decode(v any) error {
	if err := json.Unmarshal(r.Raw, v); err != nil {
		return fmt.Errorf("decode ledger event %d (%s): %w", r.Seq, r.Type, err)
	}
	return nil
}

// Payload decodes the event into the payload its Type names (events.go).
// A type outside the set yields ErrUnknownType, so a reader can skip
// events a newer writer added.
func (r Record) Payload() (Payload, error) {
	p := newPayload(r.Type)
	if p == nil {
		return nil, fmt.Errorf("ledger event %d: %w: %q", r.Seq, ErrUnknownType, r.Type)
	}
	if err := r.Decode(p); err != nil {
		return nil, err
	}
	return p, nil
}

// ErrUnknownType is returned for an event type outside the set events.go
// declares: by Record.Payload on reading, by Writer.Append on writing.
var ErrUnknownType = errors.New("unknown event type")

// Writer appends events to a ledger. It is safe for concurrent use.
type Writer struct {
	mu      sync.Mutex
	w       io.Writer
	closer  io.Closer
	now     func() time.Time
	observe func(Payload)
	seq     int64
	records []Record
	err     error
}

// Options configure a Writer. The zero value is ready to use.
type Options struct {
	// Now stamps events; nil means time.Now. Tests fix it for stable output.
	Now func() time.Time
	// Observe, when set, is called with each payload once it is recorded,
	// outside the Writer's lock and in the appending goroutine: a progress
	// display reads the same events as the report, without parsing lines.
	// It must return quickly and must not Append.
	Observe func(Payload)
}

// syncer is what *os.File offers to push a line to stable storage.
type syncer interface{ Sync() error }

// New returns a Writer over w. When w has a Sync method (an *os.File) it is
// called after every event, so a crash loses at most the event in flight.
// A nil w keeps events in memory only.
func New(w io.Writer, opts Options) *Writer {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return &Writer{w: w, now: now, observe: opts.Observe}
}

// Create creates (or truncates) the file at path and returns a Writer that
// writes to it; Close closes the file.
func Create(path string, opts Options) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create ledger: %w", err)
	}
	lw := New(f, opts)
	lw.closer = f
	return lw, nil
}

// Append records one event and returns its record. After the first write
// error every call fails with that error: a ledger with a hole in it must
// not look complete.
func (lw *Writer) Append(p Payload) (Record, error) {
	rec, err := lw.append(p)
	if err == nil && lw.observe != nil {
		lw.observe(p)
	}
	return rec, err
}

func (lw *Writer) append(p Payload) (Record, error) {
	if newPayload(p.EventType()) == nil {
		return Record{}, fmt.Errorf("ledger: %w: %q", ErrUnknownType, p.EventType())
	}
	body, err := json.Marshal(p)
	if err != nil {
		return Record{}, fmt.Errorf("ledger: encode %s event: %w", p.EventType(), err)
	}
	if len(body) < 2 || body[0] != '{' {
		return Record{}, fmt.Errorf("ledger: %s event is not a JSON object", p.EventType())
	}
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.err != nil {
		return Record{}, lw.err
	}
	rec := Record{Seq: lw.seq + 1, Time: lw.now().UTC(), Type: p.EventType()}
	line, err := join(rec, body)
	if err != nil {
		return Record{}, err
	}
	if err := lw.write(line); err != nil {
		lw.err = fmt.Errorf("ledger: write event %d (%s): %w", rec.Seq, rec.Type, err)
		return Record{}, lw.err
	}
	lw.seq = rec.Seq
	rec.Raw = line[:len(line)-1]
	lw.records = append(lw.records, rec)
	return rec, nil
}

// join splices the envelope in front of the payload's fields, so every line
// is one flat object that jq and the report read without unwrapping.
func join(rec Record, body []byte) ([]byte, error) {
	env, err := json.Marshal(rec)
	if err != nil {
		return nil, fmt.Errorf("ledger: encode envelope: %w", err)
	}
	var b bytes.Buffer
	b.Write(env[:len(env)-1])
	if inner := bytes.TrimSpace(body[1 : len(body)-1]); len(inner) > 0 {
		b.WriteByte(',')
		b.Write(inner)
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}

func (lw *Writer) write(line []byte) error {
	if lw.w == nil {
		return nil
	}
	if _, err := lw.w.Write(line); err != nil {
		return err
	}
	if s, ok := lw.w.(syncer); ok {
		return s.Sync()
	}
	return nil
}

// Records returns a copy of every event appended so far, in order.
func (lw *Writer) Records() []Record {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return append([]Record(nil), lw.records...)
}

// Close closes the file a Writer from Create writes to; otherwise it does
// nothing. Events appended after Close fail.
func (lw *Writer) Close() error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.err == nil {
		lw.err = errors.New("ledger: closed")
	}
	if lw.closer == nil {
		return nil
	}
	c := lw.closer
	lw.closer = nil
	if err := c.Close(); err != nil {
		return fmt.Errorf("close ledger: %w", err)
	}
	return nil
}
