package jobs

import (
	"context"

	"github.com/patchwright/patchwright/jobs/tasks"
)

// EnqueueApproval enqueues an approval check update; a redelivery is a
// Duplicate.
func (q *Queue) EnqueueApproval(ctx context.Context, p tasks.Approval) (EnqueueResult, error) {
	task, err := tasks.NewApprovalTask(p)
	if err != nil {
		return EnqueueResult{}, err
	}
	return q.enqueueOnce(ctx, task, "approval check of "+p.Issue.String())
}
