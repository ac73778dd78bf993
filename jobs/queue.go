// Package jobs is Patchwright's queue: enqueuing with one active job per
// issue, slots, notes, plans, cancellation, interruption and the agent
// branch name: everything the webhook needs of Redis and nothing more
// (docs/design.md §2, §6). The task catalogue is jobs/tasks; the worker is
// jobs/worker; the pipeline is jobs/pipeline.
package jobs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hibiken/asynq"
	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/redis/go-redis/v9"
)

// Redis keys Patchwright keeps beside asynq's own. All start with KeyPrefix.
const (
	// KeyPrefix starts every key Patchwright writes itself. Its hash tag
	// is the agent queue's, the one asynq's keys of that queue carry
	// (asynq:{agent}:…), so on a Redis Cluster every key a script of ours
	// touches, asynq's task included, is in one hash slot.
	KeyPrefix = "patchwright:{" + tasks.QueueAgent + "}:"
	// lockTTL is the safety net on an issue's active-job lock: longer than
	// every attempt of a job together (AgentMaxRetry+1 times AgentTimeout,
	// plus retry delays), so it never expires under a live job, yet a lock
	// whose job died without releasing it cannot block the issue for ever.
	// A lock whose task is finished is also cleared on the next trigger.
	lockTTL = (tasks.AgentMaxRetry+1)*tasks.AgentTimeout + time.Hour
	// workedTTL is how long Patchwright remembers that it worked on an issue
	// (for `/agent retry` and `/agent stop` on the issue itself).
	workedTTL = 90 * 24 * time.Hour
)

// EnqueueOutcome is what an enqueue request came to.
type EnqueueOutcome int

const (
	// Enqueued: a new task was stored.
	Enqueued EnqueueOutcome = iota + 1
	// Duplicate: this delivery was enqueued before (a redelivery).
	Duplicate
	// Busy: another job for the same issue is queued or running.
	Busy
	// Replayed: another delivery claimed the same meaning first
	// (EnqueueSolveClaiming); nothing was done.
	Replayed
	// Queued: another job for the issue is active, and this one (a retry)
	// waits behind it; it is enqueued when that job releases the lock.
	Queued
)

func (o EnqueueOutcome) String() string {
	switch o {
	case Enqueued:
		return "enqueued"
	case Duplicate:
		return "duplicate"
	case Busy:
		return "busy"
	case Replayed:
		return "replayed"
	case Queued:
		return "queued"
	}
	return "unknown"
}

// EnqueueResult reports an enqueue request. ActiveTaskID is set for Busy
// and Queued, FirstDelivery (the delivery holding the meaning) for
// Replayed. Waiting is set for a Busy retry: the retry already queued
// behind the active job.
type EnqueueResult struct {
	Outcome       EnqueueOutcome
	ActiveTaskID  string
	FirstDelivery string
	Waiting       string
}

// pipelining batches commands a few at a time on up to four connections.
// The default, one deep batch in flight, waits for the callers a finished
// batch wakes to send their next command; a webhook delivery does tens of
// microseconds of other work between its commands, so that wait cost more
// than it saved (BenchmarkWebhook in process: 58 µs a delivery with the
// default, 44 µs with these).
var pipelining = &redis.AutoPipelineOptions{MaxBatchSize: 8, MaxConcurrentBatches: 4, Unordered: true}

// Queue enqueues and cancels Patchwright's jobs on asynq, keeping at most one
// active agent job per issue with a lock key per issue whose value is the
// holding task's ID. It is safe for concurrent use.
type Queue struct {
	rdb    redis.UniversalClient
	client *asynq.Client
	insp   *asynq.Inspector
	// published: the agent queue is in asynq's set of queues. The set's
	// key has no hash tag, so it cannot be in our scripts on a cluster;
	// it is added once per process, as asynq's own client does.
	published atomic.Bool
}

// NewQueue returns a Queue on rdb, which the caller owns and closes.
//
// Concurrent callers share round trips: the Queue sends its commands through
// go-redis's automatic pipelining where rdb has it (not on a Ring). Every
// call still waits for its own reply, so each caller's commands keep their
// order; only commands of different callers may run in any order, which
// nothing here relies on. A command once queued runs even if its caller's
// context ends (go-redis does not watch per-command contexts there); every
// step here is safe to finish that way.
func NewQueue(rdb redis.UniversalClient) *Queue {
	if ap, err := rdb.AutoPipelineWithOptions(pipelining); err == nil {
		rdb = ap
	}
	return &Queue{
		rdb:    rdb,
		client: asynq.NewClientFromRedisClient(rdb),
		insp:   asynq.NewInspectorFromRedisClient(rdb),
	}
}

