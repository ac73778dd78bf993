// Package runstore keeps each run's record in Redis, where every replica
// reaches it: a worker on one machine writes the run, serve on another
// shows it (webhook/runpage). The data directory keeps its local copy.
//
// A record is the run's three files (ledger.jsonl, result.json, pr.md) and
// a little about it, stored as one gzip-compressed JSON value under
// KeyPrefix+<run id>, with the operator's retention as its TTL. Writing it
// again (while the run goes on, and at its end) replaces it whole and
// starts the retention again.
package runstore

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/redis/go-redis/v9"
)

// Defaults.
const (
	// DefaultRetention is how long a record stays after its last write.
	DefaultRetention = 30 * 24 * time.Hour
	// KeyPrefix prefixes every record's key.
	KeyPrefix = "patchwright:run:"
	// MaxRecordBytes caps a record before compression; a run's ledger is
	// capped long before this, so a larger one is a bug, not a run.
	MaxRecordBytes = 64 << 20
)

// The run directory's files (docs/design.md §4.1): this package owns their names;
// jobs/pipeline writes them under these names and Mirror copies them.
const (
	FileLedger = "ledger.jsonl"
	FileResult = "result.json"
	FileBody   = "pr.md"
	// FilePhases is the run's phase timings (jobs/pipeline.Timings as
	// JSON), written when the run ends.
	FilePhases = "phases.json"
)

// runFiles are a run directory's files, as a record holds them.
var runFiles = []string{FileLedger, FileResult, FileBody, FilePhases}

// Record is one run as stored.
type Record struct {
	ID string `json:"id"`
	// Repo is "owner/name" and Issue the issue number, when known.
	Repo  string `json:"repo,omitempty"`
	Issue int    `json:"issue,omitempty"`
	// Done is false while the run goes on (no result yet).
	Done      bool      `json:"done"`
	UpdatedAt time.Time `json:"updated_at"`
	Ledger    []byte    `json:"ledger,omitempty"`
	Result    []byte    `json:"result,omitempty"`
	Body      []byte    `json:"body,omitempty"`
	// Phases is FilePhases; empty until the run ended.
	Phases []byte `json:"phases,omitempty"`
}

// ErrNotFound: no record with that ID, or it expired.
var ErrNotFound = errors.New("runstore: no such run")

// idPattern is what run IDs look like; anything else never reaches Redis.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)

// ValidID reports whether id can name a run.
func ValidID(id string) bool { return idPattern.MatchString(id) && id != "." && id != ".." }

// Store reads and writes records.
type Store struct {
	Redis redis.UniversalClient
	// Keep is the retention and its clock (for UpdatedAt and Mirror's
	// retention).
	Keep
}

// Keep is how long a stored entry stays after its last write and the
// clock that counts it: the one rule for this package's records and
// summaries and for jobs/outcomes' records, which PATCHWRIGHT_RUN_RETENTION
// sets together. The zero Keep is DefaultRetention on time.Now.
type Keep struct {
	// Retention is how long an entry stays after its last write; zero
	// or less is DefaultRetention.
	Retention time.Duration
	// Clock is the clock; nil is time.Now.
	Clock func() time.Time
}

// TTL is how long an entry stays after its last write: Retention, or
// DefaultRetention.
func (k Keep) TTL() time.Duration {
	if k.Retention > 0 {
		return k.Retention
	}
	return DefaultRetention
}

// Now is Clock's time, or time.Now's.
func (k Keep) Now() time.Time {
	if k.Clock != nil {
		return k.Clock()
	}
	return time.Now()
}

// Put stores r, replacing any record with its ID, and returns the stored
// (compressed) size in bytes.
func (s *Store) Put(ctx context.Context, r Record) (int, error) {
	if !ValidID(r.ID) {
		return 0, fmt.Errorf("runstore: invalid run ID %q", r.ID)
	}
	r.UpdatedAt = s.Now().UTC()
	raw, err := json.Marshal(r)
	if err != nil {
		return 0, err
	}
	if len(raw) > MaxRecordBytes {
		return 0, fmt.Errorf("runstore: run %s is %d bytes, over %d", r.ID, len(raw), MaxRecordBytes)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(raw)
	if err := zw.Close(); err != nil {
		return 0, err
	}
	if err := s.Redis.Set(ctx, KeyPrefix+r.ID, buf.Bytes(), s.TTL()).Err(); err != nil {
		return 0, fmt.Errorf("store run %s: %w", r.ID, err)
	}
	return buf.Len(), nil
}

// Get returns the record of run id, or ErrNotFound.
func (s *Store) Get(ctx context.Context, id string) (Record, error) {
	if !ValidID(id) {
		return Record{}, ErrNotFound
	}
	b, err := s.Redis.Get(ctx, KeyPrefix+id).Bytes()
	if errors.Is(err, redis.Nil) {
		return Record{}, ErrNotFound
	}
	if err != nil {
		return Record{}, fmt.Errorf("load run %s: %w", id, err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return Record{}, fmt.Errorf("load run %s: %w", id, err)
	}
	raw, err := io.ReadAll(io.LimitReader(zr, MaxRecordBytes+1))
	if err != nil {
		return Record{}, fmt.Errorf("load run %s: %w", id, err)
	}
	if len(raw) > MaxRecordBytes {
		return Record{}, fmt.Errorf("load run %s: over %d bytes", id, MaxRecordBytes)
	}
	var r Record
	if err := json.Unmarshal(raw, &r); err != nil {
		return Record{}, fmt.Errorf("load run %s: %w", id, err)
	}
	return r, nil
}

// FromDir builds run id's record from its directory in the data directory
// (DATA_DIR/runs/<id>/). Missing files are left empty: a run that has just
// started has only part of a ledger. Done is set when result.json exists.
func FromDir(dir, id string) (Record, error) {
	r := Record{ID: id}
	for name, dst := range map[string]*[]byte{FileLedger: &r.Ledger, FileResult: &r.Result, FileBody: &r.Body, FilePhases: &r.Phases} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return Record{}, fmt.Errorf("read run %s: %w", id, err)
		}
		*dst = b
	}
	r.Done = r.Result != nil
	return r, nil
}
