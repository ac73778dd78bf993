package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/redis/go-redis/v9"
)

// meaningTTL is how long a delivery's meaning is remembered (see
// webhook/replay.go). It outlives GitHub's delivery log (3 days, all a
// redelivery can reach) and the task retention that keeps delivery IDs.
const meaningTTL = 30 * 24 * time.Hour

// claimScript sets KEYS[1] to the delivery ID ARGV[1] unless it is set, and
// returns the ID it holds.
var claimScript = redis.NewScript(`
if redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then
	return ARGV[1]
end
return redis.call("GET", KEYS[1])`)

// ClaimMeaning claims a delivery's meaning (key) for delivery id and
// returns the ID of the delivery holding it: id itself when the claim is
// new or was id's already (a redelivery).
func (q *Queue) ClaimMeaning(ctx context.Context, key, id string) (string, error) {
	holder, err := claimScript.Run(ctx, q.rdb, []string{key}, id, meaningTTL.Milliseconds()).Text()
	if err != nil {
		return "", fmt.Errorf("claim delivery meaning: %w", err)
	}
	return holder, nil
}

// ClaimStrangerReply claims the one reply an issue gives people without
// write access, for delivery id: true when id holds it (a new claim, or
// id's own redelivery), false when an earlier delivery had it. The claim
// lasts meaningTTL.
func (q *Queue) ClaimStrangerReply(ctx context.Context, issue tasks.Issue, id string) (bool, error) {
	holder, err := q.ClaimMeaning(ctx, KeyPrefix+"stranger-reply:"+issueKey(issue), id)
	if err != nil {
		return false, err
	}
	return holder == id, nil
}

// ReleaseMeaning deletes key if delivery id holds it: a delivery that
// failed leaves its meaning free for the next one.
func (q *Queue) ReleaseMeaning(ctx context.Context, key, id string) error {
	if err := releaseScript.Run(ctx, q.rdb, []string{key}, id).Err(); err != nil {
		return fmt.Errorf("release delivery meaning: %w", err)
	}
	return nil
}
