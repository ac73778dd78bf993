package jobs

import (
	"context"
	"testing"
	"time"

	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/redis/go-redis/v9"
)

func TestSlots(t *testing.T) {
	ctx := context.Background()
	rdb := testRedis(t)
	q := NewQueue(rdb)
	a1 := tasks.Issue{InstallationID: 7, Owner: "Org", Repo: "A", Number: 1}
	a2 := tasks.Issue{InstallationID: 7, Owner: "org", Repo: "a", Number: 2} // same repository, other case
	b1 := tasks.Issue{InstallationID: 7, Owner: "org", Repo: "b", Number: 1}
	c1 := tasks.Issue{InstallationID: 8, Owner: "other", Repo: "c", Number: 1}
	take := func(i tasks.Issue, id string, l Limits, want Slot) {
		t.Helper()
		full, err := q.TakeSlot(ctx, i, id, l)
		if err != nil || full != want {
			t.Fatalf("TakeSlot(%s, %s, %+v) = %q, %v; want %q", i, id, l, full, err, want)
		}
	}
	l := Limits{Installation: 2, Repo: 1}
	take(a1, "t1", l, "")
	take(a1, "t1", l, "") // the holder again: a renewal, or its re-run
	take(a2, "t2", l, "repository org/a")
	take(b1, "t3", l, "")
	take(b1, "t4", Limits{Installation: 2}, "installation 7")
	take(c1, "t5", l, "") // another installation is not affected
	take(a2, "t2", Limits{Installation: -1, Repo: -1}, "")

	if err := q.ReleaseSlot(ctx, a2, "t2"); err != nil {
		t.Fatal(err)
	}
	if err := q.ReleaseSlot(ctx, a1, "t1"); err != nil {
		t.Fatal(err)
	}
	if err := q.ReleaseSlot(ctx, a1, "not-held"); err != nil {
		t.Fatal(err)
	}
	take(a2, "t6", l, "")

	// A slot whose worker died (not renewed) lapses.
	for _, k := range []string{installationSlotsKey(a2), repoSlotsKey(a2)} {
		if err := rdb.ZAddXX(ctx, k, redis.Z{Score: float64(time.Now().Add(-time.Second).UnixMilli()), Member: "t6"}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	take(a1, "t7", l, "")
	if n, _ := rdb.ZCard(ctx, repoSlotsKey(a1)).Result(); n != 1 {
		t.Errorf("repository slots after a lapse: %d, want 1", n)
	}
	if ttl := rdb.PTTL(ctx, repoSlotsKey(a1)).Val(); ttl <= 0 || ttl > SlotTTL {
		t.Errorf("slot set TTL %v, want at most %v: the keys go away with their slots", ttl, SlotTTL)
	}
}
