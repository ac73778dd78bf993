package budget

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/patchwright/patchwright/jobs/redistest"
)

// Two jobs start at once against a repository cap that fits one run's
// cap: one holds it, the other is refused with the cap's sentence, and
// the winner's settlement counts its real cost and frees the rest.
func TestConcurrentRunsCannotOverspend(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	rdb := redisFor(t)
	s := &Store{Redis: rdb, Caps: Caps{Repository: 1.5}, Now: func() time.Time { return now }}
	const runs = 8
	errs := make([]error, runs)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			// Each store is its own client of the same Redis, as two
			// workers are.
			w := &Store{Redis: rdb, Caps: s.Caps, Now: s.Now}
			errs[i] = w.Reserve(ctx, issueA, fmt.Sprintf("task-%d", i), 1)
		}()
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, err := range errs {
		if err == nil {
			if winner >= 0 {
				t.Fatalf("tasks %d and %d both hold $1 of a $1.50 cap", winner, i)
			}
			winner = i
			continue
		}
		r, ok := AsRefusal(err)
		if !ok || r.Scope != "repository" || r.ReservedUSD != 1 || r.SpentUSD != 0 {
			t.Fatalf("task %d: %v, want a refusal naming the $1 held", i, err)
		}
		msg := r.Error()
		if !strings.Contains(msg, "monthly model budget of $1.50 is spent or held") || !strings.Contains(msg, "$1.00 held by runs still going") ||
			!strings.Contains(msg, "resets on 2027-01-01") {
			t.Errorf("refusal %q does not say the cap, the hold and the reset", msg)
		}
	}
	if winner < 0 {
		t.Fatal("no run started")
	}
	if _, repo, err := s.Reserved(ctx, issueA); err != nil || repo != 1 {
		t.Fatalf("held %v, %v; want 1", repo, err)
	}
	task := fmt.Sprintf("task-%d", winner)
	if err := s.Settle(ctx, issueA, task, 0.25); err != nil {
		t.Fatal(err)
	}
	if _, repo, err := s.Reserved(ctx, issueA); err != nil || repo != 0 {
		t.Errorf("held after the settlement: %v, %v", repo, err)
	}
	if _, repo, err := s.Spent(ctx, issueA); err != nil || repo != 0.25 {
		t.Errorf("spent %v, %v; want the real cost 0.25", repo, err)
	}
	// Settling twice (a handler that ran its deferred settlement after the
	// sweeper) counts once.
	if err := s.Settle(ctx, issueA, task, 0.25); err != nil {
		t.Fatal(err)
	}
	if _, repo, _ := s.Spent(ctx, issueA); repo != 0.5 {
		// Settle of a task with no hold counts like Add: the second call
		// is the caller's to avoid, and this says what it costs.
		t.Errorf("spent %v after a second settlement, want 0.5", repo)
	}
	// $1 fits again in what is left.
	if err := s.Reserve(ctx, issueA, "task-next", 1); err != nil {
		t.Errorf("after the settlement, a run fits again: %v", err)
	}
}

// A run whose worker died is settled at its hold by the sweeper (its cost
// is unknown, its cap bounds it); one that asynq runs again under the same
// task settles the dead attempt's hold the same way when it reserves.
func TestDeadRunsAreSettledAtTheirHold(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 31, 23, 0, 0, 0, time.UTC)
	s := &Store{Redis: redisFor(t), Caps: Caps{Installation: 10}, Now: func() time.Time { return now }}
	if err := s.Reserve(ctx, issueA, "dead", 2); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Hour) // the sweep runs in January
	if err := s.SettleAbandoned(ctx, issueA, "dead"); err != nil {
		t.Fatal(err)
	}
	now = now.Add(-2 * time.Hour)
	inst, _, err := s.Spent(ctx, issueA)
	held, _, rerr := s.Reserved(ctx, issueA)
	if err != nil || rerr != nil || inst != 2 || held != 0 {
		t.Fatalf("December after the sweep: spent %v held %v (%v, %v); want 2 spent, nothing held", inst, held, err, rerr)
	}
	if err := s.SettleAbandoned(ctx, issueA, "dead"); err != nil {
		t.Fatal(err)
	}
	if inst, _, _ := s.Spent(ctx, issueA); inst != 2 {
		t.Errorf("a second sweep counted again: %v", inst)
	}

	if err := s.Reserve(ctx, issueA, "again", 3); err != nil {
		t.Fatal(err)
	}
	if err := s.Reserve(ctx, issueA, "again", 3); err != nil {
		t.Fatal(err)
	}
	inst, _, _ = s.Spent(ctx, issueA)
	held, _, _ = s.Reserved(ctx, issueA)
	if inst != 5 || held != 3 {
		t.Errorf("after a task reserved twice: spent %v held %v; want the first hold counted (5) and one held (3)", inst, held)
	}
}

func TestReserveRefusesBadInput(t *testing.T) {
	s := &Store{Redis: redisFor(t), Caps: Caps{Repository: 1}}
	for _, c := range []struct {
		task string
		usd  float64
	}{{"", 1}, {"t", -1}} {
		if err := s.Reserve(context.Background(), issueA, c.task, c.usd); err == nil || !strings.Contains(err.Error(), "a task and a non-negative amount are required") {
			t.Errorf("task %q, $%v: %v", c.task, c.usd, err)
		}
	}
}

func redisFor(t *testing.T) *redis.Client { return redistest.Client(t, testRedisDB) }
