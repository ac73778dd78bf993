package webhook

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/patchwright/patchwright/internal/logkey"
	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/patchwright/patchwright/report/marker"
	"github.com/patchwright/patchwright/webhook/payload"
)

// ciFailures are the conclusions of the repository's own CI that start an
// automatic fix attempt. cancelled, neutral, skipped, stale and
// action_required are nobody's verdict on the change.
var ciFailures = map[string]bool{"failure": true, "timed_out": true, "startup_failure": true}

// onCheck handles check_suite, check_run and workflow_run: when the
// repository's own CI fails on the head Patchwright pushed to
// agent/issue-N, it enqueues a fix attempt on that pull request, like a
// `/agent retry` nobody typed. Every event reporting the same failing head
// maps to one task (tasks.CIFixID), so a suite, its runs and its workflow
// run start one attempt between them. The worker checks the head again
// and counts the attempts against ci_fix_attempts.
//
// Nobody approves a CI fix, so it acts only on what a writer did: a run
// from a fork is refused (anyone can push Patchwright's commit to a
// branch of the same name in a fork and make CI fail there), and the task
// carries the pin of the issue text a writer last approved, so an issue
// edited since is not run.
//
// Any other completed check on such a head is where GitHub's
// mergeable_state is looked at (checkMergeable).
func (h *Handler) onCheck(ctx context.Context, d delivery) (response, error) {
	ev, err := d.doc.CheckEvent()
	if err != nil {
		return malformed(d, err), nil
	}
	if ev.Action == "completed" && (!ciFailures[ev.Conclusion] || h.ownApp(ev)) {
		res, handled, err := h.checkMergeable(ctx, d, ev)
		if err != nil || handled {
			return res, err
		}
	}
	switch {
	case ev.Action != "completed":
		return done(http.StatusOK, "ignored action %q", ev.Action), nil
	case !ciFailures[ev.Conclusion]:
		return done(http.StatusOK, "ignored: conclusion %q", ev.Conclusion), nil
	case h.ownApp(ev):
		return done(http.StatusOK, "ignored: Patchwright's own checks"), nil
	}
	issue, res := ciIssue(d, ev)
	if res != nil {
		return *res, nil
	}
	log := d.log.With(logkey.Installation, issue.InstallationID, logkey.Issue, issue.String())
	pr, res, err := h.ciPullRequest(ctx, issue, ev)
	if err != nil {
		return response{}, err
	}
	if res != nil {
		return *res, nil
	}
	pin, ok, err := h.queue.ApprovedPin(ctx, issue)
	if err != nil {
		return response{}, err
	}
	if !ok {
		return done(http.StatusOK, "ignored: no issue text a writer approved is known for %s; comment `/agent retry` to fix CI", issue), nil
	}
	d.audited("ci fix ("+ev.Name+" failed)", "patchwright", issue)
	if d.audit != nil {
		d.audit.PR = pr.Number
	}
	enq, err := h.queue.EnqueueRetry(ctx, tasks.RetryPR{Issue: issue, PR: pr.Number, DeliveryID: tasks.CIFixID(issue, ev.HeadSHA),
		IssueHash: pin, CIHead: ev.HeadSHA, CIReported: ciReported(d.event, ev)})
	if err != nil {
		return response{}, err
	}
	return ciFixEnqueued(enq, issue, ev, log), nil
}

// ciIssue is the issue of the Patchwright branch a failed CI run ran
// on; a response instead when the run is not one to fix (another
// branch, a merge queue's, a fork's) or its payload is malformed.
func ciIssue(d delivery, ev payload.CheckEvent) (tasks.Issue, *response) {
	n, ok := jobs.ParseAgentBranch(ev.HeadBranch)
	if pr, queued := mergeQueuePR(ev.HeadBranch); !ok && queued {
		res := done(http.StatusOK, "ignored: %s is a merge queue's temporary branch: it holds the base, the pull requests queued before #%d and #%d itself, so its failure is not one change's to fix; GitHub takes #%d out of the queue, and CI on its own head is what starts a fix", ev.HeadBranch, pr, pr, pr)
		return tasks.Issue{}, &res
	}
	if !ok {
		res := done(http.StatusOK, "ignored: branch %q is not a Patchwright branch", ev.HeadBranch)
		return tasks.Issue{}, &res
	}
	if why := forkRun(d.event, ev); why != "" {
		res := done(http.StatusOK, "ignored: %s", why)
		return tasks.Issue{}, &res
	}
	issue, res := issueOf(ev.Installation, ev.Repo, n)
	if res != nil {
		return tasks.Issue{}, res
	}
	if !tasks.ValidSHA(ev.HeadSHA) {
		res := done(http.StatusBadRequest, "malformed %s payload: head_sha %q", d.event, ev.HeadSHA)
		return tasks.Issue{}, &res
	}
	return issue, nil
}

