package webhook

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/patchwright/patchwright/jobs"
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
// maps to one task (jobs.CIFixID), so a suite, its runs and its workflow
// run start one attempt between them. The worker checks the head again
// and counts the attempts against ci_fix_attempts.
func (h *Handler) onCheck(ctx context.Context, d delivery) (response, error) {
	ev, err := d.doc.CheckEvent()
	if err != nil {
		return malformed(d, err), nil
	}
	switch {
	case ev.Action != "completed":
		return done(http.StatusOK, "ignored action %q", ev.Action), nil
	case !ciFailures[ev.Conclusion]:
		return done(http.StatusOK, "ignored: conclusion %q", ev.Conclusion), nil
	case h.ownApp(ev):
		return done(http.StatusOK, "ignored: Patchwright's own checks"), nil
	}
	n, ok := jobs.ParseAgentBranch(ev.HeadBranch)
	if !ok {
		return done(http.StatusOK, "ignored: branch %q is not a Patchwright branch", ev.HeadBranch), nil
	}
	issue, res := issueOf(ev.Installation, ev.Repo, n)
	if res != nil {
		return *res, nil
	}
	if !jobs.ValidSHA(ev.HeadSHA) {
		return done(http.StatusBadRequest, "malformed %s payload: head_sha %q", d.event, ev.HeadSHA), nil
	}
	log := d.log.With(jobs.LogInstallation, issue.InstallationID, jobs.LogIssue, issue.String())
	pr, open, err := h.github.FindPullRequest(ctx, issue, ev.HeadBranch)
	if err != nil {
		return response{}, err
	}
	switch {
	case !open:
		return done(http.StatusOK, "ignored: no open pull request from %s", ev.HeadBranch), nil
	case pr.HeadSHA != ev.HeadSHA:
		return done(http.StatusOK, "ignored: CI result for %s, the pull request's head is now %s", short(ev.HeadSHA), short(pr.HeadSHA)), nil
	case jobs.ParsePushed(pr.Body) != ev.HeadSHA:
		// Someone else pushed this head: their CI result is theirs to fix.
		return done(http.StatusOK, "ignored: head %s was not pushed by Patchwright", short(ev.HeadSHA)), nil
	}
	enq, err := h.queue.EnqueueRetry(ctx, jobs.RetryPR{Issue: issue, PR: pr.Number, DeliveryID: jobs.CIFixID(issue, ev.HeadSHA),
		CIHead: ev.HeadSHA, CIReported: ciReported(d.event, ev)})
	if err != nil {
		return response{}, err
	}
	switch enq.Outcome {
	case jobs.Enqueued:
		log.Info("CI failed on Patchwright's head; fix attempt enqueued", "head", ev.HeadSHA, "check", ev.Name)
		return done(http.StatusAccepted, "CI fix of %s enqueued", issue), nil
	case jobs.Busy:
		// Not answered with a comment: nobody asked, and the running job
		// will push a new head that CI checks again.
		return done(http.StatusOK, "busy: task %s is active; CI fix not started", enq.ActiveTaskID), nil
	}
	return done(http.StatusOK, "CI fix for %s already enqueued", short(ev.HeadSHA)), nil
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
