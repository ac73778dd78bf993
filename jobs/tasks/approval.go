package tasks

import (
	"fmt"

	"github.com/hibiken/asynq"
)

// TypeApproval brings the patchwright/approval check run of an agent pull
// request up to date with its reviews and head; payload Approval.
const TypeApproval = "pr:approval"

// Approval is the payload of TypeApproval: Issue is the pull request
// (Number is its number). The worker reads everything else from GitHub,
// so any number of these for one pull request, in any order, end in the
// same check.
type Approval struct {
	Issue
	DeliveryID string `json:"delivery_id"`
}

func (p Approval) validate() error {
	if err := p.Issue.validate(); err != nil {
		return err
	}
	return validDelivery(p.DeliveryID)
}

// NewApprovalTask builds the task for p, queued with the replies (a few
// short calls), its ID "approval:" plus the delivery ID.
func NewApprovalTask(p Approval) (*asynq.Task, error) {
	if err := p.validate(); err != nil {
		return nil, fmt.Errorf("approval task: %w", err)
	}
	return newTask(TypeApproval, p, "approval:"+p.DeliveryID, replyQueue)
}