// ciPullRequest is the open pull request whose head the failed run
// checked, when Patchwright pushed that head; a response instead when
// there is none, the head moved on, or someone else pushed it.
func (h *Handler) ciPullRequest(ctx context.Context, issue tasks.Issue, ev payload.CheckEvent) (githubapi.PullRequest, *response, error) {
	pr, open, err := h.github.FindPullRequest(ctx, issue, ev.HeadBranch)
	var res response
	switch {
	case err != nil:
		return pr, nil, err
	case !open:
		res = done(http.StatusOK, "ignored: no open pull request from %s", ev.HeadBranch)
	case pr.HeadSHA != ev.HeadSHA:
		res = done(http.StatusOK, "ignored: CI result for %s, the pull request's head is now %s", short(ev.HeadSHA), short(pr.HeadSHA))
	case marker.ParsePushed(pr.Body) != ev.HeadSHA:
		// Someone else pushed this head: their CI result is theirs to fix.
		res = done(http.StatusOK, "ignored: head %s was not pushed by Patchwright", short(ev.HeadSHA))
	default:
		return pr, nil, nil
	}
	return pr, &res, nil
}

// mergeQueueRE is the temporary branch GitHub's merge queue builds and
// runs CI on: gh-readonly-queue/<base>/pr-<number>-<head SHA>.
var mergeQueueRE = regexp.MustCompile(`^gh-readonly-queue/.+/pr-([0-9]+)-[0-9a-f]{40}$`)

// mergeQueuePR is the pull request whose merge group branch is branch.
func mergeQueuePR(branch string) (int, bool) {
	m := mergeQueueRE.FindStringSubmatch(branch)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	return n, err == nil
}

// ciFixEnqueued is the answer to a CI failure whose fix attempt was
// offered to the queue, by what the queue did with it.
func ciFixEnqueued(enq jobs.EnqueueResult, issue tasks.Issue, ev payload.CheckEvent, log *slog.Logger) response {
	switch enq.Outcome {
	case jobs.Enqueued:
		log.Info("CI failed on Patchwright's head; fix attempt enqueued", "head", ev.HeadSHA, "check", ev.Name)
		return done(http.StatusAccepted, "CI fix of %s enqueued", issue)
	case jobs.Busy:
		// Not answered with a comment: nobody asked, and the running job
		// will push a new head that CI checks again.
		return done(http.StatusOK, "busy: task %s is active; CI fix not started", enq.ActiveTaskID)
	}
	return done(http.StatusOK, "CI fix for %s already enqueued", short(ev.HeadSHA))
}

// forkRun says why a CI result is not from a branch of the repository
// itself ("" when it is): a workflow run whose head repository is another
// (a fork's pull request), or a suite or run listing a pull request whose
// head is in another repository. GitHub gives a fork's check suite no
// head branch, which ParseAgentBranch already refuses; a workflow run
// keeps the fork's branch name, so its head repository decides.
func forkRun(event string, ev payload.CheckEvent) string {
	if ev.RepoID == 0 {
		return "the payload names no repository id"
	}
	if event == "workflow_run" && ev.HeadRepoID != ev.RepoID {
		return fmt.Sprintf("the run's head is in repository %d, not in this one (%d): a fork's", ev.HeadRepoID, ev.RepoID)
	}
	for i, id := range ev.PullHeadRepoIDs {
		if id != ev.RepoID {
			return fmt.Sprintf("pull request #%d's head is in repository %d, not in this one (%d): a fork's", ev.PullRequests[i], id, ev.RepoID)
		}
	}
	return ""
}

// ownApp reports whether the suite or run is Patchwright's own: its check
// runs report its verification, which the attempt already acted on.
func (h *Handler) ownApp(ev payload.CheckEvent) bool {
	if h.cfg.AppID != 0 && ev.AppID == h.cfg.AppID {
		return true
	}
	return ev.AppSlug != "" && strings.EqualFold(ev.AppSlug+"[bot]", h.cfg.BotLogin)
}

// ciReported says in a few words what the event reported, for the history.
func ciReported(event string, ev payload.CheckEvent) string {
	what := map[string]string{"check_suite": "check suite", "check_run": "check run", "workflow_run": "workflow"}[event]
	if ev.Name != "" {
		what += " " + ev.Name
	}
	return fmt.Sprintf("%s: %s", what, ev.Conclusion)
}

func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}