// Close returns nil: the Queue holds nothing of its own. Its asynq client
// and inspector share rdb, which the caller closes (asynq refuses to close
// a shared connection, so closing them here only ever failed).
func (q *Queue) Close() error { return nil }

// Ping reports whether Redis answers.
func (q *Queue) Ping(ctx context.Context) error {
	if err := q.rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("ping redis: %w", err)
	}
	return nil
}

// EnqueueSolve enqueues a TypeSolveIssue task unless a job for the issue is
// active (Busy) or the delivery was seen (Duplicate).
func (q *Queue) EnqueueSolve(ctx context.Context, p tasks.SolveIssue) (EnqueueResult, error) {
	task, err := tasks.NewSolveIssueTask(p)
	if err != nil {
		return EnqueueResult{}, err
	}
	return q.enqueueExclusive(ctx, exclusive{issue: p.Issue, task: task, id: p.DeliveryID, pin: p.IssueHash})
}

// EnqueueSolveBehind is EnqueueSolve for a `/agent retry` on the issue:
// while another job holds the issue's lock it is Queued behind that job,
// as EnqueueRetry is, instead of Busy.
func (q *Queue) EnqueueSolveBehind(ctx context.Context, p tasks.SolveIssue) (EnqueueResult, error) {
	task, err := tasks.NewSolveIssueTask(p)
	if err != nil {
		return EnqueueResult{}, err
	}
	return q.enqueueExclusive(ctx, exclusive{issue: p.Issue, task: task, id: p.DeliveryID, pin: p.IssueHash, behind: true})
}

// EnqueueSolveClaiming is EnqueueSolve that first claims a delivery's
// meaning (ClaimMeaning's key) in the same script, so a delivery that
// starts a job costs one round trip: Replayed, with nothing done, when
// another delivery holds the meaning. The claim stays whatever else the
// outcome (the delivery is answered); the caller releases it if it fails.
func (q *Queue) EnqueueSolveClaiming(ctx context.Context, p tasks.SolveIssue, meaning string) (EnqueueResult, error) {
	task, err := tasks.NewSolveIssueTask(p)
	if err != nil {
		return EnqueueResult{}, err
	}
	return q.enqueueExclusive(ctx, exclusive{issue: p.Issue, task: task, id: p.DeliveryID, meaning: meaning, pin: p.IssueHash})
}

// EnqueueRetry enqueues a TypeRetryPR task like EnqueueSolve; the lock is
// the one of p.Issue, the issue the pull request belongs to. While another
// job holds the lock (typically the attempt that just opened the pull
// request, still finishing), the retry is Queued behind it instead of
// refused: it is enqueued when that job releases the lock, so there is
// still one job per issue. One retry waits at a time; a second is Busy.
func (q *Queue) EnqueueRetry(ctx context.Context, p tasks.RetryPR) (EnqueueResult, error) {
	task, err := tasks.NewRetryPRTask(p)
	if err != nil {
		return EnqueueResult{}, err
	}
	pin := p.IssueHash
	if p.CIHead != "" {
		// A CI fix carries the pin a writer approved; it approves none.
		pin = ""
	}
	return q.enqueueExclusive(ctx, exclusive{issue: p.Issue, task: task, id: p.DeliveryID, pin: pin, behind: true})
}

// ApprovedPin is the pin (IssueHash) of the issue text a person with
// write access last approved on issue: the text of the latest label or
// command that reached the queue (whether it started a job or found one
// busy). ok is false when none is remembered (none in workedTTL, or
// from before pins were kept). A CI fix carries it: nobody approves
// the text CI runs on, so it runs only the text a writer did.
func (q *Queue) ApprovedPin(ctx context.Context, issue tasks.Issue) (pin string, ok bool, err error) {
	pin, err = q.rdb.Get(ctx, pinKey(issue)).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("read the approved pin of %s: %w", issue, err)
	}
	return pin, true, nil
}

// EnqueueReply enqueues a reply comment. A second reply for the same
// delivery is a Duplicate.
func (q *Queue) EnqueueReply(ctx context.Context, p tasks.Reply) (EnqueueResult, error) {
	task, err := tasks.NewReplyTask(p)
	if err != nil {
		return EnqueueResult{}, err
	}
	return q.enqueueOnce(ctx, task, "reply on "+p.Issue.String())
}

