package jobs

import (
	"context"
	"testing"
	"time"
)

// A meaning is held by the first delivery that claims it, for meaningTTL;
// the same delivery claims it again (a redelivery); only its holder
// releases it.
func TestClaimMeaning(t *testing.T) {
	rdb := testRedis(t)
	q := NewQueue(rdb)
	ctx := context.Background()
	const key = KeyPrefix + "meaning:test"
	for _, c := range []struct{ id, want string }{{"d-1", "d-1"}, {"d-1", "d-1"}, {"d-2", "d-1"}} {
		got, err := q.ClaimMeaning(ctx, key, c.id)
		if err != nil || got != c.want {
			t.Fatalf("ClaimMeaning(%s) = %q, %v; want %q", c.id, got, err, c.want)
		}
	}
	if ttl := rdb.PTTL(ctx, key).Val(); ttl <= meaningTTL-time.Minute || ttl > meaningTTL {
		t.Errorf("TTL %v, want about %v", ttl, meaningTTL)
	}
	if err := q.ReleaseMeaning(ctx, key, "d-2"); err != nil {
		t.Fatal(err)
	}
	if got, _ := q.ClaimMeaning(ctx, key, "d-3"); got != "d-1" {
		t.Fatalf("a release by a delivery that does not hold the meaning freed it: holder %q", got)
	}
	if err := q.ReleaseMeaning(ctx, key, "d-1"); err != nil {
		t.Fatal(err)
	}
	if got, _ := q.ClaimMeaning(ctx, key, "d-3"); got != "d-3" {
		t.Fatalf("after its holder released it: holder %q, want d-3", got)
	}
}
