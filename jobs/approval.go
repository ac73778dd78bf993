package jobs

import (
	"context"
	"errors"
	"fmt"

	"github.com/hibiken/asynq"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// EnqueueApproval enqueues an approval check update; a redelivery is a
// Duplicate.
func (q *Queue) EnqueueApproval(ctx context.Context, p tasks.Approval) (EnqueueResult, error) {
	task, err := tasks.NewApprovalTask(p)
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
	return EnqueueResult{}, fmt.Errorf("enqueue approval check of %s: %w", p.Issue, err)
}
