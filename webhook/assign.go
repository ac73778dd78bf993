package webhook

import (
	"context"
	"net/http"
	"strings"

	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/patchwright/patchwright/webhook/payload"
)

// Assignment: an issue assigned to the app's bot user starts a run as the
// trigger label does (startIssue), and unassigning it stops the run as
// removing the label does (onIssueLifecycle). An issue labelled and
// assigned at once is one run: the second trigger finds the first's job
// (sameStart).

// onAssigned handles issues.assigned: to the app, a start; to anyone
// else, nothing.
func (h *Handler) onAssigned(ctx context.Context, d delivery, ev payload.Issues) (response, error) {
	if !h.isApp(ev.Assignee) {
		return done(http.StatusOK, "assigned %q, not the app", ev.Assignee), nil
	}
	return h.startIssue(ctx, d, ev, issueTrigger{trigger: tasks.TriggerAssigned, what: "assigning the issue to @" + h.slug()})
}

// isApp reports whether login is the app's bot user, "<slug>[bot]".
func (h *Handler) isApp(login string) bool {
	return login != "" && strings.EqualFold(login, h.cfg.BotLogin)
}

// slug is the app's slug, the name people @mention: BotLogin without
// "[bot]".
func (h *Handler) slug() string {
	return strings.TrimSuffix(strings.TrimSuffix(h.cfg.BotLogin, "[bot]"), "[BOT]")
}

// sameStart answers a label or assignment that found its issue busy with
// the other trigger's job on the same text: one run, and nothing said (the
// run's status comment speaks for both). same is false for any other
// outcome, which enqueued answers.
func (h *Handler) sameStart(ctx context.Context, enq jobs.EnqueueResult, pin string, t issueTrigger) (response, bool, error) {
	if enq.Outcome != jobs.Busy || t.plan {
		return response{}, false, nil
	}
	same, err := h.queue.SameStart(ctx, enq.ActiveTaskID, pin, t.trigger)
	if err != nil || !same {
		return response{}, false, err
	}
	return done(http.StatusOK, "already started: task %s runs this issue's text; %s adds nothing", enq.ActiveTaskID, t.what), true, nil
}
