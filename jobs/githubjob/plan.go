package githubjob

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hibiken/asynq"

	"github.com/patchwright/patchwright/internal/logkey"
	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/interrupt"
	"github.com/patchwright/patchwright/jobs/pipeline"
	"github.com/patchwright/patchwright/report"
	"github.com/patchwright/patchwright/report/marker"
)

// plan runs a read-only planning attempt (`/agent plan`, or `/agent retry`
// while a plan waits: a.previousPlan is set) and posts its plan on the
// issue, with the PlanMarker, editing the comment an earlier try of the
// same task posted. A revised plan is a new task, so it is a new comment
// below the writer's changes: the issue keeps each plan and what was
// asked of it. No branch, commit or pull request.
func (p *Pipeline) plan(ctx context.Context, a request) (err error) {
	var res *pipeline.PlanResult
	span := p.startSpan(ctx, spanPlan, a)
	defer func() { span.end(planOutcome(res), planCostOf(res), err) }()
	id := runID(a.at)
	log := p.logger().With(logkey.Issue, a.issue.String(), logkey.Task, a.at.TaskID, logkey.Retry, a.at.Retry, "mode", "plan")
	logURL := p.runLink(id)
	bot, err := p.GitHub.Bot(ctx, a.issue)
	if err != nil {
		return fmt.Errorf("find the app's bot user: %w", err)
	}
	a.bot = bot.Login
	if err := p.GitHub.AddReaction(ctx, a.issue, "eyes"); err != nil {
		log.Warn("could not add the 👀 reaction", logkey.Err, err)
	}
	settle, err := p.reserve(ctx, a.issue, a.at.TaskID, log)
	if err != nil {
		return p.planFailed(ctx, a, logURL, "Patchwright did not start: "+err.Error(), permanent(err))
	}
	var cost *float64
	defer func() { settle(cost) }()
	job, _, err := p.prepare(ctx, a, id, logURL, log)
	if err != nil {
		return p.planFailed(ctx, a, logURL, "the plan run could not start: "+err.Error(), err)
	}
	// What a planning run is, the agent says in its own (trusted) prompt;
	// the feedback keeps people's words only.
	job.PreviousPlan = a.previousPlan
	job.Publisher = nil
	span.under(&job)
	res, err = p.executor(a.issue).Plan(ctx, job)
	if res != nil {
		cost = res.CostUSD
	}
	if ctx.Err() != nil {
		return fmt.Errorf("plan run interrupted, to be tried again: %w", context.Cause(ctx))
	}
	if err != nil {
		return p.planFailed(ctx, a, logURL, "the plan run failed: "+err.Error(), err)
	}
	pl := report.Plan{Issue: a.issue.Number, Task: a.at.TaskID, RequestedBy: a.requester, Text: res.Plan, RunURL: logURL, CostUSD: res.CostUSD,
		Revised: a.previousPlan != ""}
	if res.Plan == "" {
		pl.Reason = fmt.Sprintf("The model did not submit a plan (%s: %s).", res.Stop, res.Detail)
	}
	log.Info("plan run ended", "stop", res.Stop, "planned", res.Plan != "")
	if res.Plan != "" && p.Plans != nil {
		// Kept before the comment shows it: an approval must find it.
		rec := jobs.PlanRecord{Task: a.at.TaskID, Text: report.ShownPlan(res.Plan), RequestedBy: a.requester}
		if err := p.Plans.SavePlan(ctx, a.issue, rec); err != nil {
			return p.planFailed(ctx, a, logURL, "the plan could not be kept for its approval: "+err.Error(), err)
		}
	}
	commentID, err := p.postPlan(ctx, a, pl)
	if err != nil {
		return err
	}
	if res.Plan != "" && a.planTask != "" && a.planTask != a.at.TaskID {
		p.settlePlanComment(ctx, a, report.PlanSettlement{ReplacedBy: commentID})
	}
	return nil
}

