package runstore

import (
	"context"
	"slices"
	"testing"
	"time"
)

// ids is the run IDs of runs, in order.
func ids(runs []Summary) []string {
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = r.ID
	}
	return out
}

// indexed stores four runs an hour apart, the newest (d) at now.
func indexed(t *testing.T) (*Store, time.Time) {
	t.Helper()
	s, _ := newStore(t)
	now := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	s.Clock = func() time.Time { return now }
	for i, r := range []Summary{
		{ID: "a", Installation: 1, Repo: "acme/widgets", Issue: 1},
		{ID: "b", Installation: 1, Repo: "acme/gears", Issue: 2},
		{ID: "c", Installation: 2, Repo: "other/tool", Issue: 3},
		{ID: "d", Installation: 1, Repo: "Acme/Widgets", Issue: 4},
	} {
		r.StartedAt = now.Add(time.Duration(i-3) * time.Hour)
		if err := s.PutSummary(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	return s, now
}

func TestScanIndexes(t *testing.T) {
	s, now := indexed(t)
	for name, tc := range map[string]struct {
		q    Query
		want []string
		read int
	}{
		"all, newest first":         {Query{Key: IndexAll, Count: 10}, []string{"d", "c", "b", "a"}, 4},
		"an installation":           {Query{Key: IndexKeyOfInstallation(1), Count: 10}, []string{"d", "b", "a"}, 3},
		"a repository, any case":    {Query{Key: IndexKeyOfRepo("ACME/widgets"), Count: 10}, []string{"d", "a"}, 2},
		"first page":                {Query{Key: IndexAll, Count: 2}, []string{"d", "c"}, 2},
		"second page":               {Query{Key: IndexAll, Offset: 2, Count: 2}, []string{"b", "a"}, 2},
		"past the end":              {Query{Key: IndexAll, Offset: 4, Count: 2}, nil, 0},
		"from (included)":           {Query{Key: IndexAll, From: now.Add(-2 * time.Hour), Count: 10}, []string{"d", "c", "b"}, 3},
		"to (excluded)":             {Query{Key: IndexAll, To: now.Add(-time.Hour), Count: 10}, []string{"b", "a"}, 2},
		"an installation with none": {Query{Key: IndexKeyOfInstallation(3), Count: 10}, nil, 0},
	} {
		t.Run(name, func(t *testing.T) {
			runs, read, err := s.Scan(context.Background(), tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids(runs), tc.want) || read != tc.read {
				t.Fatalf("Scan = %q read %d, want %q read %d", ids(runs), read, tc.want, tc.read)
			}
		})
	}
}

// Summaries and index entries go with the retention, counted from the
// run's start for the sets and from the last write for the summaries.
func TestIndexRetention(t *testing.T) {
	s, now := indexed(t)
	ctx := context.Background()
	s.Clock = func() time.Time { return now.Add(s.TTL() - 90*time.Minute) } // a and b are now older than the retention
	runs, _, err := s.Scan(ctx, Query{Key: IndexAll, Count: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(runs); !slices.Equal(got, []string{"d", "c"}) {
		t.Fatalf("after the retention: %q, want d and c", got)
	}
	if n, _ := s.Redis.ZCard(ctx, IndexAll).Result(); n != 2 {
		t.Fatalf("index holds %d entries, want the 2 kept", n)
	}
	if ttl, _ := s.Redis.TTL(ctx, SummaryPrefix+"a").Result(); ttl <= 0 || ttl > s.TTL() {
		t.Fatalf("summary TTL %v, want the retention", ttl)
	}
}

// A summary that expired or does not decode leaves its entry out, not
// the page.
func TestScanSkipsMissingSummaries(t *testing.T) {
	s, _ := indexed(t)
	ctx := context.Background()
	s.Redis.Del(ctx, SummaryPrefix+"c")
	s.Redis.Set(ctx, SummaryPrefix+"b", "{not json", 0)
	runs, read, err := s.Scan(ctx, Query{Key: IndexAll, Count: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(runs); !slices.Equal(got, []string{"d", "a"}) || read != 4 {
		t.Fatalf("Scan = %q read %d, want d, a read 4", got, read)
	}
}

func TestIndexBadInput(t *testing.T) {
	s, mr := newStore(t)
	ctx := context.Background()
	for name, sum := range map[string]Summary{
		"bad ID":        {ID: "../x", StartedAt: time.Now()},
		"no start time": {ID: "x"},
	} {
		if err := s.PutSummary(ctx, sum); err == nil {
			t.Errorf("%s: PutSummary accepted %+v", name, sum)
		}
	}
	if keys := mr.Keys(); len(keys) != 0 {
		t.Fatalf("keys written: %q", keys)
	}
	for name, q := range map[string]Query{
		"no count":        {Key: IndexAll},
		"count too large": {Key: IndexAll, Count: MaxIndexWindow + 1},
		"negative offset": {Key: IndexAll, Count: 1, Offset: -1},
		"not an index":    {Key: KeyPrefix + "x", Count: 1},
	} {
		if _, _, err := s.Scan(ctx, q); err == nil {
			t.Errorf("%s: Scan accepted %+v", name, q)
		}
	}
}
