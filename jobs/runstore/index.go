package runstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Index keys. A run's summary lives under SummaryPrefix+<run id> with the
// store's retention as its TTL; sorted sets scored by the run's start
// (Unix milliseconds) list the runs newest first: one of every run, one
// per installation and one per repository, so a filtered page reads only
// its own runs. Members older than the retention are pruned from a set
// whenever it is written or read, so the sets expire with the summaries.
const (
	SummaryPrefix  = "patchwright:runsummary:"
	IndexAll       = "patchwright:runindex:all"
	indexInstPre   = "patchwright:runindex:inst:"
	indexRepoPre   = "patchwright:runindex:repo:"
	MaxIndexWindow = 500 // most index entries one Scan reads
)

// Summary is what the runs dashboard shows of a run, written by the
// pipeline when the run starts and again when it ends.
type Summary struct {
	ID           string `json:"id"`
	Installation int64  `json:"installation"`
	Repo         string `json:"repo"` // owner/name
	Issue        int    `json:"issue"`
	Title        string `json:"title,omitempty"` // the issue's, as the run read it
	// PR is the pull request the run opened or updated; 0 for none.
	PR int `json:"pr,omitempty"`
	// Outcome is result.json's outcome; "" while the run goes on.
	Outcome string `json:"outcome,omitempty"`
	// CostUSD is the run's estimated model cost; nil when unknown (the
	// model has no price, or the run has not ended).
	CostUSD   *float64  `json:"cost_usd,omitempty"`
	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at,omitzero"`
}

// IndexKeyOfInstallation is the sorted set of inst's runs.
func IndexKeyOfInstallation(inst int64) string {
	return indexInstPre + strconv.FormatInt(inst, 10)
}

// IndexKeyOfRepo is the sorted set of repo's (owner/name, any case) runs.
func IndexKeyOfRepo(repo string) string { return indexRepoPre + strings.ToLower(repo) }

// PutSummary stores s (replacing the run's earlier summary) and indexes
// it by its StartedAt, pruning what the retention let go from the sets
// it writes.
func (st *Store) PutSummary(ctx context.Context, s Summary) error {
	if !ValidID(s.ID) {
		return fmt.Errorf("runstore: invalid run ID %q", s.ID)
	}
	if s.StartedAt.IsZero() {
		return fmt.Errorf("runstore: run %s has no start time", s.ID)
	}
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	score := float64(s.StartedAt.UnixMilli())
	cutoff := st.cutoff()
	p := st.Redis.TxPipeline()
	p.Set(ctx, SummaryPrefix+s.ID, data, st.TTL())
	for _, key := range []string{IndexAll, IndexKeyOfInstallation(s.Installation), IndexKeyOfRepo(s.Repo)} {
		p.ZAdd(ctx, key, redis.Z{Score: score, Member: s.ID})
		p.ZRemRangeByScore(ctx, key, "-inf", "("+cutoff)
		p.Expire(ctx, key, st.TTL()) // a set nobody writes again goes too
	}
	if _, err := p.Exec(ctx); err != nil {
		return fmt.Errorf("index run %s: %w", s.ID, err)
	}
	return nil
}

// cutoff is the oldest start score the retention keeps.
func (st *Store) cutoff() string {
	return strconv.FormatInt(st.Now().Add(-st.TTL()).UnixMilli(), 10)
}

// Query selects a window of an index, newest first.
type Query struct {
	// Key is the index: IndexAll, IndexKeyOfInstallation or
	// IndexKeyOfRepo.
	Key string
	// From and To bound the start time (From included, To excluded);
	// zero: unbounded.
	From, To time.Time
	// Offset skips that many entries of the window; Count is how many
	// it reads (at most MaxIndexWindow).
	Offset, Count int
}

// Scan reads q's window: the summaries of its runs newest first (runs
// whose summary expired or does not decode are left out) and how many
// index entries it read, so the next window starts at Offset+read; read
// < Count means the index has no more.
func (st *Store) Scan(ctx context.Context, q Query) (runs []Summary, read int, err error) {
	if q.Count <= 0 || q.Count > MaxIndexWindow || q.Offset < 0 {
		return nil, 0, fmt.Errorf("runstore: bad window offset %d count %d", q.Offset, q.Count)
	}
	if !strings.HasPrefix(q.Key, "patchwright:runindex:") {
		return nil, 0, fmt.Errorf("runstore: %q is not a run index", q.Key)
	}
	if err := st.Redis.ZRemRangeByScore(ctx, q.Key, "-inf", "("+st.cutoff()).Err(); err != nil {
		return nil, 0, fmt.Errorf("prune run index: %w", err)
	}
	rng := &redis.ZRangeBy{Max: "+inf", Min: "-inf", Offset: int64(q.Offset), Count: int64(q.Count)}
	if !q.To.IsZero() {
		rng.Max = "(" + strconv.FormatInt(q.To.UnixMilli(), 10)
	}
	if !q.From.IsZero() {
		rng.Min = strconv.FormatInt(q.From.UnixMilli(), 10)
	}
	ids, err := st.Redis.ZRevRangeByScore(ctx, q.Key, rng).Result()
	if err != nil || len(ids) == 0 {
		return nil, 0, wrapRead(err)
	}
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = SummaryPrefix + id
	}
	vals, err := st.Redis.MGet(ctx, keys...).Result()
	if err != nil {
		return nil, 0, wrapRead(err)
	}
	for _, v := range vals {
		var s Summary
		if text, ok := v.(string); ok && json.Unmarshal([]byte(text), &s) == nil {
			runs = append(runs, s)
		}
	}
	return runs, len(ids), nil
}

func wrapRead(err error) error {
	if err == nil || errors.Is(err, redis.Nil) {
		return nil
	}
	return fmt.Errorf("read run index: %w", err)
}
