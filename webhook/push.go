package webhook

import (
	"cmp"
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/patchwright/patchwright/internal/logkey"
	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/patchwright/patchwright/report/marker"

	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/githubapi"
)

// onPush keeps Patchwright's pull requests mergeable: when the default
// branch moves, each open pull request from agent/issue-N into it whose
// head is still the commit Patchwright pushed gets an update task that
// merges the new base in and checks the result again (tasks.RetryPR with
// Rebase). One task per pull request and base commit (tasks.RebaseID), so
// a redelivery starts nothing new. A head a person pushed is theirs to
// merge. Like a CI fix, nobody approves it, so it carries the pin of the
// issue text a writer last approved and is not started without one. At
// most jobs.MaxUpdatesPerPush start at once; the rest are deferred.
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
	enqueued, deferred, err := h.updateAll(ctx, d, repo, prs, ev.After)
	if err != nil {
		return response{}, err
	}
	if enqueued == 0 && deferred == 0 {
		return done(http.StatusOK, "no pull request of Patchwright's to update to %s", short(ev.After)), nil
	}
	d.audited("update pull requests after a push to "+branch, ev.Sender.Login, repo)
	if d.audit != nil {
		d.audit.Issue = 0 // the repository, not an issue
	}
	return done(http.StatusAccepted, "%d pull request updates to %s enqueued, %d deferred", enqueued, short(ev.After), deferred), nil
}

// updateAll enqueues the update of each pull request of prs that is
// Patchwright's to base, at most jobs.MaxUpdatesPerPush of them; the rest,
// and any whose issue already has a retry waiting, are deferred. The
// lowest numbers start, so a redelivery picks the same ones.
func (h *Handler) updateAll(ctx context.Context, d delivery, repo tasks.Issue, prs []githubapi.PullRequest, after string) (enqueued, deferred int, err error) {
	slices.SortFunc(prs, func(a, b githubapi.PullRequest) int { return cmp.Compare(a.Number, b.Number) })
	var updates []tasks.RetryPR
	for _, pr := range prs {
		p, ok, err := h.rebaseTask(ctx, d, repo, pr, after)
		if err != nil {
			return 0, 0, err
		}
		if ok {
			updates = append(updates, p)
		}
	}
	now, later := updates, []tasks.RetryPR(nil)
	if len(updates) > jobs.MaxUpdatesPerPush {
		now, later = updates[:jobs.MaxUpdatesPerPush], updates[jobs.MaxUpdatesPerPush:]
	}
	// Kept before any starts, so the end of a started update (which
	// starts the next: jobs.StartDeferredUpdate) always finds them.
	for _, p := range later {
		if err := h.queue.DeferUpdate(ctx, p); err != nil {
			return 0, 0, err
		}
		deferred++
	}
	for _, p := range now {
		enq, err := h.queue.EnqueueRetry(ctx, p)
		if err != nil {
			return 0, 0, err
		}
		d.log.Info("pull request update", "pr", p.PR, "base", after, "outcome", enq.Outcome.String())
		switch enq.Outcome {
		case jobs.Busy:
			// A retry already waits on its issue: started when that
			// issue's job ends.
			if err := h.queue.DeferUpdate(ctx, p); err != nil {
				return 0, 0, err
			}
			deferred++
		case jobs.Enqueued, jobs.Queued:
			enqueued++
		}
	}
	return enqueued, deferred, nil
}

// rebaseTask is the update of pull request pr of repo to base; false
// when it is not Patchwright's to update (not its branch, or a head it
// did not push).
func (h *Handler) rebaseTask(ctx context.Context, d delivery, repo tasks.Issue, p githubapi.PullRequest, base string) (tasks.RetryPR, bool, error) {
	pr := p.Number
	n, ok := jobs.ParseAgentBranch(p.HeadRef)
	if !ok || marker.ParsePushed(p.Body) != p.HeadSHA {
		d.log.Info("pull request not updated: its head was not pushed by Patchwright", "pr", pr)
		return tasks.RetryPR{}, false, nil
	}
	issue := repo
	issue.Number = n
	pin, ok, err := h.queue.ApprovedPin(ctx, issue)
	if err != nil || !ok {
		d.log.Info("pull request not updated: no issue text a writer approved is known", "pr", pr, logkey.Err, err)
		return tasks.RetryPR{}, false, err
	}
	return tasks.RetryPR{Issue: issue, PR: pr, DeliveryID: tasks.RebaseID(issue, pr, base), IssueHash: pin, Rebase: base}, true, nil
}
