package webhook

import (
	"context"
	"net/http"

	"github.com/patchwright/patchwright/internal/logkey"
	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/patchwright/patchwright/report/marker"
	"github.com/patchwright/patchwright/webhook/payload"
)

// outOfDate are the mergeable_state values that an update fixes: the
// base moved on ("behind", shown when a rule requires an up-to-date
// branch) or conflicts with the head ("dirty").
var outOfDate = map[string]bool{"behind": true, "dirty": true}

// checkMergeable acts on a check that is not a CI failure to fix (a pass,
// or Patchwright's own checks): when the head is the one Patchwright
// pushed to agent/issue-N and GitHub says the pull request is behind or
// conflicts with its base, it enqueues the same update a push to the
// default branch does (merging the base branch as it is now), one per
// head (tasks.MergeableUpdateID). handled is false when there is nothing
// to do; the caller then answers as before. GitHub computes
// mergeable_state lazily: "unknown" does nothing, and a later check
// looks again.
func (h *Handler) checkMergeable(ctx context.Context, d delivery, ev payload.CheckEvent) (res response, handled bool, err error) {
	n, ok := jobs.ParseAgentBranch(ev.HeadBranch)
	if !ok || forkRun(d.event, ev) != "" || !tasks.ValidSHA(ev.HeadSHA) {
		return response{}, false, nil
	}
	issue, bad := issueOf(ev.Installation, ev.Repo, n)
	if bad != nil {
		return response{}, false, nil
	}
	pr, open, err := h.github.FindPullRequest(ctx, issue, ev.HeadBranch)
	if err != nil || !open || pr.HeadSHA != ev.HeadSHA || marker.ParsePushed(pr.Body) != ev.HeadSHA {
		return response{}, false, err
	}
	prIssue := issue
	prIssue.Number = pr.Number
	full, err := h.github.GetPullRequest(ctx, prIssue)
	if err != nil || !outOfDate[full.MergeableState] || full.BaseRef == "" {
		return response{}, false, err
	}
	pin, ok, err := h.queue.ApprovedPin(ctx, issue)
	if err != nil || !ok {
		return response{}, false, err
	}
	p := tasks.RetryPR{Issue: issue, PR: pr.Number, IssueHash: pin, Rebase: full.BaseRef,
		DeliveryID: tasks.MergeableUpdateID(issue, pr.Number, ev.HeadSHA)}
	enq, err := h.queue.EnqueueRetry(ctx, p)
	if err == nil && enq.Outcome == jobs.Busy {
		// A retry already waits on the issue: kept, and started when the
		// issue's job ends (jobs.StartDeferredUpdate).
		err = h.queue.DeferUpdate(ctx, p)
	}
	if err != nil {
		return response{}, false, err
	}
	d.log.Info("pull request out of date with its base", logkey.Issue, issue.String(), "pr", pr.Number,
		"mergeable_state", full.MergeableState, "outcome", enq.Outcome.String())
	if enq.Outcome != jobs.Enqueued && enq.Outcome != jobs.Queued {
		return done(http.StatusOK, "update of pull request #%d (%s): %s", pr.Number, full.MergeableState, enq.Outcome), true, nil
	}
	return done(http.StatusAccepted, "update of pull request #%d enqueued: it is %s", pr.Number, full.MergeableState), true, nil
}
