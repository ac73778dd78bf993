package webhook

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/patchwright/patchwright/internal/logkey"
	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// agentBranch is the branch of Patchwright's pull request for an issue
// (docs/design.md §4.8).

// onIssueComment handles issue_comment.created with a comment command, on a
// pull request opened by the app or on an issue Patchwright worked on.
func (h *Handler) onIssueComment(ctx context.Context, d delivery) (response, error) {
	ev, err := d.doc.IssueComment()
	if err != nil {
		return malformed(d, err), nil
	}
	if ev.Action != "created" {
		return done(http.StatusOK, "ignored action %q", ev.Action), nil
	}
	sender := ev.Sender
	if isBot(sender.Login, sender.Type) || strings.EqualFold(sender.Login, h.cfg.BotLogin) {
		return done(http.StatusOK, "ignored: sender %s is a bot", sender.Login), nil
	}
	cmd, mention := ParseComment(ev.Body), false
	if cmd.Ignore() {
		cmd = ParseMention(ev.Body, h.slug())
		mention = !cmd.Ignore()
	}
	if cmd.Ignore() {
		return done(http.StatusOK, "no command"), nil
	}
	target, res := issueOf(ev.Installation, ev.Repo, ev.Issue.Number)
	if res != nil {
		return *res, nil
	}
	c := commentCtx{d: d, target: target, sender: sender.Login, cmd: cmd, issueHash: tasks.IssueHash(ev.Issue.Title, ev.Issue.Body),
		commentID: ev.CommentID, mention: mention}
	c.d.log = d.log.With(logkey.Installation, target.InstallationID, logkey.Issue, target.String(), logkey.Sender, c.sender, "command", cmd.Command.String())
	if ev.Issue.PullRequest {
		if !strings.EqualFold(ev.Issue.Author, h.cfg.BotLogin) {
			return done(http.StatusOK, "ignored: pull request not opened by %s", h.cfg.BotLogin), nil
		}
		c.isPR = true
	} else if cmd.Command == CommandPlan || mention {
		// A plan or a mention may be the first thing asked on an
		// issue: a writer's needs no label (the permission check
		// follows).
	} else if ok, err := h.workedOn(ctx, ev.Issue.Labels, target); err != nil {
		return response{}, err
	} else if !ok {
		return done(http.StatusOK, "ignored: Patchwright has not worked on %s", target), nil
	}
	return h.command(ctx, c)
}

// commentCtx is one comment command with where it was made.
type commentCtx struct {
	d      delivery
	target tasks.Issue // the issue or pull request commented on
	sender string
	cmd    ParseResult
	isPR   bool
	// issueHash pins the text of the issue commented on (not of a pull
	// request: a retry there pins its issue's text itself).
	issueHash string
	// commentID is the comment's id, for a reaction to it.
	commentID int64
	// mention: the command is an @mention of the app (mention.go).
	mention bool
}

// workedOn reports whether Patchwright was asked to work on an issue: it
// carries the trigger label, or a job was enqueued for it recently.
func (h *Handler) workedOn(ctx context.Context, labels []string, issue tasks.Issue) (bool, error) {
	for _, l := range labels {
		if strings.EqualFold(l, h.cfg.TriggerLabel) {
			return true, nil
		}
	}
	return h.queue.Worked(ctx, issue)
}

func (h *Handler) command(ctx context.Context, c commentCtx) (response, error) {
	c.d.audited("/agent "+c.cmd.Command.String(), c.sender, c.target)
	if c.isPR && c.d.audit != nil {
		c.d.audit.Issue, c.d.audit.PR = 0, c.target.Number
	}
	// The permission first, even for help: what anyone may make the app
	// say is bounded by refuseStranger.
	ok, role, err := h.github.CanWrite(ctx, c.target, c.sender)
	if err != nil {
		return response{}, err
	}
	msg, result := c.cmd.Reply, "answered a malformed command"
	if msg == "" && c.cmd.Command == CommandHelp {
		msg, result = HelpText, "answered help"
	}
	if !ok {
		if msg == "" {
			c.d.log.Info("command refused: no write permission", "role", role)
			msg, result = h.noWrite(c, role), "refused: no write permission"
		}
		return h.refuseStranger(ctx, stranger{d: c.d, issue: c.target, commentID: c.commentID}, msg, result)
	}
	if msg != "" {
		return h.answer(ctx, c, msg, result)
	}
	issue := c.target
	if c.isPR {
		n, res, err := h.prIssue(ctx, c)
		if err != nil {
			return response{}, err
		}
		if res != nil {
			return *res, nil
		}
		issue.Number = n
	}
	return h.runCommand(ctx, c, issue)
}

