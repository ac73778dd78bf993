package outcomes

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// Figures are the outcome figures of a set of records, as the runs
// dashboard shows them above its list.
type Figures struct {
	// States counts records by state.
	States map[string]int
	// Decided is merged + closed + superseded; MergeRate is merged over
	// Decided (0 while none is decided).
	Decided   int
	MergeRate float64
	// MergedNoHumanCommit and MergedNoHumanReview count merged pull
	// requests no person committed to or reviewed.
	MergedNoHumanCommit, MergedNoHumanReview int
	// MedianTimeToMerge is over merged pull requests with both times; 0
	// for none.
	MedianTimeToMerge time.Duration
	// CostPerMerged is the mean cost of merged pull requests whose cost is
	// known; CostKnown is how many those are.
	CostPerMerged float64
	CostKnown     int
}

// Summarize computes recs' figures with the same rules /metrics uses.
func Summarize(recs []Record) Figures {
	g := &group{states: map[string]int{}}
	for _, r := range recs {
		g.add(r)
	}
	f := Figures{States: g.states, MergedNoHumanCommit: g.noCommit, MergedNoHumanReview: g.noReview, CostKnown: g.costN}
	merged := g.states[StateMerged]
	f.Decided = merged + g.states[StateClosed] + g.states[StateSuperseded]
	if f.Decided > 0 {
		f.MergeRate = float64(merged) / float64(f.Decided)
	}
	if g.costN > 0 {
		f.CostPerMerged = g.costSum / float64(g.costN)
	}
	if len(g.ttm) > 0 {
		slices.Sort(g.ttm)
		mid := g.ttm[len(g.ttm)/2]
		if len(g.ttm)%2 == 0 {
			mid = (g.ttm[len(g.ttm)/2-1] + mid) / 2
		}
		f.MedianTimeToMerge = time.Duration(mid * float64(time.Second))
	}
	return f
}

// Lookup reads the records of prs (Installation, Repo and PR set), in
// order; a pull request with no record (or one that does not decode) has
// an empty State.
func (s *Store) Lookup(ctx context.Context, prs []Record) ([]Record, error) {
	if len(prs) == 0 {
		return nil, nil
	}
	fields := make([]string, len(prs))
	for i, p := range prs {
		fields[i] = p.field()
	}
	vals, err := s.Redis.HMGet(ctx, Key, fields...).Result()
	if err != nil {
		return nil, fmt.Errorf("read outcomes: %w", err)
	}
	out := make([]Record, len(prs))
	for i, v := range vals {
		text, _ := v.(string)
		if text == "" || json.Unmarshal([]byte(text), &out[i]) != nil {
			out[i] = Record{Installation: prs[i].Installation, Repo: prs[i].Repo, PR: prs[i].PR}
		}
	}
	return out, nil
}
