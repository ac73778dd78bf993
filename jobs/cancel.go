package jobs

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/hibiken/asynq"
	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/redis/go-redis/v9"
)

// Cancel stops the issue's active job on behalf of requester. It records
// the cancel first (asynq retries a cancelled task; the handler checks the
// record before anything else), then deletes a task still waiting or asks
// the worker running it to cancel. It returns the cancelled task's ID, or
// "" when no job was active. A retry queued behind the job is dropped
// first, so the release that follows does not start it.
func (q *Queue) Cancel(ctx context.Context, issue tasks.Issue, requester string) (string, error) {
	if err := q.rdb.Del(ctx, waitingKey(issue)).Err(); err != nil {
		return "", fmt.Errorf("drop the retry waiting on %s: %w", issue, err)
	}
	id, err := q.Active(ctx, issue)
	if err != nil || id == "" {
		return "", err
	}
	if err := q.rdb.Set(ctx, cancelKey(id), requester, lockTTL).Err(); err != nil {
		return "", fmt.Errorf("record cancel of %s: %w", issue, err)
	}
	info, err := q.insp.GetTaskInfo(tasks.QueueAgent, id)
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
	if err := q.insp.DeleteTask(tasks.QueueAgent, id); err != nil {
		// It may have just become active: cancel it there instead.
		if cerr := q.insp.CancelProcessing(id); cerr != nil {
			return "", fmt.Errorf("delete task %s: %w; cancel: %v", id, err, cerr)
		}
		return id, nil
	}
	return id, q.Release(ctx, issue, id)
}

// EnqueueDeleteBranch enqueues a branch deletion; a redelivery is a
// Duplicate.
func (q *Queue) EnqueueDeleteBranch(ctx context.Context, p tasks.DeleteBranch) (EnqueueResult, error) {
	task, err := tasks.NewDeleteBranchTask(p)
	if err != nil {
		return EnqueueResult{}, err
	}
	return q.enqueueOnce(ctx, task, "branch deletion on "+p.Issue.String())
}

// CancelRepo cancels the active job of every issue of owner/repo (of
// every repository of owner when repo is ""), for an app uninstalled or a
// repository removed from its installation, and returns the cancelled
// task IDs. It finds the issues by their lock keys.
func (q *Queue) CancelRepo(ctx context.Context, owner, repo, requester string) ([]string, error) {
	name := globEscape(strings.ToLower(repo))
	if repo == "" {
		name = "*"
	}
	pattern := KeyPrefix + "active:" + globEscape(strings.ToLower(owner)) + "/" + name + "#*"
	keys, err := scanKeys(ctx, q.rdb, pattern)
	if err != nil {
		return nil, fmt.Errorf("list active jobs of %s/%s: %w", owner, repo, err)
	}
	var ids []string
	for _, k := range keys {
		issue, ok := issueOfLockKey(k)
		if !ok {
			continue
		}
		id, err := q.Cancel(ctx, issue, requester)
		if err != nil {
			return ids, err
		}
		if id != "" {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// scanKeys lists the keys matching pattern. A cluster's SCAN answers for
// one node only, so there every master is scanned.
func scanKeys(ctx context.Context, rdb redis.UniversalClient, pattern string) ([]string, error) {
	var mu sync.Mutex
	var keys []string
	scan := func(ctx context.Context, c redis.Cmdable) error {
		iter := c.Scan(ctx, 0, pattern, 100).Iterator()
		for iter.Next(ctx) {
			mu.Lock()
			keys = append(keys, iter.Val())
			mu.Unlock()
		}
		return iter.Err()
	}
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		err := cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return scan(ctx, c) })
		return keys, err
	}
	return keys, scan(ctx, rdb)
}

// issueOfLockKey is lockKey's inverse (owner and repo in lower case, as
// the key holds them).
func issueOfLockKey(k string) (tasks.Issue, bool) {
	rest, ok := strings.CutPrefix(k, KeyPrefix+"active:")
	if !ok {
		return tasks.Issue{}, false
	}
	slash, hash := strings.Index(rest, "/"), strings.LastIndex(rest, "#")
	if slash <= 0 || hash <= slash+1 {
		return tasks.Issue{}, false
	}
	n, err := strconv.Atoi(rest[hash+1:])
	if err != nil || n <= 0 {
		return tasks.Issue{}, false
	}
	return tasks.Issue{Owner: rest[:slash], Repo: rest[slash+1 : hash], Number: n}, true
}

// globEscape quotes Redis glob characters.
func globEscape(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`*?[]\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// CancelBy is the requester Cancel records for a job stopped by
// something other than `/agent stop`: the login and what they did
// ("closed the issue"). ParseCancelBy splits it again.
func CancelBy(login, why string) string { return login + ": " + why }

// ParseCancelBy splits a cancel record into the login and what they did;
// why is "" for `/agent stop`.
func ParseCancelBy(by string) (login, why string) {
	login, why, _ = strings.Cut(by, ": ")
	return login, why
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