// runCommand runs a writer's command on issue (the pull request's issue
// for a command on the pull request).
func (h *Handler) runCommand(ctx context.Context, c commentCtx, issue tasks.Issue) (response, error) {
	switch c.cmd.Command {
	case CommandStop:
		return h.stop(ctx, c, issue)
	case CommandNote:
		return h.note(ctx, c, issue)
	case CommandRebase:
		return h.rebase(ctx, c, issue)
	}
	if (c.cmd.Command == CommandPlan || c.cmd.Command == CommandApprove) && c.isPR {
		msg := fmt.Sprintf("`/agent %s` works on the issue, not on its pull request: comment it there, or `/agent retry` here.", c.cmd.Command)
		return h.answer(ctx, c, msg, c.cmd.Command.String()+" on a pull request")
	}
	if c.isPR {
		return h.retryPR(ctx, c, issue)
	}
	pr, open, err := h.github.FindPullRequest(ctx, issue, jobs.AgentBranch(issue.Number))
	if err != nil {
		return response{}, err
	}
	if open {
		return h.answer(ctx, c, fmt.Sprintf("This issue has an open Patchwright pull request, #%d: comment `/agent retry` there.", pr.Number), "pointed to the open pull request")
	}
	return h.solve(ctx, c, issue)
}

// noWrite is the answer to a command (or a mention) from someone whose
// role on the repository is role, short of write.
func (h *Handler) noWrite(c commentCtx, role string) string {
	if c.mention {
		return fmt.Sprintf("@%s, mentioning @%s starts Patchwright only for someone with write, maintain or admin permission on this repository (yours: %s).", c.sender, h.slug(), role)
	}
	return fmt.Sprintf("@%s, `/agent %s` needs write, maintain or admin permission on this repository (yours: %s).", c.sender, c.cmd.Command, role)
}

// solve enqueues the job a command on an issue without an open pull
// request asks for: a plan, an approved attempt, a replan (a retry while
// the issue waits on a plan) or an attempt.
func (h *Handler) solve(ctx context.Context, c commentCtx, issue tasks.Issue) (response, error) {
	p := tasks.SolveIssue{Issue: issue, DeliveryID: c.d.id, Requester: c.sender, Instructions: c.cmd.Instructions, IssueHash: c.issueHash,
		Plan: c.cmd.Command == CommandPlan}
	what := "solve of "
	var approved string // the task whose plan this approves
	switch c.cmd.Command {
	case CommandPlan:
		what = "plan of "
		// A new plan replaces a waiting one: its comment is told.
		plan, waiting, err := h.waitingPlan(ctx, issue)
		if err != nil {
			return response{}, err
		}
		if waiting {
			p.PlanTask = plan.Task
		}
	case CommandApprove:
		plan, ok, err := h.queue.LatestPlan(ctx, issue)
		if err != nil {
			return response{}, err
		}
		if !ok {
			return h.answer(ctx, c, "There is no plan to approve on this issue (none was made, or it is over 30 days old): comment `/agent plan` first.", "approve without a plan")
		}
		p.ApprovedPlan, approved, what = plan.Text, plan.Task, "approved plan of "
		p.PlanTask = plan.Task
	case CommandRetry:
		// While a plan waits for its approval the issue is planning:
		// the retry's text is the writer's changes to that plan, and
		// nothing is changed before someone approves.
		plan, waiting, err := h.waitingPlan(ctx, issue)
		if err != nil {
			return response{}, err
		}
		if waiting {
			p.Plan, p.PreviousPlan, p.PlanTask, what = true, plan.Text, plan.Task, "new plan of "
		}
	}
	enqueue := h.queue.EnqueueSolve
	if c.cmd.Command == CommandRetry {
		// Asked while the last attempt still finishes: it runs next.
		enqueue = h.queue.EnqueueSolveBehind
	}
	enq, err := enqueue(ctx, p)
	if err != nil {
		return response{}, err
	}
	if approved != "" && (enq.Outcome == jobs.Enqueued || enq.Outcome == jobs.Duplicate) {
		// After the enqueue: an approval that started nothing (busy)
		// leaves the plan waiting. A duplicate delivery marks it again,
		// in case the first one failed between the two.
		if _, err := h.queue.ApprovePlan(ctx, issue, approved, c.sender); err != nil {
			return response{}, err
		}
	}
	return h.enqueued(ctx, c.d, c.target, enq, what+issue.String())
}