// enqueueExclusive takes the issue's lock (value = task ID), records that
// Patchwright worked on the issue, and enqueues the task, all in one
// script: one round trip, and no moment where the lock is held without its
// task. Crash cases it covers:
//   - the script fails before it writes (Redis refuses it, or it never
//     arrived): nothing was taken;
//   - its reply is lost after it ran: the task exists and holds the lock,
//     as after a success; the redelivery of the delivery is a Duplicate;
//   - the worker died without releasing: a lock whose task is gone,
//     finished, or cancelled and not running is cleared here;
//   - otherwise lockTTL ends it.
//
// With behind, a task that finds a live holder waits behind it (Queued).
func (q *Queue) enqueueExclusive(ctx context.Context, x exclusive) (EnqueueResult, error) {
	issue, task, id, behind := x.issue, x.task, x.id, x.behind
	x.msg = taskMessage(message{typ: task.Type(), payload: task.Payload(), id: id, queue: tasks.QueueAgent,
		retry: tasks.AgentMaxRetry, timeout: tasks.AgentTimeout, retention: tasks.Retention, headers: task.Headers()})
	// Three rounds: a later one follows clearing a stale lock, or a lock
	// that changed hands while the task was being queued behind it.
	for range 3 {
		outcome, holder, err := q.enqueueLocked(ctx, x)
		if err != nil {
			return EnqueueResult{}, fmt.Errorf("enqueue %s on %s: %w", task.Type(), issue, err)
		}
		switch outcome {
		case Enqueued:
			return EnqueueResult{Outcome: Enqueued}, nil
		case Replayed:
			return EnqueueResult{Outcome: Replayed, FirstDelivery: holder}, nil
		case Duplicate:
			// A redelivery. The lock stays only while that task is still
			// alive.
			stale, err := q.stale(ctx, id)
			if err == nil && stale {
				err = q.Release(ctx, issue, id)
			}
			if err != nil {
				return EnqueueResult{}, err
			}
			return EnqueueResult{Outcome: Duplicate}, nil
		}
		stale, err := q.stale(ctx, holder)
		if err != nil {
			return EnqueueResult{}, err
		}
		if !stale && !behind {
			return EnqueueResult{Outcome: Busy, ActiveTaskID: holder}, nil
		}
		if !stale {
			res, again, err := q.queueBehind(ctx, x, holder)
			if err != nil || !again {
				return res, err
			}
			continue
		}
		if err := q.Release(ctx, issue, holder); err != nil {
			return EnqueueResult{}, err
		}
	}
	return EnqueueResult{}, fmt.Errorf("lock %s: contended", issue)
}

// exclusive is one agent task to enqueue under its issue's lock.
type exclusive struct {
	issue tasks.Issue
	task  *asynq.Task
	msg   []byte // the task as asynq stores it
	id    string
	// meaning, when set, is a delivery's meaning to claim first.
	meaning string
	// pin, when set, is the issue text's pin the trigger's writer
	// approved (ApprovedPin).
	pin string
	// behind: a task that finds a live holder waits behind it.
	behind bool
}

// enqueueScript takes an issue's lock (KEYS[1]) for task ARGV[1] unless
// another task holds it, sets the worked record (KEYS[2]), and stores the
// task as asynq's client does (enqueue.go): KEYS[3] its hash, KEYS[4] the
// queue's pending list (the queue is in asynq's set already: publish);
// ARGV[2] and ARGV[3] the lock's and the record's TTLs in milliseconds,
// ARGV[4] the encoded task, ARGV[5] now in Unix nanoseconds. A lock the
// task already holds (an earlier attempt at the same delivery) counts as
// taken. With KEYS[6], a delivery's meaning, it first claims that for
// ARGV[1] (ARGV[6] its TTL), as claimScript does, and stops with {3, holder} when
// another delivery holds it. Past that claim, a pin ARGV[7] (not "") is
// stored as the issue's approved pin (KEYS[5], the worked record's TTL),
// whatever the lock says: the writer approved that text. It returns {1} enqueued, {2} the task existed
// already (a redelivery: the lock is taken, the task left alone), or
// {0, holder} for a lock another task holds (the meaning stays claimed: the
// delivery is answered).
//
// The claim and the lock are each one SET NX, read back only when it
// fails (a replay, a redelivery, a busy issue): a new delivery runs seven
// commands, not nine. Redis checks a script's declared keys against its
// ACL before it runs, so a Redis that denies one key refuses it whole and
// nothing is written (TestEnqueueRefusedLeavesNothing).
var enqueueScript = redis.NewScript(`
if KEYS[6] and not redis.call("SET", KEYS[6], ARGV[1], "NX", "PX", ARGV[6]) then
	local first = redis.call("GET", KEYS[6])
	if first and first ~= ARGV[1] then
		return {3, first}
	end
end
if ARGV[7] ~= "" then
	redis.call("SET", KEYS[5], ARGV[7], "PX", ARGV[3])
end
if not redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then
	local holder = redis.call("GET", KEYS[1])
	if holder and holder ~= ARGV[1] then
		return {0, holder}
	end
	redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2])
end
redis.call("SET", KEYS[2], ARGV[1], "PX", ARGV[3])
if redis.call("EXISTS", KEYS[3]) == 1 then
	return {2}
end
redis.call("HSET", KEYS[3], "msg", ARGV[4], "state", "pending", "pending_since", ARGV[5])
redis.call("LPUSH", KEYS[4], ARGV[1])
return {1}`)

