package webhook

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/patchwright/patchwright/internal/logkey"
	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/patchwright/patchwright/report/marker"
	"github.com/patchwright/patchwright/webhook/payload"
)

// The lifecycle of what Patchwright started: a closed issue or a removed
// trigger label stops the issue's running attempt; a closed or merged
// Patchwright pull request has its branch deleted when nobody else pushed
// to it; an uninstalled app, or a repository taken from the installation,
// stops the jobs it can no longer finish; a review that requests changes
// with an `/agent retry` line starts a retry.

// onIssueLifecycle stops the issue's running job for an issue closed, for
// the trigger label removed, or for the app unassigned. Nothing is answered: the person did it
// on purpose, and the job's status comment says it stopped.
func (h *Handler) onIssueLifecycle(ctx context.Context, d delivery, ev payload.Issues) (response, error) {
	why := "closed the issue"
	if ev.Action == "unlabeled" {
		if !strings.EqualFold(ev.Label, h.cfg.TriggerLabel) {
			return done(http.StatusOK, "label %q is not the trigger", ev.Label), nil
		}
		why = "removed the " + h.cfg.TriggerLabel + " label"
	}
	if ev.Action == "unassigned" {
		if !h.isApp(ev.Assignee) {
			return done(http.StatusOK, "unassigned %q, not the app", ev.Assignee), nil
		}
		why = "unassigned " + h.cfg.BotLogin
	}
	issue, res := issueOf(ev.Installation, ev.Repo, ev.Issue.Number)
	if res != nil {
		return *res, nil
	}
	id, err := h.queue.Cancel(ctx, issue, jobs.CancelBy(ev.Sender.Login, why))
	if err != nil {
		return response{}, err
	}
	if id == "" {
		return done(http.StatusOK, "%s: nothing was running", why), nil
	}
	d.audited("stop ("+why+")", ev.Sender.Login, issue)
	d.log.Info("job cancelled", logkey.Issue, issue.String(), logkey.Task, id, "why", why)
	return done(http.StatusOK, "%s: stopped task %s", why, id), nil
}

// onPullRequest handles pull_request.closed on a pull request Patchwright
// opened from agent/issue-N of the same repository: it stops a retry
// still running on it and, when the branch's head is the commit
// Patchwright last pushed (the body's PushedMarker), has the branch
// deleted. A branch someone else pushed to is kept, silently.
func (h *Handler) onPullRequest(ctx context.Context, d delivery) (response, error) {
	ev, err := d.doc.PullRequest()
	if err != nil {
		return malformed(d, err), nil
	}
	if ev.Action == "synchronize" {
		return h.approvalOf(ctx, d, ev.Installation, ev.Repo, ev.PullRequest)
	}
	if ev.Action != "closed" {
		return done(http.StatusOK, "ignored action %q", ev.Action), nil
	}
	pr := ev.PullRequest
	n, ok := jobs.ParseAgentBranch(pr.HeadRef)
	switch {
	case !strings.EqualFold(pr.Author, h.cfg.BotLogin):
		return done(http.StatusOK, "ignored: pull request not opened by %s", h.cfg.BotLogin), nil
	case !ok || !strings.EqualFold(pr.HeadRepo, ev.FullName):
		return done(http.StatusOK, "ignored: head %s:%s is not a Patchwright branch of this repository", pr.HeadRepo, pr.HeadRef), nil
	}
	issue, res := issueOf(ev.Installation, ev.Repo, n)
	if res != nil {
		return *res, nil
	}
	// The pull request's outcome, for the audit log: the first fact the
	// outcome figures will rest on.
	outcome := "pull request closed unmerged"
	if pr.Merged {
		outcome = "pull request merged"
	}
	d.audited(outcome, ev.Sender.Login, issue)
	if d.audit != nil {
		d.audit.PR = pr.Number
	}
	if _, err := h.queue.Cancel(ctx, issue, jobs.CancelBy(ev.Sender.Login, "closed the pull request")); err != nil {
		return response{}, err
	}
	// Its outcome is read from GitHub by the worker (jobs/outcomes); a
	// redelivery is a duplicate there, and the branch is still handled.
	prIssue := issue
	prIssue.Number = pr.Number
	if _, err := h.queue.EnqueueOutcome(ctx, tasks.Outcome{Issue: prIssue, DeliveryID: d.id}); err != nil {
		return response{}, err
	}
	pushed := marker.ParsePushed(pr.Body)
	if pushed == "" || !strings.EqualFold(pushed, pr.HeadSHA) {
		return done(http.StatusOK, "kept %s: its head %s is not the commit Patchwright pushed (%q)", pr.HeadRef, pr.HeadSHA, pushed), nil
	}
	enq, err := h.queue.EnqueueDeleteBranch(ctx, tasks.DeleteBranch{Issue: issue, PR: pr.Number, SHA: pushed, DeliveryID: d.id})
	if err != nil {
		return response{}, err
	}
	if enq.Outcome == jobs.Duplicate {
		return done(http.StatusOK, "duplicate delivery"), nil
	}
	return done(http.StatusAccepted, "deletion of %s enqueued", pr.HeadRef), nil
}

