package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hibiken/asynq"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// SameStart reports whether the agent task taskID (an issue's active job)
// is a plain start of the issue's text pin by the other trigger than
// trigger (SolveIssue.Trigger): a solve with no instructions and no plan,
// as the trigger label and the assignment to the app enqueue. A label and
// an assignment made together (an issue opened labelled and assigned) are
// then one run: the second trigger finds the first's job and is answered
// without a "busy" comment. The same trigger twice is still told it is
// busy.
func (q *Queue) SameStart(ctx context.Context, taskID, pin, trigger string) (bool, error) {
	if taskID == "" || pin == "" {
		return false, nil
	}
	info, err := q.insp.GetTaskInfo(tasks.QueueAgent, taskID)
	if errors.Is(err, asynq.ErrTaskNotFound) || errors.Is(err, asynq.ErrQueueNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("look up task %s: %w", taskID, err)
	}
	if info.Type != tasks.TypeSolveIssue {
		return false, nil
	}
	var p tasks.SolveIssue
	if err := json.Unmarshal(info.Payload, &p); err != nil {
		// Not ours to judge here: the worker refuses it; the trigger
		// is answered as busy.
		return false, nil
	}
	plain := p.Instructions == "" && !p.Plan && p.ApprovedPlan == "" && p.PreviousPlan == ""
	return plain && p.IssueHash == pin && p.Trigger != trigger, nil
}