// enqueueLocked runs enqueueScript: Enqueued, Duplicate, Replayed with the
// meaning's holder, or Busy with the lock's.
func (q *Queue) enqueueLocked(ctx context.Context, x exclusive) (EnqueueOutcome, string, error) {
	if err := q.publish(ctx); err != nil {
		return 0, "", err
	}
	keys := []string{lockKey(x.issue), workedKey(x.issue), asynqTaskKey(tasks.QueueAgent, x.id), asynqPendingKey(tasks.QueueAgent), pinKey(x.issue)}
	if x.meaning != "" {
		keys = append(keys, x.meaning)
	}
	res, err := enqueueScript.Run(ctx, q.rdb, keys, x.id, lockTTL.Milliseconds(), workedTTL.Milliseconds(),
		x.msg, time.Now().UnixNano(), meaningTTL.Milliseconds(), x.pin).Slice()
	if err != nil {
		return 0, "", err
	}
	if len(res) == 0 {
		return 0, "", fmt.Errorf("unexpected reply %v", res)
	}
	switch n, _ := res[0].(int64); n {
	case 1:
		return Enqueued, "", nil
	case 2:
		return Duplicate, "", nil
	case 3:
		first, _ := res[1].(string)
		return Replayed, first, nil
	}
	holder := ""
	if len(res) > 1 {
		holder, _ = res[1].(string)
	}
	return Busy, holder, nil
}

// publish adds the agent queue to asynq's set of queues once per Queue,
// before the first task is stored: asynq's inspector answers "queue not
// found" for a task of a queue missing from it, which stale would take
// for a dead holder.
func (q *Queue) publish(ctx context.Context) error {
	if q.published.Load() {
		return nil
	}
	if err := q.rdb.SAdd(ctx, asynqQueues, tasks.QueueAgent).Err(); err != nil {
		return fmt.Errorf("publish queue %s: %w", tasks.QueueAgent, err)
	}
	q.published.Store(true)
	return nil
}

