package jobs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// Redis keys Patchwright keeps beside asynq's own. All start with KeyPrefix.
const (
	// KeyPrefix starts every key Patchwright writes itself.
	KeyPrefix = "patchwright:"
	// LockTTL is the safety net on an issue's active-job lock: longer than
	// every attempt of a job together (AgentMaxRetry+1 times AgentTimeout,
	// plus retry delays), so it never expires under a live job, yet a lock
	// whose job died without releasing it cannot block the issue for ever.
	// A lock whose task is finished is also cleared on the next trigger.
	LockTTL = (AgentMaxRetry+1)*AgentTimeout + time.Hour
	// WorkedTTL is how long Patchwright remembers that it worked on an issue
	// (for `/agent retry` and `/agent stop` on the issue itself).
	WorkedTTL = 90 * 24 * time.Hour
)

// Outcome is what an enqueue request came to.
type Outcome int

const (
	// Enqueued: a new task was stored.
	Enqueued Outcome = iota + 1
	// Duplicate: this delivery was enqueued before (a redelivery).
	Duplicate
	// Busy: another job for the same issue is queued or running.
	Busy
)

func (o Outcome) String() string {
	switch o {
	case Enqueued:
		return "enqueued"
	case Duplicate:
		return "duplicate"
	case Busy:
		return "busy"
	}
	return "unknown"
}

// EnqueueResult reports an enqueue request. ActiveTaskID is set for Busy.
type EnqueueResult struct {
	Outcome      Outcome
	ActiveTaskID string
}

// Queue enqueues and cancels Patchwright's jobs on asynq, keeping at most one
// active agent job per issue with a lock key per issue whose value is the
// holding task's ID. It is safe for concurrent use.
type Queue struct {
	rdb    redis.UniversalClient
	client *asynq.Client
	insp   *asynq.Inspector
}

// NewQueue returns a Queue on rdb. Close releases what it opened; rdb stays
// open (the caller owns it).
func NewQueue(rdb redis.UniversalClient) *Queue {
	return &Queue{
		rdb:    rdb,
		client: asynq.NewClientFromRedisClient(rdb),
		insp:   asynq.NewInspectorFromRedisClient(rdb),
	}
}

// Close closes the asynq client and inspector (not the Redis client).
func (q *Queue) Close() error {
	return errors.Join(q.client.Close(), q.insp.Close())
}

// Ping reports whether Redis answers.
func (q *Queue) Ping(ctx context.Context) error {
	if err := q.rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("ping redis: %w", err)
	}
	return nil
}

// EnqueueSolve enqueues a TypeSolveIssue task unless a job for the issue is
// active (Busy) or the delivery was seen (Duplicate).
func (q *Queue) EnqueueSolve(ctx context.Context, p SolveIssue) (EnqueueResult, error) {
	task, err := NewSolveIssueTask(p)
	if err != nil {
		return EnqueueResult{}, err
	}
	return q.enqueueExclusive(ctx, p.Issue, task, p.DeliveryID)
}

// EnqueueRetry enqueues a TypeRetryPR task like EnqueueSolve; the lock is
// the one of p.Issue, the issue the pull request belongs to.
func (q *Queue) EnqueueRetry(ctx context.Context, p RetryPR) (EnqueueResult, error) {
	task, err := NewRetryPRTask(p)
	if err != nil {
		return EnqueueResult{}, err
	}
	return q.enqueueExclusive(ctx, p.Issue, task, p.DeliveryID)
}

// EnqueueReply enqueues a reply comment. A second reply for the same
// delivery is a Duplicate.
func (q *Queue) EnqueueReply(ctx context.Context, p Reply) (EnqueueResult, error) {
	task, err := NewReplyTask(p)
	if err != nil {
		return EnqueueResult{}, err
	}
	_, err = q.client.EnqueueContext(ctx, task)
	switch {
	case err == nil:
		return EnqueueResult{Outcome: Enqueued}, nil
	case errors.Is(err, asynq.ErrTaskIDConflict):
		return EnqueueResult{Outcome: Duplicate}, nil
	}
	return EnqueueResult{}, fmt.Errorf("enqueue reply on %s: %w", p.Issue, err)
}

