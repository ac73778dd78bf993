package webhook

import (
	"context"
	"net/http"
	"strings"

	"github.com/patchwright/patchwright/internal/logkey"
	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/patchwright/patchwright/report/marker"

	"github.com/patchwright/patchwright/jobs"
)

// onPush keeps Patchwright's pull requests mergeable: when the default
// branch moves, each open pull request from agent/issue-N into it whose
// head is still the commit Patchwright pushed gets an update task that
// merges the new base in and checks the result again (tasks.RetryPR with
// Rebase). One task per pull request and base commit (tasks.RebaseID), so
// a redelivery starts nothing new. A head a person pushed is theirs to
// merge. Like a CI fix, nobody approves it, so it carries the pin of the
// issue text a writer last approved and is not started without one.
func (h *Handler) onPush(ctx context.Context, d delivery) (response, error) {
	ev, err := d.doc.Push()
	if err != nil {
		return malformed(d, err), nil
	}
	branch, isBranch := strings.CutPrefix(ev.Ref, "refs/heads/")
	switch {
	case !isBranch || ev.Deleted:
		return done(http.StatusOK, "ignored: %s is not a branch that moved", ev.Ref), nil
	case branch != ev.DefaultBranch:
		return done(http.StatusOK, "ignored: %s is not the default branch", ev.Ref), nil
	case !tasks.ValidSHA(ev.After):
		return done(http.StatusBadRequest, "malformed push payload: after %q", ev.After), nil
	}
	repo, res := issueOf(ev.Installation, ev.Repo, 1)
	if res != nil {
		return *res, nil
	}
	prs, err := h.github.AgentPullRequests(ctx, repo, branch)
	if err != nil {
		return response{}, err
	}
	enqueued := 0
	for _, pr := range prs {
		ok, err := h.enqueueRebase(ctx, d, repo, pr.Number, pr.HeadRef, ev.After, marker.ParsePushed(pr.Body) == pr.HeadSHA)
		if err != nil {
			return response{}, err
		}
		if ok {
			enqueued++
		}
	}
	if enqueued == 0 {
		return done(http.StatusOK, "no pull request of Patchwright's to update to %s", short(ev.After)), nil
	}
	d.audited("update pull requests after a push to "+branch, ev.Sender.Login, repo)
	if d.audit != nil {
		d.audit.Issue = 0 // the repository, not an issue
	}
	return done(http.StatusAccepted, "%d pull request updates to %s enqueued", enqueued, short(ev.After)), nil
}

// enqueueRebase enqueues the update of pull request pr (from head) to
// base; false when it is not Patchwright's to update or is already
// enqueued or busy.
func (h *Handler) enqueueRebase(ctx context.Context, d delivery, repo tasks.Issue, pr int, head, base string, ours bool) (bool, error) {
	n, ok := jobs.ParseAgentBranch(head)
	if !ok || !ours {
		d.log.Info("pull request not updated: its head was not pushed by Patchwright", "pr", pr)
		return false, nil
	}
	issue := repo
	issue.Number = n
	pin, ok, err := h.queue.ApprovedPin(ctx, issue)
	if err != nil || !ok {
		d.log.Info("pull request not updated: no issue text a writer approved is known", "pr", pr, logkey.Err, err)
		return false, err
	}
	enq, err := h.queue.EnqueueRetry(ctx, tasks.RetryPR{Issue: issue, PR: pr, DeliveryID: tasks.RebaseID(issue, pr, base),
		IssueHash: pin, Rebase: base})
	if err != nil {
		return false, err
	}
	d.log.Info("pull request update", "pr", pr, "base", base, "outcome", enq.Outcome.String())
	return enq.Outcome == jobs.Enqueued, nil
}