// stale reports whether the task holding a lock can no longer run: it is
// gone, finished, archived, or cancelled and not running right now.
func (q *Queue) stale(ctx context.Context, taskID string) (bool, error) {
	info, err := q.insp.GetTaskInfo(tasks.QueueAgent, taskID)
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

// behindScript queues task ARGV[1] (encoded ARGV[3]) behind the holder
// ARGV[2] of an issue's lock (KEYS[1]): it stores the task in the issue's
// waiting slot (KEYS[2], a hash of id and msg, TTL ARGV[4] ms) and sets
// the worked record (KEYS[3], TTL ARGV[5] ms). It returns {1} queued, {0}
// when the lock no longer holds ARGV[2] (the caller starts again), {2} when
// the task already waits (a redelivery), or {3, id} when another task
// waits.
var behindScript = redis.NewScript(`
if redis.call("GET", KEYS[1]) ~= ARGV[2] then
	return {0}
end
local waiting = redis.call("HGET", KEYS[2], "id")
if waiting == ARGV[1] then
	return {2}
end
if waiting then
	return {3, waiting}
end
redis.call("HSET", KEYS[2], "id", ARGV[1], "msg", ARGV[3])
redis.call("PEXPIRE", KEYS[2], ARGV[4])
redis.call("SET", KEYS[3], ARGV[1], "PX", ARGV[5])
return {1}`)

// queueBehind runs behindScript; again is true when the lock changed
// hands meanwhile and the enqueue should start over.
func (q *Queue) queueBehind(ctx context.Context, x exclusive, holder string) (res EnqueueResult, again bool, err error) {
	issue, id := x.issue, x.id
	out, err := behindScript.Run(ctx, q.rdb, []string{lockKey(issue), waitingKey(issue), workedKey(issue)},
		id, holder, x.msg, lockTTL.Milliseconds(), workedTTL.Milliseconds()).Slice()
	if err != nil || len(out) == 0 {
		return EnqueueResult{}, false, fmt.Errorf("queue %s behind %s on %s: %v %w", id, holder, issue, out, err)
	}
	switch n, _ := out[0].(int64); n {
	case 0:
		return EnqueueResult{}, true, nil
	case 1:
		return EnqueueResult{Outcome: Queued, ActiveTaskID: holder}, false, nil
	case 2:
		return EnqueueResult{Outcome: Duplicate}, false, nil
	}
	waiting := ""
	if len(out) > 1 {
		waiting, _ = out[1].(string)
	}
	return EnqueueResult{Outcome: Busy, ActiveTaskID: holder, Waiting: waiting}, false, nil
}

// releaseScript deletes a key (KEYS[1]) only if it still holds ARGV[1],
// so a late release never frees a claim a newer holder has taken.
var releaseScript = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("DEL", KEYS[1])
end
return 0`)

// handOverScript deletes a lock (KEYS[1]) only if it still holds task
// ARGV[1], so a late release never frees a lock a newer job has taken.
// When a task waits in the issue's slot (KEYS[2]) the lock passes to it
// and it is stored as asynq's client does (see enqueueScript): its hash
// ARGV[2]..id, KEYS[3] the pending list, ARGV[3] the lock's TTL, ARGV[4]
// now in Unix nanoseconds. The hash's name is only known once the slot is
// read, so it is built here rather than declared; on a cluster it is in
// the declared keys' slot, since asynq's keys of the queue carry the hash
// tag KeyPrefix does. It returns 0 (not the holder), 1 (released) or 2
// (passed on).
var handOverScript = redis.NewScript(`
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
	return 0
end
local id = redis.call("HGET", KEYS[2], "id")
local msg = redis.call("HGET", KEYS[2], "msg")
redis.call("DEL", KEYS[2])
if not id or not msg or redis.call("EXISTS", ARGV[2] .. id) == 1 then
	redis.call("DEL", KEYS[1])
	return 1
end
redis.call("SET", KEYS[1], id, "PX", ARGV[3])
redis.call("HSET", ARGV[2] .. id, "msg", msg, "state", "pending", "pending_since", ARGV[4])
redis.call("LPUSH", KEYS[3], id)
return 2`)

// Release frees the issue's lock if taskID holds it; otherwise it does
// nothing. Workers call it when a job ends. A retry queued behind the job
// takes the lock over and is enqueued in the same step.
func (q *Queue) Release(ctx context.Context, issue tasks.Issue, taskID string) error {
	if err := q.publish(ctx); err != nil {
		return err
	}
	keys := []string{lockKey(issue), waitingKey(issue), asynqPendingKey(tasks.QueueAgent)}
	if err := handOverScript.Run(ctx, q.rdb, keys, taskID, asynqTaskKey(tasks.QueueAgent, ""), lockTTL.Milliseconds(),
		time.Now().UnixNano()).Err(); err != nil {
		return fmt.Errorf("release lock of %s: %w", issue, err)
	}
	return nil
}

// Waiting returns the ID of the retry queued behind the issue's active
// job, or "".
func (q *Queue) Waiting(ctx context.Context, issue tasks.Issue) (string, error) {
	id, err := q.rdb.HGet(ctx, waitingKey(issue), "id").Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read waiting retry of %s: %w", issue, err)
	}
	return id, nil
}

// Active returns the ID of the task holding the issue's lock, or "".
func (q *Queue) Active(ctx context.Context, issue tasks.Issue) (string, error) {
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
// workedTTL.
func (q *Queue) Worked(ctx context.Context, issue tasks.Issue) (bool, error) {
	n, err := q.rdb.Exists(ctx, workedKey(issue)).Result()
	if err != nil {
		return false, fmt.Errorf("read worked record of %s: %w", issue, err)
	}
	return n > 0, nil
}

func lockKey(i tasks.Issue) string   { return KeyPrefix + "active:" + issueKey(i) }
func workedKey(i tasks.Issue) string { return KeyPrefix + "worked:" + issueKey(i) }
func pinKey(i tasks.Issue) string    { return KeyPrefix + "pin:" + issueKey(i) }

// waitingKey holds the retry queued behind an issue's active job.
func waitingKey(i tasks.Issue) string { return KeyPrefix + "waiting:" + issueKey(i) }
func cancelKey(id string) string {
	return KeyPrefix + "cancel:" + id
}

// issueKey is case-insensitive like GitHub's owner and repository names.
func issueKey(i tasks.Issue) string {
	return strings.ToLower(i.Owner+"/"+i.Repo) + "#" + fmt.Sprint(i.Number)
}