// waitingPlan is issue's latest plan when it waits for its approval.
func (h *Handler) waitingPlan(ctx context.Context, issue tasks.Issue) (jobs.PlanRecord, bool, error) {
	plan, ok, err := h.queue.LatestPlan(ctx, issue)
	if err != nil || !ok || !plan.Waiting() {
		return jobs.PlanRecord{}, false, err
	}
	return plan, true, nil
}

// retryPR enqueues a retry of the pull request c.target for issue, pinned
// to the issue's text as it is now: the text the retry's requester
// approves.
func (h *Handler) retryPR(ctx context.Context, c commentCtx, issue tasks.Issue) (response, error) {
	text, err := h.github.GetIssue(ctx, issue)
	if gh, ok := githubapi.AsRefusal(err); ok {
		// Gone or out of reach: a redelivery would not change that.
		return done(http.StatusOK, "cannot read %s to pin its text: %v", issue, gh), nil
	}
	if err != nil {
		return response{}, err
	}
	enq, err := h.queue.EnqueueRetry(ctx, tasks.RetryPR{Issue: issue, PR: c.target.Number, DeliveryID: c.d.id, Requester: c.sender,
		Instructions: c.cmd.Instructions, IssueHash: tasks.IssueHash(text.Title, text.Body)})
	if err != nil {
		return response{}, err
	}
	return h.enqueued(ctx, c.d, c.target, enq, "retry of "+issue.String())
}

// prIssue finds the issue a Patchwright pull request belongs to from its
// head branch, agent/issue-N. A closed pull request or another branch gets
// a reply response instead.
func (h *Handler) prIssue(ctx context.Context, c commentCtx) (int, *response, error) {
	pr, err := h.github.GetPullRequest(ctx, c.target)
	if err != nil {
		return 0, nil, err
	}
	n, ok := jobs.ParseAgentBranch(pr.HeadRef)
	if !ok {
		res := done(http.StatusOK, "ignored: head branch %q is not a Patchwright branch", pr.HeadRef)
		return 0, &res, nil
	}
	if pr.State != "open" && (c.cmd.Command == CommandRetry || c.cmd.Command == CommandRebase) {
		res, err := h.answer(ctx, c, "This pull request is closed; comment `/agent retry` on the issue to start a new attempt.", "pull request closed")
		return 0, &res, err
	}
	return n, nil, nil
}

func (h *Handler) stop(ctx context.Context, c commentCtx, issue tasks.Issue) (response, error) {
	id, err := h.queue.Cancel(ctx, issue, c.sender)
	if err != nil {
		return response{}, err
	}
	if id == "" {
		return h.answer(ctx, c, "Nothing is running for this issue.", "nothing to stop")
	}
	c.d.log.Info("job cancelled", logkey.Task, id)
	return h.answer(ctx, c, fmt.Sprintf("Stopped the running attempt (requested by @%s).", c.sender), "stopped task "+id)
}

// note passes a writer's note to the job running on issue.
func (h *Handler) note(ctx context.Context, c commentCtx, issue tasks.Issue) (response, error) {
	res, err := h.queue.AddNote(ctx, issue, jobs.Note{DeliveryID: c.d.id, Author: c.sender, Text: c.cmd.Instructions})
	if err != nil {
		return response{}, err
	}
	switch res {
	case jobs.NoteAdded:
		c.d.log.Info("note queued for the running job")
		// A 👀 on the comment says the note was taken, without a
		// comment for every note.
		ack := tasks.Reply{Issue: c.target, DeliveryID: c.d.id, Reaction: tasks.ReactionNoted, CommentID: c.commentID}
		if _, err := h.queue.EnqueueReply(ctx, ack); err != nil {
			return response{}, err
		}
		return done(http.StatusOK, "note queued for the running job"), nil
	case jobs.NoteDuplicate:
		return done(http.StatusOK, "duplicate delivery"), nil
	case jobs.NoteFull:
		return h.answer(ctx, c, fmt.Sprintf("@%s, %d notes are already waiting for the running attempt; this one was not passed on.", c.sender, jobs.MaxNotes), "notes full")
	}
	return h.answer(ctx, c, "Nothing is running for this issue, so the note was not passed on; comment `/agent retry` with it to start an attempt.", "note: nothing running")
}

// answer posts msg where the comment was made and responds 200.
func (h *Handler) answer(ctx context.Context, c commentCtx, msg, result string) (response, error) {
	if err := h.reply(ctx, c.d, c.target, msg); err != nil {
		return response{}, err
	}
	return done(http.StatusOK, "%s", result), nil
}
