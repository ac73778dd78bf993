package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The audit log: every command and decision (a trigger accepted or
// refused, a plan approved, a note, a stop, a retry, a rebase, a CI fix,
// a pause, a pull request opened), appended to one Redis stream that
// `patchwright audit export` reads back as JSON lines. It is capped in
// length and trimmed by age on every append, so it never outgrows Redis.
var auditKey = KeyPrefix + "audit"

// Audit defaults.
const (
	// defaultAuditRetention is how long entries are kept.
	defaultAuditRetention = 90 * 24 * time.Hour
	// auditMaxLen caps the stream (about 100 MB at a few hundred bytes an
	// entry), whatever the retention: a flood is trimmed, oldest first.
	auditMaxLen = 300_000
)

// AuditEntry is one audited act. Actor is a GitHub login, or the
// operator's name for a command line act; Scope is a pause's, or the
// policy that applied.
type AuditEntry struct {
	Time         time.Time `json:"time"`
	Actor        string    `json:"actor"`
	Action       string    `json:"action"`
	Installation int64     `json:"installation,omitempty"`
	Repo         string    `json:"repo,omitempty"` // owner/name
	Issue        int       `json:"issue,omitempty"`
	PR           int       `json:"pr,omitempty"`
	Scope        string    `json:"scope,omitempty"`
	// Result is what was decided ("enqueued", "refused: no write
	// permission", …); Delivery the webhook delivery that asked.
	Result   string `json:"result,omitempty"`
	Delivery string `json:"delivery,omitempty"`
}

// Audit appends e (its Time now when zero) and trims entries older than
// retention (defaultAuditRetention when 0).
func (q *Queue) Audit(ctx context.Context, e AuditEntry, retention time.Duration) error {
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	if retention <= 0 {
		retention = defaultAuditRetention
	}
	raw, err := json.Marshal(e)
	if err != nil {
		return err
	}
	// Stream IDs are append times (Redis's clock in ms): trim by now.
	minID := strconv.FormatInt(time.Now().Add(-retention).UnixMilli(), 10)
	pipe := q.rdb.Pipeline()
	pipe.XAdd(ctx, &redis.XAddArgs{Stream: auditKey, MaxLen: auditMaxLen, Approx: true, Values: []any{"e", raw}})
	pipe.XTrimMinID(ctx, auditKey, minID)
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("audit %s by %s: %w", e.Action, e.Actor, err)
	}
	return nil
}

// AuditFilter selects entries for an export: since (zero: all kept) and
// one repository (owner/name, any case; "": all).
type AuditFilter struct {
	Since time.Time
	Repo  string
}

// AuditExport calls each for the entries f selects, oldest first, reading
// the stream in pages so a large log is never held whole.
func (q *Queue) AuditExport(ctx context.Context, f AuditFilter, each func(AuditEntry) error) error {
	start := "-"
	if !f.Since.IsZero() {
		start = strconv.FormatInt(f.Since.UnixMilli(), 10)
	}
	for {
		msgs, err := q.rdb.XRangeN(ctx, auditKey, start, "+", 500).Result()
		if err != nil {
			return fmt.Errorf("read the audit log: %w", err)
		}
		for _, m := range msgs {
			var e AuditEntry
			raw, _ := m.Values["e"].(string)
			if err := json.Unmarshal([]byte(raw), &e); err != nil {
				return fmt.Errorf("audit entry %s: %w", m.ID, err)
			}
			// The stream's IDs are append times; an entry's own time may
			// be earlier.
			if e.Time.Before(f.Since) || (f.Repo != "" && !strings.EqualFold(e.Repo, f.Repo)) {
				continue
			}
			if err := each(e); err != nil {
				return err
			}
		}
		if len(msgs) < 500 {
			return nil
		}
		start = "(" + msgs[len(msgs)-1].ID
	}
}
