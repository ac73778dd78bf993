package outcomes

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/runstore"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// states is GitHub's state of each pull request by number, counting
// reads: a seam of our own (Source), the wire is tested in metrics_test.
type states struct {
	mu    sync.Mutex
	by    map[int]githubapi.PullState
	reads map[int]int
}

func (s *states) PullRequestState(_ context.Context, pr tasks.Issue) (githubapi.PullState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads[pr.Number]++
	return s.by[pr.Number], nil
}

func checkEnv(t *testing.T) (*Check, *states, *time.Time, *miniredis.Miniredis) {
	t.Helper()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { rdb.Close() })
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	st := &Store{Redis: rdb, Keep: runstore.Keep{Clock: func() time.Time { return now }, Retention: 10 * 24 * time.Hour}}
	gh := &states{by: map[int]githubapi.PullState{}, reads: map[int]int{}}
	return &Check{Classifier: &Classifier{GitHub: gh, Store: st, AppLogin: app}}, gh, &now, mr
}

var repo = tasks.Issue{InstallationID: 11, Owner: "acme", Repo: "widgets"}

func note(t *testing.T, c *Check, issue, pr int) {
	t.Helper()
	i := repo
	i.Number = issue
	usd := 0.4
	if err := c.Classifier.Store.NoteRun(context.Background(), i, pr, "m", &usd); err != nil {
		t.Fatal(err)
	}
}

// A merged pull request whose close event never came and one still open
// are classified by the pass once they are due, by one of two workers.
func TestCheckClassifiesMissedAndOpen(t *testing.T) {
	c, gh, now, _ := checkEnv(t)
	ctx := context.Background()
	opened := *now
	gh.by[20] = githubapi.PullState{State: "closed", Merged: true, HeadRef: "agent/issue-1", CreatedAt: opened, ClosedAt: opened.Add(time.Hour), CommitAuthors: []string{app}}
	gh.by[21] = githubapi.PullState{State: "open", HeadRef: "agent/issue-2", CreatedAt: opened}
	note(t, c, 1, 20)
	note(t, c, 2, 21)
	if n, err := c.Pass(ctx); err != nil || n != 0 {
		t.Fatalf("before they are due: %d %v, want nothing checked", n, err)
	}
	*now = now.Add(DefaultCheckAfter)
	other := &Check{Classifier: c.Classifier}
	var wg sync.WaitGroup
	total := make([]int, 2)
	for i, w := range []*Check{c, other} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := w.Pass(ctx)
			if err != nil {
				t.Error(err)
			}
			total[i] = n
		}()
	}
	wg.Wait()
	if total[0]+total[1] != 2 || gh.reads[20] != 1 || gh.reads[21] != 1 {
		t.Fatalf("two workers classified %v, GitHub reads %v: want each pull request once", total, gh.reads)
	}
	recs, _, err := c.Classifier.Store.All(ctx)
	if err != nil || len(recs) != 2 {
		t.Fatalf("records %v %v", recs, err)
	}
	pending, _ := c.Classifier.Store.Redis.ZRangeWithScores(ctx, PendingKey, 0, -1).Result()
	if len(pending) != 1 || pending[0].Member != "11/acme/widgets#21" || int64(pending[0].Score) != now.Add(DefaultCheckAfter).UnixMilli() {
		t.Fatalf("pending %v: want only the open one, due after another period", pending)
	}
	if n, _ := c.Pass(ctx); n != 0 {
		t.Fatalf("the same period again checked %d", n)
	}
}

// Outcome records, run notes, the newest pull request and pending
// checks go with the retention after their last write.
func TestOutcomeRetention(t *testing.T) {
	c, gh, now, _ := checkEnv(t)
	ctx := context.Background()
	st := c.Classifier.Store
	gh.by[20] = githubapi.PullState{State: "closed", HeadRef: "agent/issue-1", CreatedAt: *now, ClosedAt: *now}
	note(t, c, 1, 20)
	if _, err := c.Classifier.Classify(ctx, tasks.Issue{InstallationID: 11, Owner: "acme", Repo: "widgets", Number: 20}); err != nil {
		t.Fatal(err)
	}
	*now = now.Add(9 * 24 * time.Hour)
	note(t, c, 2, 30) // fresh: stays
	*now = now.Add(2 * 24 * time.Hour)
	recs, _, err := st.All(ctx)
	if err != nil || len(recs) != 0 {
		t.Fatalf("after the retention: %v %v, want no record", recs, err)
	}
	for key, want := range map[string]int64{Key: 0, RunsKey: 2, LatestKey: 1} {
		if n, _ := st.Redis.HLen(ctx, key).Result(); n != want {
			t.Errorf("%s holds %d fields, want %d", key, n, want)
		}
	}
	if n, _ := st.Redis.ZCard(ctx, PendingKey).Result(); n != 1 {
		t.Errorf("pending holds %d, want the fresh pull request only", n)
	}
}

func TestCheckDropsBadPending(t *testing.T) {
	c, _, now, _ := checkEnv(t)
	ctx := context.Background()
	st := c.Classifier.Store
	for _, m := range []string{"x", "0/a/b#1", "11/acme#2", "11/a/b#-1", "11/a/b/c#3"} {
		st.Redis.ZAdd(ctx, PendingKey, redis.Z{Score: float64(now.UnixMilli()), Member: m})
	}
	if n, err := c.Pass(ctx); err != nil || n != 0 {
		t.Fatalf("Pass = %d %v", n, err)
	}
	if n, _ := st.Redis.ZCard(ctx, PendingKey).Result(); n != 0 {
		t.Fatalf("%d bad members left", n)
	}
}
