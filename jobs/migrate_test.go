package jobs

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A lock an older version took (under the name without the hash tag)
// still holds the issue after the upgrade's migration, with its TTL; run
// records stay where they are, and a newer key is never overwritten.
func TestMigrateKeys(t *testing.T) {
	ctx := context.Background()
	rdb := testRedis(t)
	q := NewQueue(rdb)
	mustOutcome(t, q.EnqueueSolve, solve("a"), Enqueued)
	// What the older version left: every key of ours under the old name.
	keys, err := rdb.Keys(ctx, KeyPrefix+"*").Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("keys %v, %v", keys, err)
	}
	for _, k := range keys {
		if err := rdb.Rename(ctx, k, legacyPrefix+strings.TrimPrefix(k, KeyPrefix)).Err(); err != nil {
			t.Fatal(err)
		}
	}
	rdb.Set(ctx, legacyPrefix+"run:r1", "record", time.Hour)
	rdb.Set(ctx, legacyPrefix+"spend:2026-12:installation:1", "1.5", time.Hour)
	rdb.Set(ctx, KeyPrefix+"spend:2026-12:installation:1", "2.5", time.Hour)

	m, err := MigrateKeys(ctx, rdb)
	if err != nil {
		t.Fatal(err)
	}
	if m.Renamed != len(keys) || m.Kept != 1 {
		t.Errorf("moved %+v, want %d renamed and 1 kept", m, len(keys))
	}
	mustOutcome(t, q.EnqueueSolve, solve("b"), Busy)
	if ttl := rdb.PTTL(ctx, lockKey(issue)).Val(); ttl <= 0 || ttl > lockTTL {
		t.Errorf("lock TTL after the move = %v, want the one it had", ttl)
	}
	if v := rdb.Get(ctx, KeyPrefix+"spend:2026-12:installation:1").Val(); v != "2.5" {
		t.Errorf("newer spend key = %q, overwritten", v)
	}
	if rdb.Exists(ctx, legacyPrefix+"run:r1").Val() != 1 {
		t.Error("a run record was moved")
	}
	if again, err := MigrateKeys(ctx, rdb); err != nil || again.Renamed != 0 {
		t.Errorf("second migration %+v, %v; want nothing renamed", again, err)
	}
}