// onReview handles pull_request_review.submitted: a review that requests
// changes on an open Patchwright pull request, with an `/agent retry`
// line in its body, by someone with write access, starts a retry with the
// rest of that line (and the lines below) as instructions. Any other
// review only waits to be read by the next retry.
func (h *Handler) onReview(ctx context.Context, d delivery) (response, error) {
	ev, err := d.doc.PullRequestReview()
	if err != nil {
		return malformed(d, err), nil
	}
	if ev.Action != "submitted" && ev.Action != "dismissed" {
		return done(http.StatusOK, "ignored action %q", ev.Action), nil
	}
	// Any verdict, or its dismissal, may settle the approval check.
	res, err := h.approvalOf(ctx, d, ev.Installation, ev.Repo, ev.PullRequest)
	if err != nil || ev.Action == "dismissed" || !strings.EqualFold(ev.Review.State, "changes_requested") {
		return res, err
	}
	sender := ev.Sender
	if isBot(sender.Login, sender.Type) || strings.EqualFold(sender.Login, h.cfg.BotLogin) {
		return done(http.StatusOK, "ignored: sender %s is a bot", sender.Login), nil
	}
	cmd := ParseComment(ev.Review.Body)
	if cmd.Command != CommandRetry {
		return done(http.StatusOK, "no /agent retry in the review"), nil
	}
	pr := ev.PullRequest
	n, ok := jobs.ParseAgentBranch(pr.HeadRef)
	switch {
	case !strings.EqualFold(pr.Author, h.cfg.BotLogin):
		return done(http.StatusOK, "ignored: pull request not opened by %s", h.cfg.BotLogin), nil
	case !ok || !strings.EqualFold(pr.HeadRepo, ev.FullName):
		return done(http.StatusOK, "ignored: head %q is not a Patchwright branch of this repository", pr.HeadRef), nil
	case pr.State != "open":
		return done(http.StatusOK, "ignored: pull request is %s", pr.State), nil
	}
	target, bad := issueOf(ev.Installation, ev.Repo, pr.Number)
	if bad != nil {
		return *bad, nil
	}
	c := commentCtx{d: d, target: target, sender: sender.Login, cmd: cmd, isPR: true}
	ok, role, err := h.github.CanWrite(ctx, target, sender.Login)
	if err != nil {
		return response{}, err
	}
	if !ok {
		msg := fmt.Sprintf("@%s, `/agent retry` needs write, maintain or admin permission on this repository (yours: %s).", sender.Login, role)
		return h.answer(ctx, c, msg, "refused: no write permission")
	}
	issue := target
	issue.Number = n
	return h.retryPR(ctx, c, issue)
}

// onInstallation handles installation events: an app uninstalled or
// suspended stops the jobs of its repositories (the payload lists them;
// for an installation on all repositories, every job of the account).
func (h *Handler) onInstallation(ctx context.Context, d delivery) (response, error) {
	ev, err := d.doc.Installation()
	if err != nil {
		return malformed(d, err), nil
	}
	if ev.Action != "deleted" && ev.Action != "suspend" {
		return done(http.StatusOK, "installation %s: nothing to do", ev.Action), nil
	}
	repos := ev.Repositories
	if len(repos) == 0 && ev.Account != "" {
		repos = []string{ev.Account + "/"}
	}
	return h.cancelRepos(ctx, d, ev, repos, "installation "+ev.Action)
}

// onInstallationRepositories handles repositories taken from an
// installation: their jobs stop.
func (h *Handler) onInstallationRepositories(ctx context.Context, d delivery) (response, error) {
	ev, err := d.doc.Installation()
	if err != nil {
		return malformed(d, err), nil
	}
	if ev.Action != "removed" {
		return done(http.StatusOK, "installation_repositories %s: nothing to do", ev.Action), nil
	}
	return h.cancelRepos(ctx, d, ev, ev.Repositories, "repositories removed from the installation")
}

// cancelRepos cancels the jobs of repos ("owner/name", or "owner/" for
// every repository of owner).
func (h *Handler) cancelRepos(ctx context.Context, d delivery, ev payload.Installation, repos []string, why string) (response, error) {
	var stopped []string
	for _, full := range repos {
		owner, name, ok := strings.Cut(full, "/")
		if !ok || owner == "" {
			continue
		}
		ids, err := h.queue.CancelRepo(ctx, owner, name, jobs.CancelBy(ev.Sender.Login, why))
		if err != nil {
			return response{}, err
		}
		stopped = append(stopped, ids...)
	}
	if len(stopped) > 0 {
		d.log.Info("jobs cancelled", logkey.Installation, ev.Installation, "tasks", stopped, "why", why)
	}
	return done(http.StatusOK, "%s: stopped %d jobs", why, len(stopped)), nil
}

// approvalOf has the approval check of an open Patchwright pull request
// brought up to date by the worker, which reads whether the repository
// asks for one (`approval: independent`) from its default branch: the
// webhook has no configuration. One task per delivery; the worker reads
// the pull request as it is then, so order does not matter.
func (h *Handler) approvalOf(ctx context.Context, d delivery, inst int64, repo payload.Repo, pr payload.PullRequest) (response, error) {
	fullName := repo.Owner + "/" + repo.Name
	_, ok := jobs.ParseAgentBranch(pr.HeadRef)
	switch {
	case !strings.EqualFold(pr.Author, h.cfg.BotLogin):
		return done(http.StatusOK, "ignored: pull request not opened by %s", h.cfg.BotLogin), nil
	case !ok || !strings.EqualFold(pr.HeadRepo, fullName):
		return done(http.StatusOK, "ignored: head %s:%s is not a Patchwright branch of this repository", pr.HeadRepo, pr.HeadRef), nil
	case pr.State != "open":
		return done(http.StatusOK, "ignored: pull request is %s", pr.State), nil
	}
	target, res := issueOf(inst, repo, pr.Number)
	if res != nil {
		return *res, nil
	}
	enq, err := h.queue.EnqueueApproval(ctx, tasks.Approval{Issue: target, DeliveryID: d.id})
	if err != nil {
		return response{}, err
	}
	if enq.Outcome == jobs.Duplicate {
		return done(http.StatusOK, "duplicate delivery"), nil
	}
	return done(http.StatusAccepted, "approval check of #%d enqueued", pr.Number), nil
}
