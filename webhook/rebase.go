package webhook

import (
	"context"
	"net/http"

	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// rebase enqueues `/agent rebase`: on an open Patchwright pull request,
// an update that merges its base branch (by name: its head when the task
// runs) into it and checks it again, pinned to the issue's text as it is
// now, as a retry is. On an issue it is answered.
func (h *Handler) rebase(ctx context.Context, c commentCtx, issue tasks.Issue) (response, error) {
	if !c.isPR {
		return h.answer(ctx, c, "`/agent rebase` works on Patchwright's pull request, not on the issue: comment it there.", "rebase on an issue")
	}
	pr, err := h.github.GetPullRequest(ctx, c.target)
	if err != nil {
		return response{}, err
	}
	text, err := h.github.GetIssue(ctx, issue)
	if gh, ok := githubapi.AsRefusal(err); ok {
		return done(http.StatusOK, "cannot read %s to pin its text: %v", issue, gh), nil
	}
	if err != nil {
		return response{}, err
	}
	enq, err := h.queue.EnqueueRetry(ctx, tasks.RetryPR{Issue: issue, PR: c.target.Number, DeliveryID: c.d.id, Requester: c.sender,
		IssueHash: tasks.IssueHash(text.Title, text.Body), Rebase: pr.BaseRef})
	if err != nil {
		return response{}, err
	}
	return h.enqueued(ctx, c.d, c.target, enq, "update of "+issue.String()+" to "+pr.BaseRef)
}
