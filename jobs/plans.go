package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/redis/go-redis/v9"
)

// A planning run's plan is kept in Redis for its approval: `/agent approve`
// starts an attempt on the text the model submitted, read from here, and
// never from the plan comment, which people with write access can edit.

// planTTL is how long a plan waits for its approval.
const planTTL = 30 * 24 * time.Hour

// PlanRecord is an issue's latest plan.
type PlanRecord struct {
	// Task made it (the marker of its comment names the same task).
	Task string `json:"task"`
	// Text is the plan as the model submitted it.
	Text string `json:"text"`
	// RequestedBy asked for it.
	RequestedBy string `json:"requested_by"`
	// ApprovedBy approved it (`/agent approve`, ApprovePlan); "" while
	// the plan waits for its approval.
	ApprovedBy string `json:"approved_by,omitempty"`
	// SetAsideBy put the trigger label on the issue while the plan
	// waited (SetAsidePlan): a solve started without the plan, and the
	// plan no longer waits.
	SetAsideBy string `json:"set_aside_by,omitempty"`
}

// Waiting reports whether the plan waits for its approval: an issue in
// that state is planning, and `/agent retry` asks for a new plan instead
// of an attempt. The record is the one owner of that state; the plan
// comment only shows it.
func (r PlanRecord) Waiting() bool { return r.ApprovedBy == "" && r.SetAsideBy == "" }

func planKey(i tasks.Issue) string { return KeyPrefix + "plan:" + issueKey(i) }

// SavePlan keeps rec as issue's latest plan, replacing an earlier one.
func (q *Queue) SavePlan(ctx context.Context, issue tasks.Issue, rec PlanRecord) error {
	if len(rec.Text) > tasks.MaxPlanBytes {
		return fmt.Errorf("plan of %d bytes, over %d", len(rec.Text), tasks.MaxPlanBytes)
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if err := q.rdb.Set(ctx, planKey(issue), b, planTTL).Err(); err != nil {
		return fmt.Errorf("keep the plan of %s: %w", issue, err)
	}
	return nil
}

// LatestPlan is issue's latest plan; ok is false when there is none (never
// made, or expired).
func (q *Queue) LatestPlan(ctx context.Context, issue tasks.Issue) (rec PlanRecord, ok bool, err error) {
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

// settlePlanScript sets field ARGV[2] of the plan in KEYS[1] to ARGV[3]
// if it is still task ARGV[1]'s: a newer plan saved meanwhile stays
// waiting.
var settlePlanScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if not v then return 0 end
local rec = cjson.decode(v)
if rec.task ~= ARGV[1] then return 0 end
rec[ARGV[2]] = ARGV[3]
redis.call('SET', KEYS[1], cjson.encode(rec), 'KEEPTTL')
return 1
`)

// ApprovePlan records that by approved issue's plan of task, so the issue
// no longer waits on a plan. It reports false, changing nothing, when the
// latest plan is another task's or there is none.
func (q *Queue) ApprovePlan(ctx context.Context, issue tasks.Issue, task, by string) (bool, error) {
	return q.settlePlan(ctx, issue, settlement{task: task, by: by, field: "approved_by", what: "the approval"})
}

// SetAsidePlan records that by started a solve of issue without its plan
// of task (the trigger label while the plan waited), so the issue no
// longer waits on it: a later `/agent retry` is an attempt, not a replan
// of that plan. It reports false like ApprovePlan.
func (q *Queue) SetAsidePlan(ctx context.Context, issue tasks.Issue, task, by string) (bool, error) {
	return q.settlePlan(ctx, issue, settlement{task: task, by: by, field: "set_aside_by", what: "the setting aside"})
}

// settlement is how a plan was settled: the plan's task, who settled it,
// the plan record's field that says so, and the words for an error.
type settlement struct {
	task, by, field, what string
}

func (q *Queue) settlePlan(ctx context.Context, issue tasks.Issue, s settlement) (bool, error) {
	n, err := settlePlanScript.Run(ctx, q.rdb, []string{planKey(issue)}, s.task, s.field, s.by).Int()
	if err != nil {
		return false, fmt.Errorf("record %s of the plan of %s: %w", s.what, issue, err)
	}
	return n == 1, nil
}
