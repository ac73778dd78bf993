package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/redis/go-redis/v9"
)

// runTTL keeps a task's run record past any retry of it.
const runTTL = 7 * 24 * time.Hour

// StartRun records that a run of the task starts and returns how its
// previous run ended: RerunNone when this is the first, RerunCrashed when
// the previous one started and never said it ended.
func (q *Queue) StartRun(ctx context.Context, taskID string) (tasks.Rerun, error) {
	prev, err := q.rdb.SetArgs(ctx, runKey(taskID), "running", redis.SetArgs{Get: true, TTL: runTTL}).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return tasks.RerunNone, nil
	case err != nil:
		return tasks.RerunNone, fmt.Errorf("record the start of %s: %w", taskID, err)
	case prev == "running":
		return tasks.RerunCrashed, nil
	}
	return tasks.Rerun(prev), nil
}

// EndRun records how a run of the task ended, for its next run to say:
// RerunNone (it will not run again) forgets the task.
func (q *Queue) EndRun(ctx context.Context, taskID string, how tasks.Rerun) error {
	var err error
	if how == tasks.RerunNone {
		err = q.rdb.Del(ctx, runKey(taskID)).Err()
	} else {
		err = q.rdb.Set(ctx, runKey(taskID), string(how), runTTL).Err()
	}
	if err != nil {
		return fmt.Errorf("record the end of %s: %w", taskID, err)
	}
	return nil
}

func runKey(id string) string { return KeyPrefix + "tries:" + id }

// sweptTTL outlives asynq's archive, which keeps a task at most 90 days.
const sweptTTL = 91 * 24 * time.Hour

func sweptKey(taskID string) string { return KeyPrefix + "abandoned:" + taskID }

// Swept reports whether the sweeper already reported the abandoned task.
func (q *Queue) Swept(ctx context.Context, taskID string) (bool, error) {
	n, err := q.rdb.Exists(ctx, sweptKey(taskID)).Result()
	return n > 0, err
}

// MarkSwept records that the sweeper reported the abandoned task, so it is
// reported once.
func (q *Queue) MarkSwept(ctx context.Context, taskID string) error {
	return q.rdb.Set(ctx, sweptKey(taskID), "1", sweptTTL).Err()
}
