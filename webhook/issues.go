package webhook

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/patchwright/patchwright/internal/logkey"
	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/patchwright/patchwright/webhook/payload"
)

// onIssues handles issues events: issues.labeled with the trigger label, or
// issues.assigned to the app's bot user (assign.go), by a non-bot sender
// with write access, enqueues a solve job pinned to the issue's text as the
// payload carries it; issues.closed, the trigger label's removal and the
// app's unassignment stop the running job.
func (h *Handler) onIssues(ctx context.Context, d delivery) (response, error) {
	ev, err := d.doc.Issues()
	if err != nil {
		return malformed(d, err), nil
	}
	switch ev.Action {
	case "closed", "unlabeled", "unassigned":
		return h.onIssueLifecycle(ctx, d, ev)
	case "assigned":
		return h.onAssigned(ctx, d, ev)
	case "labeled":
	default:
		return done(http.StatusOK, "ignored action %q", ev.Action), nil
	}
	// The trigger label with ":plan" (agent:plan) asks for a plan first,
	// as `/agent plan` does.
	plan := strings.EqualFold(ev.Label, h.cfg.TriggerLabel+":plan")
	if !plan && !strings.EqualFold(ev.Label, h.cfg.TriggerLabel) {
		return done(http.StatusOK, "label %q is not the trigger", ev.Label), nil
	}
	what := "the `" + ev.Label + "` label"
	return h.startIssue(ctx, d, ev, issueTrigger{plan: plan, what: what})
}

// issueTrigger is what started work on an issue: its label (with plan,
// the :plan label) or its assignment to the app.
type issueTrigger struct {
	plan bool
	// trigger is SolveIssue.Trigger.
	trigger string
	what    string // for the refusal: "the `agent` label"
}

// startIssue enqueues the solve a trigger on an issue asks for, by a
// non-bot sender with write access, pinned to the issue's text as the
// payload carries it. The label and the assignment share it: the same
// permission check, pin and dedupe.
func (h *Handler) startIssue(ctx context.Context, d delivery, ev payload.Issues, t issueTrigger) (response, error) {
	sender := ev.Sender
	if isBot(sender.Login, sender.Type) {
		return done(http.StatusOK, "ignored: sender %s is a bot", sender.Login), nil
	}
	issue, res := issueOf(ev.Installation, ev.Repo, ev.Issue.Number)
	if res != nil {
		return *res, nil
	}
	log := d.log.With(logkey.Installation, issue.InstallationID, logkey.Issue, issue.String(), logkey.Sender, sender.Login)
	d.audited("label "+ev.Label, sender.Login, issue)
	ok, role, err := h.github.CanWrite(ctx, issue, sender.Login)
	if err != nil {
		return response{}, err
	}
	if !ok {
		// The refusal is an effect: claim the meaning first.
		dup, err := h.claimPending(ctx, &d)
		if err != nil {
			return response{}, err
		}
		if dup != "" {
			return replayed(d, dup), nil
		}
		log.Info("trigger refused: no write permission", "role", role)
		msg := fmt.Sprintf("@%s, %s starts Patchwright only when done by someone with write, maintain or admin permission on this repository (yours: %s).",
			sender.Login, t.what, role)
		return h.refuseStranger(ctx, stranger{d: d, issue: issue}, msg, fmt.Sprintf("refused: %s has %s permission", sender.Login, role))
	}
	// A plan that waits for its approval is settled by the worker when
	// this job starts (Pipeline.Solve), not here: a delivery that starts
	// a job stays one Redis command.
	pin := tasks.IssueHash(ev.Issue.Title, ev.Issue.Body)
	enq, err := h.enqueueSolve(ctx, &d, tasks.SolveIssue{Issue: issue, DeliveryID: d.id, Requester: sender.Login,
		IssueHash: pin, Plan: t.plan, Trigger: t.trigger})
	if err != nil {
		return response{}, err
	}
	if res, same, err := h.sameStart(ctx, enq, pin, t); same || err != nil {
		return res, err
	}
	what := "solve of "
	if t.plan {
		what = "plan of "
	}
	return h.enqueued(ctx, d, issue, enq, what+issue.String())
}

// issueOf builds the job's issue from a payload, or a 200 response saying
// why the delivery cannot be acted on.
func issueOf(inst int64, repo payload.Repo, number int) (tasks.Issue, *response) {
	issue := tasks.Issue{
		InstallationID: inst,
		Owner:          repo.Owner,
		Repo:           repo.Name,
		Number:         number,
	}
	var res response
	switch {
	case issue.InstallationID <= 0:
		// A repository webhook, not the app's: nothing can act for it.
		res = done(http.StatusOK, "ignored: no installation in the payload")
	case issue.Owner == "" || issue.Repo == "" || issue.Number <= 0:
		res = done(http.StatusBadRequest, "payload lacks repository owner, name or issue number")
	default:
		return issue, nil
	}
	return issue, &res
}
