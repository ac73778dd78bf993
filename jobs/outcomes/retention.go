package outcomes

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/patchwright/patchwright/jobs/runstore"
)

// WrittenKey is the Redis sorted set of what the outcome hashes hold,
// scored by its last write (Unix milliseconds): "pr:"+field for a pull
// request's record and run notes, "issue:"+field for an issue's newest
// pull request. Hash fields cannot expire on their own, so prune removes
// what was last written longer ago than the retention.
const WrittenKey = "patchwright:outcomes:written"

// DefaultRetention is how long an outcome stays after its last write:
// the run records' (PATCHWRIGHT_RUN_RETENTION sets both).
const DefaultRetention = runstore.DefaultRetention

// pruneBatch bounds one prune, so a scrape never waits on a large one;
// the next write or scrape takes the rest.
const pruneBatch = 500

// pruneScript removes what was written before ARGV[1] (at most ARGV[2]
// entries): a pull request's record, run notes and pending check, an
// issue's newest pull request. One script, so a record written again
// meanwhile is not removed with its old entry.
var pruneScript = redis.NewScript(`
local old = redis.call("ZRANGEBYSCORE", KEYS[1], "-inf", "(" .. ARGV[1], "LIMIT", 0, ARGV[2])
for _, m in ipairs(old) do
	local kind, f = string.match(m, "^(%a+):(.*)$")
	if kind == "pr" then
		redis.call("HDEL", KEYS[2], f)
		redis.call("HDEL", KEYS[3], f .. ":model", f .. ":cost", f .. ":unpriced")
		redis.call("ZREM", KEYS[5], f)
	elseif kind == "issue" then
		redis.call("HDEL", KEYS[4], f)
	end
	redis.call("ZREM", KEYS[1], m)
end
return #old`)

// written notes, in p, that members were written now.
func (s *Store) written(ctx context.Context, p redis.Pipeliner, members ...string) {
	score := float64(s.Now().UnixMilli())
	for _, m := range members {
		p.ZAdd(ctx, WrittenKey, redis.Z{Score: score, Member: m})
	}
}

// prune removes what the retention let go and returns how much.
func (s *Store) prune(ctx context.Context) (int, error) {
	cutoff := strconv.FormatInt(s.Now().Add(-s.TTL()).UnixMilli(), 10)
	n, err := pruneScript.Run(ctx, s.Redis, []string{WrittenKey, Key, RunsKey, LatestKey, PendingKey}, cutoff, pruneBatch).Int()
	if err != nil {
		return 0, fmt.Errorf("prune outcomes: %w", err)
	}
	return n, nil
}
