package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/redis/go-redis/v9"
)

// MaxUpdatesPerPush is how many of a repository's pull requests one push
// to its default branch updates at once. Each update is a run (a merge,
// a sandbox, the checks): a repository with many open agent pull requests
// would otherwise fill every worker with them at each push. The rest are
// deferred (DeferUpdate) and started one by one as jobs of the
// repository end (StartDeferredUpdate).
const MaxUpdatesPerPush = 3

// deferredKey holds a repository's deferred updates: pull request number
// → the tasks.RetryPR payload of its latest update.
func deferredKey(repo tasks.Issue) string {
	return KeyPrefix + "deferred-updates:" + strconv.FormatInt(repo.InstallationID, 10) + ":" + strings.ToLower(repo.Owner+"/"+repo.Repo)
}

// DeferUpdate keeps p, an update of a pull request to its moved base
// (p.Rebase), to be started later. One is kept per pull request: a later
// push's update replaces an earlier one that has not started, so a pull
// request is never updated twice for one wave of pushes.
func (q *Queue) DeferUpdate(ctx context.Context, p tasks.RetryPR) error {
	if p.Rebase == "" {
		return errors.New("defer update: not an update (no rebase)")
	}
	if _, err := tasks.NewRetryPRTask(p); err != nil {
		return fmt.Errorf("defer update: %w", err)
	}
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	key := deferredKey(p.Issue)
	pipe := q.rdb.TxPipeline()
	pipe.HSet(ctx, key, strconv.Itoa(p.PR), b)
	pipe.Expire(ctx, key, workedTTL)
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("defer the update of %s#%d: %w", p.Issue.Repo, p.PR, err)
	}
	return nil
}

// takeIfSame removes a deferred update only while it is the one read:
// a push that replaced it meanwhile keeps its newer one.
var takeIfSame = redis.NewScript(`
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
  return redis.call('HDEL', KEYS[1], ARGV[1])
end
return 0`)

// StartDeferredUpdate enqueues one of repo's deferred updates, lowest pull
// request number first, and forgets it once enqueued (or waiting behind
// its issue's job, or enqueued before). One whose issue is Busy (a retry
// already waits there) stays deferred for a later call. ok is false when
// none was started. The worker calls it as each agent job of the
// repository ends, so deferred updates run one after another.
func (q *Queue) StartDeferredUpdate(ctx context.Context, repo tasks.Issue) (started tasks.RetryPR, ok bool, err error) {
	key := deferredKey(repo)
	all, err := q.rdb.HGetAll(ctx, key).Result()
	if err != nil {
		return tasks.RetryPR{}, false, fmt.Errorf("read deferred updates of %s/%s: %w", repo.Owner, repo.Repo, err)
	}
	var prs []int
	for f := range all {
		if n, err := strconv.Atoi(f); err == nil {
			prs = append(prs, n)
		}
	}
	slices.Sort(prs)
	for _, n := range prs {
		field, raw := strconv.Itoa(n), all[strconv.Itoa(n)]
		var p tasks.RetryPR
		if err := json.Unmarshal([]byte(raw), &p); err != nil {
			// Not ours to run: forget it rather than fail every call.
			q.rdb.HDel(ctx, key, field)
			continue
		}
		res, err := q.EnqueueRetry(ctx, p)
		if err != nil {
			return tasks.RetryPR{}, false, err
		}
		if res.Outcome == Busy {
			continue
		}
		if err := takeIfSame.Run(ctx, q.rdb, []string{key}, field, raw).Err(); err != nil {
			return tasks.RetryPR{}, false, fmt.Errorf("forget the deferred update of %s#%d: %w", repo.Repo, n, err)
		}
		if res.Outcome == Enqueued || res.Outcome == Queued {
			return p, true, nil
		}
	}
	return tasks.RetryPR{}, false, nil
}
