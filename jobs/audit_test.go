package jobs

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Each append trims entries older than the retention.
func TestAuditRetention(t *testing.T) {
	ctx := context.Background()
	q := NewQueue(testRedis(t))
	// An entry appended two hours ago (its stream ID says when).
	twoHours := strconv.FormatInt(time.Now().Add(-2*time.Hour).UnixMilli(), 10) + "-0"
	if err := q.rdb.XAdd(ctx, &redis.XAddArgs{Stream: auditKey, ID: twoHours, Values: []any{"e", `{"action":"old"}`}}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := q.Audit(ctx, AuditEntry{Actor: "bob", Action: "new"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := q.AuditExport(ctx, AuditFilter{}, func(e AuditEntry) error { got = append(got, e.Action); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != "new" {
		t.Fatalf("entries %v, want only the new one", got)
	}
}