// planFailed says on the issue that no plan was made and returns what
// asynq should see: final for a refusal, a configuration error or the
// last try, otherwise cause (asynq tries again and the comment is
// edited then).
func (p *Pipeline) planFailed(ctx context.Context, a request, logURL, reason string, cause error) error {
	actx, cancel := interrupt.After(ctx)
	defer cancel()
	_, refused := githubapi.AsRefusal(cause)
	final := refused || errors.Is(cause, asynq.SkipRetry) || errors.Is(cause, pipeline.ErrConfig) || errors.Is(cause, errIssueEdited) || a.at.Last()
	if !final {
		reason += fmt.Sprintf(" (try %d of %d; Patchwright tries again by itself)", a.at.Retry+1, a.at.MaxRetry+1)
	}
	if _, err := p.postPlan(actx, a, report.Plan{Issue: a.issue.Number, Task: a.at.TaskID, Reason: reason, RunURL: logURL}); err != nil {
		p.logger().Warn("could not say on the issue that no plan was made", logkey.Err, err)
	}
	if final && !errors.Is(cause, asynq.SkipRetry) {
		return permanent(cause)
	}
	return cause
}

// postPlan posts the plan comment, or edits the one this task posted on
// an earlier try, and returns its ID.
func (p *Pipeline) postPlan(ctx context.Context, a request, pl report.Plan) (int64, error) {
	body, err := report.PlanComment(pl)
	if err != nil {
		return 0, err
	}
	c, found, err := p.planComment(ctx, a, pl.Task)
	if err != nil {
		return 0, err
	}
	if found {
		return c.ID, p.GitHub.EditComment(ctx, a.issue, c.ID, body)
	}
	return p.GitHub.PostComment(ctx, a.issue, body)
}

// planComment finds the plan comment task posted on a's issue: the app's
// bot's comment with the task's PlanMarker.
func (p *Pipeline) planComment(ctx context.Context, a request, task string) (githubapi.Comment, bool, error) {
	mark := marker.Plan(a.issue.Number, task)
	cs, err := p.GitHub.Comments(ctx, a.issue)
	if err != nil {
		return githubapi.Comment{}, false, err
	}
	for _, c := range cs {
		if strings.EqualFold(c.Author, a.bot) && strings.Contains(c.Body, mark) {
			return c, true, nil
		}
	}
	return githubapi.Comment{}, false, nil
}

// settlePlanComment edits the comment of the plan a.planTask settles so
// its status line says what became of the plan (the record in Redis,
// settled by the webhook or by the new plan's save, is what counts; the
// comment only shows it). A failure is logged, not the job's: the work
// goes on without the comment's word.
func (p *Pipeline) settlePlanComment(ctx context.Context, a request, s report.PlanSettlement) {
	log := p.logger().With(logkey.Issue, a.issue.String(), logkey.Task, a.at.TaskID, "plan_task", a.planTask)
	c, found, err := p.planComment(ctx, a, a.planTask)
	if err != nil || !found {
		log.Warn("the settled plan's comment was not found", logkey.Err, err)
		return
	}
	body, err := report.PlanSettled(c.Body, s)
	if err == nil && body != c.Body {
		err = p.GitHub.EditComment(ctx, a.issue, c.ID, body)
		if err == nil && s.ReplacedBy != 0 {
			// The revised plan below supersedes it: folded as outdated,
			// once (with the edit that first says so).
			err = p.GitHub.MinimizeComment(ctx, a.issue, c.NodeID)
		}
	}
	if err != nil {
		log.Warn("could not say on the plan's comment what became of it", logkey.Err, err)
	}
}

// runLink is the link of run id, "" without RunURL.
func (p *Pipeline) runLink(id string) string {
	switch {
	case p.RunURL != "" && p.RunLink != nil:
		return p.RunLink(p.RunURL, id)
	case p.RunURL != "":
		return strings.TrimRight(p.RunURL, "/") + "/" + id
	}
	return ""
}
