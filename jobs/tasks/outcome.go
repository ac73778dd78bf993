package tasks

import (
	"fmt"

	"github.com/hibiken/asynq"
)

// TypeOutcome classifies a closed agent pull request from GitHub's state
// (jobs/outcomes); payload Outcome.
const TypeOutcome = "pr:outcome"

// Outcome is the payload of TypeOutcome: Issue is the pull request
// (Number is its number). The worker reads everything from GitHub, so a
// repeat stores the same record.
type Outcome struct {
	Issue
	DeliveryID string `json:"delivery_id"`
}

func (p Outcome) validate() error {
	if err := p.Issue.validate(); err != nil {
		return err
	}
	return validDelivery(p.DeliveryID)
}

// NewOutcomeTask builds the task for p, queued with the replies (three
// short reads), its ID "outcome:" plus the delivery ID.
func NewOutcomeTask(p Outcome) (*asynq.Task, error) {
	if err := p.validate(); err != nil {
		return nil, fmt.Errorf("outcome task: %w", err)
	}
	return newTask(TypeOutcome, p, "outcome:"+p.DeliveryID, replyQueue)
}