// enqueueExclusive takes the issue's lock (SET NX, value = task ID) and
// enqueues the task. Crash cases it covers:
//   - enqueue fails: the lock is released again, so no lock without a task;
//   - the release itself fails (Redis gone): the lock holds the delivery ID,
//     so the redelivery of the same delivery takes it over;
//   - the worker died without releasing: a lock whose task is gone,
//     finished, or cancelled and not running is cleared here;
//   - otherwise LockTTL ends it.
func (q *Queue) enqueueExclusive(ctx context.Context, issue Issue, task *asynq.Task, id string) (EnqueueResult, error) {
	key := lockKey(issue)
	// Two rounds: the second follows clearing a stale lock (or a lock that
	// vanished between SET NX and GET).
	for range 2 {
		took, err := q.rdb.SetNX(ctx, key, id, LockTTL).Result()
		if err != nil {
			return EnqueueResult{}, fmt.Errorf("lock %s: %w", issue, err)
		}
		if !took {
			holder, err := q.rdb.Get(ctx, key).Result()
			if errors.Is(err, redis.Nil) {
				continue
			}
			if err != nil {
				return EnqueueResult{}, fmt.Errorf("read lock of %s: %w", issue, err)
			}
			if holder != id {
				stale, err := q.stale(ctx, holder)
				if err != nil {
					return EnqueueResult{}, err
				}
				if !stale {
					return EnqueueResult{Outcome: Busy, ActiveTaskID: holder}, nil
				}
				if err := q.Release(ctx, issue, holder); err != nil {
					return EnqueueResult{}, err
				}
				continue
			}
			// holder == id: an earlier attempt at this delivery took the
			// lock; go on and find out whether its task exists.
		}
		return q.enqueueLocked(ctx, issue, task, id)
	}
	return EnqueueResult{}, fmt.Errorf("lock %s: contended", issue)
}

func (q *Queue) enqueueLocked(ctx context.Context, issue Issue, task *asynq.Task, id string) (EnqueueResult, error) {
	_, err := q.client.EnqueueContext(ctx, task)
	switch {
	case err == nil:
		// The job is queued whatever happens next; losing this record only
		// means a later `/agent retry` on the issue may be answered instead
		// of run, so its error is not the caller's.
		_ = q.rdb.Set(ctx, workedKey(issue), id, WorkedTTL).Err()
		return EnqueueResult{Outcome: Enqueued}, nil
	case errors.Is(err, asynq.ErrTaskIDConflict):
		// A redelivery. The lock stays only while that task is still alive.
		stale, serr := q.stale(ctx, id)
		if serr == nil && stale {
			serr = q.Release(ctx, issue, id)
		}
		if serr != nil {
			return EnqueueResult{}, serr
		}
		return EnqueueResult{Outcome: Duplicate}, nil
	}
	// Release with a context of its own: the caller's may be what failed.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if rerr := q.Release(rctx, issue, id); rerr != nil {
		return EnqueueResult{}, fmt.Errorf("enqueue %s on %s: %w (and %v)", task.Type(), issue, err, rerr)
	}
	return EnqueueResult{}, fmt.Errorf("enqueue %s on %s: %w", task.Type(), issue, err)
}

// stale reports whether the task holding a lock can no longer run: it is
// gone, finished, archived, or cancelled and not running right now.
func (q *Queue) stale(ctx context.Context, taskID string) (bool, error) {
	info, err := q.insp.GetTaskInfo(QueueAgent, taskID)
	if errors.Is(err, asynq.ErrTaskNotFound) || errors.Is(err, asynq.ErrQueueNotFound) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("look up task %s: %w", taskID, err)
	}
	switch info.State {
	case asynq.TaskStateCompleted, asynq.TaskStateArchived:
		return true, nil
	case asynq.TaskStateActive:
		return false, nil
	}
	_, cancelled, err := q.Cancelled(ctx, taskID)
	return cancelled, err
}

