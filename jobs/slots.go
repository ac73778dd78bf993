package jobs

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/redis/go-redis/v9"
)

// Limits are the concurrency limits every worker shares through Redis: at
// most Installation agent jobs of one installation run at once, and at
// most Repo of one repository. Zero or less is no limit.
type Limits struct {
	Installation int
	Repo         int
}

// SlotTTL ends a slot whose worker died without giving it back; a running
// job renews its slot every SlotRenew (Queue.TakeSlot again). A task run
// again (after a crash, by another worker) takes its own slot over at once.
const (
	SlotTTL   = 3 * time.Minute
	SlotRenew = time.Minute
)

// Slot names the limit a job waits on, for its log line and its retry's
// error: "installation 42" or "repository octo/hello".
type Slot string

// slotScript takes task ARGV[1] a slot in the sorted sets KEYS[1] (the
// installation's) and KEYS[2] (the repository's), whose scores are the
// slots' expiries in Unix milliseconds: ARGV[2] now, ARGV[3] the new
// expiry, ARGV[4] and ARGV[5] the limits (0: none). A task already holding
// a slot keeps it. It returns 0 when taken, 1 or 2 for the set that is
// full.
var slotScript = redis.NewScript(`
for i = 1, 2 do
	redis.call("ZREMRANGEBYSCORE", KEYS[i], "-inf", ARGV[2])
end
local held = redis.call("ZSCORE", KEYS[1], ARGV[1]) and redis.call("ZSCORE", KEYS[2], ARGV[1])
if not held then
	for i = 1, 2 do
		local limit = tonumber(ARGV[3 + i])
		if limit > 0 and redis.call("ZCARD", KEYS[i]) >= limit then
			return i
		end
	end
end
for i = 1, 2 do
	redis.call("ZADD", KEYS[i], ARGV[3], ARGV[1])
	redis.call("PEXPIREAT", KEYS[i], ARGV[3])
end
return 0`)

// TakeSlot takes a slot for the agent job taskID of issue under l, in one
// script, or renews the one it holds for another SlotTTL. full is "" when
// it was taken, else the limit that is reached; the job should wait and
// try again (ReleaseSlot frees a slot).
func (q *Queue) TakeSlot(ctx context.Context, issue tasks.Issue, taskID string, l Limits) (full Slot, err error) {
	now := time.Now()
	keys := []string{installationSlotsKey(issue), repoSlotsKey(issue)}
	n, err := slotScript.Run(ctx, q.rdb, keys, taskID, now.UnixMilli(), now.Add(SlotTTL).UnixMilli(), l.Installation, l.Repo).Int()
	if err != nil {
		return "", fmt.Errorf("take a slot for %s: %w", issue, err)
	}
	switch n {
	case 0:
		return "", nil
	case 1:
		return Slot("installation " + strconv.FormatInt(issue.InstallationID, 10)), nil
	}
	return Slot("repository " + strings.ToLower(issue.Owner+"/"+issue.Repo)), nil
}

// ReleaseSlot gives taskID's slot back; a slot it does not hold is left
// alone.
func (q *Queue) ReleaseSlot(ctx context.Context, issue tasks.Issue, taskID string) error {
	err := q.rdb.ZRem(ctx, installationSlotsKey(issue), taskID).Err()
	if err == nil {
		err = q.rdb.ZRem(ctx, repoSlotsKey(issue), taskID).Err()
	}
	if err != nil {
		return fmt.Errorf("release the slot of %s: %w", issue, err)
	}
	return nil
}

func installationSlotsKey(i tasks.Issue) string {
	return KeyPrefix + "slots:installation:" + strconv.FormatInt(i.InstallationID, 10)
}

func repoSlotsKey(i tasks.Issue) string {
	return KeyPrefix + "slots:repo:" + strings.ToLower(i.Owner+"/"+i.Repo)
}
