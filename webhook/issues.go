package webhook

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/patchwright/patchwright/jobs"
)

// onIssues handles issues events: issues.labeled with the trigger label, by
// a non-bot sender with write access, enqueues a solve job.
func (h *Handler) onIssues(ctx context.Context, d delivery) (response, error) {
	var ev github.IssuesEvent
	if res := decode(d, &ev); res != nil {
		return *res, nil
	}
	if ev.GetAction() != "labeled" {
		return done(http.StatusOK, "ignored action %q", ev.GetAction()), nil
	}
	if !strings.EqualFold(ev.GetLabel().GetName(), h.cfg.TriggerLabel) {
		return done(http.StatusOK, "label %q is not the trigger", ev.GetLabel().GetName()), nil
	}
	sender := ev.GetSender()
	if isBot(sender.GetLogin(), sender.GetType()) {
		return done(http.StatusOK, "ignored: sender %s is a bot", sender.GetLogin()), nil
	}
	issue, res := issueOf(ev.GetInstallation(), ev.GetRepo(), ev.GetIssue().GetNumber())
	if res != nil {
		return *res, nil
	}
	log := d.log.With(jobs.LogInstallation, issue.InstallationID, jobs.LogIssue, issue.String(), jobs.LogSender, sender.GetLogin())
	ok, role, err := h.github.CanWrite(ctx, issue.InstallationID, issue.Owner, issue.Repo, sender.GetLogin())
	if err != nil {
		return response{}, err
	}
	if !ok {
		log.Info("trigger refused: no write permission", "role", role)
		msg := fmt.Sprintf("@%s, the `%s` label starts Patchwright only when added by someone with write, maintain or admin permission on this repository (yours: %s).",
			sender.GetLogin(), h.cfg.TriggerLabel, role)
		if err := h.reply(ctx, d, issue, msg); err != nil {
			return response{}, err
		}
		return done(http.StatusOK, "refused: %s has %s permission", sender.GetLogin(), role), nil
	}
	enq, err := h.queue.EnqueueSolve(ctx, jobs.SolveIssue{Issue: issue, DeliveryID: d.id, Requester: sender.GetLogin()})
	if err != nil {
		return response{}, err
	}
	return h.enqueued(ctx, d, issue, enq, "solve of "+issue.String())
}

// issueOf builds the job's issue from a payload, or a 200 response saying
// why the delivery cannot be acted on.
func issueOf(inst *github.Installation, repo *github.Repository, number int) (jobs.Issue, *response) {
	issue := jobs.Issue{
		InstallationID: inst.GetID(),
		Owner:          repo.GetOwner().GetLogin(),
		Repo:           repo.GetName(),
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