// releaseScript deletes a lock only if it still holds the given task ID, so
// a late release never frees a lock a newer job has taken.
var releaseScript = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("DEL", KEYS[1])
end
return 0`)

// Release frees the issue's lock if taskID holds it; otherwise it does
// nothing. Workers call it when a job ends.
func (q *Queue) Release(ctx context.Context, issue Issue, taskID string) error {
	if err := releaseScript.Run(ctx, q.rdb, []string{lockKey(issue)}, taskID).Err(); err != nil {
		return fmt.Errorf("release lock of %s: %w", issue, err)
	}
	return nil
}

// Active returns the ID of the task holding the issue's lock, or "".
func (q *Queue) Active(ctx context.Context, issue Issue) (string, error) {
	id, err := q.rdb.Get(ctx, lockKey(issue)).Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read lock of %s: %w", issue, err)
	}
	return id, nil
}

// Worked reports whether a job was enqueued for the issue in the last
// WorkedTTL.
func (q *Queue) Worked(ctx context.Context, issue Issue) (bool, error) {
	n, err := q.rdb.Exists(ctx, workedKey(issue)).Result()
	if err != nil {
		return false, fmt.Errorf("read worked record of %s: %w", issue, err)
	}
	return n > 0, nil
}

// Cancel stops the issue's active job on behalf of requester. It records
// the cancel first (asynq retries a cancelled task; the handler checks the
// record before anything else), then deletes a task still waiting or asks
// the worker running it to cancel. It returns the cancelled task's ID, or
// "" when no job was active.
func (q *Queue) Cancel(ctx context.Context, issue Issue, requester string) (string, error) {
	id, err := q.Active(ctx, issue)
	if err != nil || id == "" {
		return "", err
	}
	if err := q.rdb.Set(ctx, cancelKey(id), requester, LockTTL).Err(); err != nil {
		return "", fmt.Errorf("record cancel of %s: %w", issue, err)
	}
	info, err := q.insp.GetTaskInfo(QueueAgent, id)
	switch {
	case errors.Is(err, asynq.ErrTaskNotFound) || errors.Is(err, asynq.ErrQueueNotFound):
		return "", q.Release(ctx, issue, id)
	case err != nil:
		return "", fmt.Errorf("look up task %s: %w", id, err)
	}
	switch info.State {
	case asynq.TaskStateCompleted, asynq.TaskStateArchived:
		return "", q.Release(ctx, issue, id)
	case asynq.TaskStateActive:
		// The handler releases the lock when it sees the cancel.
		if err := q.insp.CancelProcessing(id); err != nil {
			return "", fmt.Errorf("cancel task %s: %w", id, err)
		}
		return id, nil
	}
	if err := q.insp.DeleteTask(QueueAgent, id); err != nil {
		// It may have just become active: cancel it there instead.
		if cerr := q.insp.CancelProcessing(id); cerr != nil {
			return "", fmt.Errorf("delete task %s: %w; cancel: %v", id, err, cerr)
		}
		return id, nil
	}
	return id, q.Release(ctx, issue, id)
}

// Cancelled reports whether the task was cancelled, and by whom.
func (q *Queue) Cancelled(ctx context.Context, taskID string) (by string, cancelled bool, err error) {
	by, err = q.rdb.Get(ctx, cancelKey(taskID)).Result()
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read cancel record of %s: %w", taskID, err)
	}
	return by, true, nil
}

func lockKey(i Issue) string   { return KeyPrefix + "active:" + issueKey(i) }
func workedKey(i Issue) string { return KeyPrefix + "worked:" + issueKey(i) }
func cancelKey(id string) string {
	return KeyPrefix + "cancel:" + id
}

// issueKey is case-insensitive like GitHub's owner and repository names.
func issueKey(i Issue) string {
	return strings.ToLower(i.Owner+"/"+i.Repo) + "#" + fmt.Sprint(i.Number)
}
