package outcomes

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/patchwright/patchwright/jobs/tasks"
)

// PendingKey is the Redis sorted set of agent pull requests not yet
// decided (no record, or still open), scored by when the periodic check
// is next due (Unix milliseconds). NoteRun adds a pull request; a merged,
// closed or superseded record removes it.
const PendingKey = "patchwright:outcomes:pending"

// Check defaults.
const (
	// DefaultCheckAfter is how long a pull request waits between two
	// periodic checks: after it was published, and after each check that
	// found it still open.
	DefaultCheckAfter = 24 * time.Hour
	// DefaultCheckBatch is how many pull requests one pass checks at most;
	// the rest are due at the next pass.
	DefaultCheckBatch = 200
)

// claimScript takes member ARGV[1] of KEYS[1] when it is due (score at
// most ARGV[2]) by moving it to ARGV[3]: of several workers making the
// pass, one checks each pull request per period.
var claimScript = redis.NewScript(`
local due = redis.call("ZSCORE", KEYS[1], ARGV[1])
if due and tonumber(due) <= tonumber(ARGV[2]) then
	redis.call("ZADD", KEYS[1], ARGV[3], ARGV[1])
	return 1
end
return 0`)

// Check is the periodic check of agent pull requests: those published
// DefaultCheckAfter ago or more and not yet decided are classified from
// GitHub's state, so a pull request still open is counted as open and
// one whose close event was missed is counted as merged or closed.
// Every worker may make the pass (githubjob.Stale.Run makes it with the
// stale pass); Redis claims keep each check to one per period.
type Check struct {
	Classifier *Classifier
	// Batch bounds one pass; default DefaultCheckBatch.
	Batch int
}

// Pass prunes what the retention let go, then classifies the due pull
// requests this worker claims, and returns how many it classified.
func (c *Check) Pass(ctx context.Context) (int, error) {
	st := c.Classifier.Store
	if _, err := st.prune(ctx); err != nil {
		return 0, err
	}
	now := st.Now()
	batch := int64(c.Batch)
	if batch <= 0 {
		batch = DefaultCheckBatch
	}
	due, err := st.Redis.ZRangeByScore(ctx, PendingKey, &redis.ZRangeBy{Min: "-inf",
		Max: strconv.FormatInt(now.UnixMilli(), 10), Count: batch}).Result()
	if err != nil {
		return 0, fmt.Errorf("read pending outcomes: %w", err)
	}
	var errs []error
	n := 0
	for _, f := range due {
		did, err := c.one(ctx, f, now)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f, err))
		}
		if did {
			n++
		}
	}
	return n, errors.Join(errs...)
}

// one claims and classifies the pull request of field f; a field that
// does not name one is dropped.
func (c *Check) one(ctx context.Context, f string, now time.Time) (bool, error) {
	st := c.Classifier.Store
	pr, ok := parseField(f)
	if !ok {
		return false, st.Redis.ZRem(ctx, PendingKey, f).Err()
	}
	next := now.Add(DefaultCheckAfter).UnixMilli()
	won, err := claimScript.Run(ctx, st.Redis, []string{PendingKey}, f, now.UnixMilli(), next).Int()
	if err != nil || won == 0 {
		return false, err
	}
	if _, err := c.Classifier.Classify(ctx, pr); err != nil {
		return false, err // due again after the period
	}
	return true, nil
}

// parseField is fieldOf's inverse: "inst/owner/name#n".
func parseField(f string) (tasks.Issue, bool) {
	head, num, ok := strings.Cut(f, "#")
	inst, repo, ok2 := strings.Cut(head, "/")
	owner, name, ok3 := strings.Cut(repo, "/")
	id, err := strconv.ParseInt(inst, 10, 64)
	n, err2 := strconv.Atoi(num)
	if !ok || !ok2 || !ok3 || err != nil || err2 != nil || id <= 0 || n <= 0 || owner == "" || name == "" || strings.Contains(name, "/") {
		return tasks.Issue{}, false
	}
	return tasks.Issue{InstallationID: id, Owner: owner, Repo: name, Number: n}, true
}
