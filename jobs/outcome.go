package jobs

import (
	"context"
	"errors"
	"fmt"

	"github.com/hibiken/asynq"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// EnqueueOutcome enqueues the classification of a closed agent pull
// request; a redelivery is a Duplicate.
func (q *Queue) EnqueueOutcome(ctx context.Context, p tasks.Outcome) (EnqueueResult, error) {
	task, err := tasks.NewOutcomeTask(p)
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
	return EnqueueResult{}, fmt.Errorf("enqueue outcome of %s: %w", p.Issue, err)
}
