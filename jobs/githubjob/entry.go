package githubjob

// The worker's entry points: a first attempt, a retry, an abandoned
// task.

import (
	"context"
	"fmt"
	"regexp"

	"github.com/patchwright/patchwright/agent/config"
	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/patchwright/patchwright/report"
)

// Solve runs a first (or new) attempt at an issue.
func (p *Pipeline) Solve(ctx context.Context, job tasks.SolveIssue, at tasks.Attempt) error {
	if job.PlanTask == "" && job.ApprovedPlan == "" {
		task, err := p.settleWaitingPlan(ctx, job, at)
		if err != nil {
			return err
		}
		job.PlanTask = task
	}
	if job.Plan {
		trigger := "/agent plan"
		if job.PreviousPlan != "" {
			trigger = "/agent retry (a revised plan)"
		}
		return p.plan(ctx, request{issue: job.Issue, requester: job.Requester, instructions: job.Instructions, trigger: trigger,
			issueHash: job.IssueHash, at: at, planning: true, previousPlan: job.PreviousPlan, planTask: job.PlanTask})
	}
	if job.ApprovedPlan != "" {
		return p.run(ctx, request{issue: job.Issue, requester: job.Requester, instructions: job.Instructions,
			trigger: "/agent approve", issueHash: job.IssueHash, at: at, approvedPlan: job.ApprovedPlan, planTask: job.PlanTask})
	}
	return p.run(ctx, request{issue: job.Issue, requester: job.Requester, instructions: job.Instructions, trigger: solveTrigger(job),
		issueHash: job.IssueHash, at: at, planTask: job.PlanTask})
}

// solveTrigger words what started a solve, for the status and the
// attempt history: a schedule's run has no person to name.
func solveTrigger(job tasks.SolveIssue) string {
	switch job.Trigger {
	case tasks.TriggerAssigned:
		return "assigned to the app"
	case tasks.TriggerSchedule:
		return "on a schedule of " + config.Path
	}
	return "on the issue"
}

// settleWaitingPlan returns the task of the plan that waits for its
// approval when a job that names none starts (the trigger label's): a new
// plan replaces it (its save does that), a solve sets it aside, so a
// later `/agent retry` is an attempt, not a replan of it. "" when no plan
// waits. Here rather than in the webhook, which enqueues in one Redis
// command.
func (p *Pipeline) settleWaitingPlan(ctx context.Context, job tasks.SolveIssue, at tasks.Attempt) (string, error) {
	if p.Plans == nil {
		return "", nil
	}
	rec, ok, err := p.Plans.LatestPlan(ctx, job.Issue)
	if err != nil || !ok || !rec.Waiting() || rec.Task == at.TaskID {
		return "", err
	}
	if !job.Plan {
		if _, err := p.Plans.SetAsidePlan(ctx, job.Issue, rec.Task, job.Requester); err != nil {
			return "", err
		}
	}
	return rec.Task, nil
}

// Retry runs another attempt on the pull request job.PR.
func (p *Pipeline) Retry(ctx context.Context, job tasks.RetryPR, at tasks.Attempt) error {
	a := request{issue: job.Issue, requester: job.Requester, instructions: job.Instructions,
		trigger: "/agent retry", pr: job.PR, issueHash: job.IssueHash, at: at}
	if job.CIHead != "" {
		a.ciHead, a.ciReported = job.CIHead, job.CIReported
		a.trigger = fmt.Sprintf("%s on %s: %s", ciTrigger, shortSHA(job.CIHead), job.CIReported)
	}
	if job.Rebase != "" {
		if ok, err := p.rebase(ctx, &a, job.Rebase); !ok || err != nil {
			return err
		}
	}
	return p.run(ctx, a)
}

// rerunNote says why a job runs again, for the status comment and the
// body's history; "" on a first run.
func rerunNote(r tasks.Rerun) string {
	switch r {
	case tasks.RerunCrashed:
		return "run again: the worker running the previous try stopped before it finished"
	case tasks.RerunDrained:
		return "run again: the previous try was handed back when its worker shut down"
	case tasks.RerunFailed:
		return "run again after a try that failed"
	}
	return ""
}

// Abandoned says in the issue's status comment that its job was given up:
// the worker running the last attempt died and asynq archived the task
// without running it again (see Sweeper).
func (p *Pipeline) Abandoned(ctx context.Context, issue tasks.Issue, taskID string) error {
	bot, err := p.GitHub.Bot(ctx, issue)
	if err != nil {
		return fmt.Errorf("find the app's bot user: %w", err)
	}
	st := &statusComment{gh: p.GitHub, issue: issue, bot: bot.Login, log: p.logger()}
	if err := st.find(ctx); err != nil {
		return err
	}
	st.status = report.Status{Issue: issue.Number, Phase: report.PhaseFailed,
		Reason: "the worker running its last try stopped without finishing (it crashed or was killed), so the job was given up. Comment `/agent retry` to start again"}
	if err := st.write(ctx); err != nil {
		return err
	}
	if p.Budget == nil {
		return nil
	}
	// Its cost is unknown: the hold (its cap) is counted, and freed.
	return p.Budget.SettleAbandoned(ctx, issue, taskID)
}

var unsafeRunID = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// runID names one try of a task: stable across a shutdown's requeue (same
// retry count, so the same directory is reused), new for each retry.
func runID(at tasks.Attempt) string {
	id := unsafeRunID.ReplaceAllString(at.TaskID, "_")
	if len(id) > 80 {
		id = id[:80]
	}
	return fmt.Sprintf("%s.%d", id, at.Retry)
}
