package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// A planning run's plan is kept in Redis for its approval: `/agent approve`
// starts an attempt on the text the model submitted, read from here, and
// never from the plan comment, which people with write access can edit.

// PlanTTL is how long a plan waits for its approval.
const PlanTTL = 30 * 24 * time.Hour

// MaxPlanBytes bounds a kept plan (the plan tool's text is bounded below
// it).
const MaxPlanBytes = 16 << 10

// PlanRecord is an issue's latest plan.
type PlanRecord struct {
	// Task made it (the marker of its comment names the same task).
	Task string `json:"task"`
	// Text is the plan as the model submitted it.
	Text string `json:"text"`
	// RequestedBy asked for it.
	RequestedBy string `json:"requested_by"`
}

func planKey(i Issue) string { return KeyPrefix + "plan:" + issueKey(i) }

// SavePlan keeps rec as issue's latest plan, replacing an earlier one.
func (q *Queue) SavePlan(ctx context.Context, issue Issue, rec PlanRecord) error {
	if len(rec.Text) > MaxPlanBytes {
		return fmt.Errorf("plan of %d bytes, over %d", len(rec.Text), MaxPlanBytes)
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if err := q.rdb.Set(ctx, planKey(issue), b, PlanTTL).Err(); err != nil {
		return fmt.Errorf("keep the plan of %s: %w", issue, err)
	}
	return nil
}

// LatestPlan is issue's latest plan; ok is false when there is none (never
// made, or expired).
func (q *Queue) LatestPlan(ctx context.Context, issue Issue) (rec PlanRecord, ok bool, err error) {
	b, err := q.rdb.Get(ctx, planKey(issue)).Bytes()
	if errors.Is(err, redis.Nil) {
		return PlanRecord{}, false, nil
	}
	if err != nil {
		return PlanRecord{}, false, fmt.Errorf("read the plan of %s: %w", issue, err)
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return PlanRecord{}, false, fmt.Errorf("read the plan of %s: %w", issue, err)
	}
	return rec, true, nil
}
