package githubjob

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/patchwright/patchwright/internal/logkey"
	"github.com/patchwright/patchwright/internal/text"

	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/pipeline"
	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/patchwright/patchwright/report"
	"github.com/patchwright/patchwright/report/marker"
)

// prepareRetry points a retry at the pull request's branch and tells the
// model what the last attempt left: its failed checks, the history, the
// review comments still open, and the reviews and conversation comments
// since the last attempt, of people with write access only.
func (p *Pipeline) prepareRetry(ctx context.Context, a request, w *writers, job *pipeline.Job, pub *publisher) error {
	prIssue := a.issue
	prIssue.Number = a.pr
	pr, err := p.GitHub.GetPullRequest(ctx, prIssue)
	if err != nil {
		return err
	}
	if pr.State != "open" || pr.HeadRef != pub.branch {
		return permanent(fmt.Errorf("pull request #%d is %s with head %q, not an open pull request from %s", a.pr, pr.State, pr.HeadRef, pub.branch))
	}
	// The clone is the agent branch; its configuration is the default
	// branch's, which the last attempt could not write.
	pub.pr, pub.base, job.Branch, job.ConfigBranch = &pr, pr.BaseRef, pub.branch, job.Branch
	if job.Foreign, err = p.foreignCommits(ctx, a.issue, pr); err != nil {
		return err
	}
	h := report.ParseHistory(pr.Body)
	if len(h.Attempts) == 0 {
		// The body lost its history: count the earlier attempt at least.
		h.Attempts = []report.Attempt{{Number: 1, Outcome: "unknown", Reason: "the history was not found in the pull request body"}}
	}
	job.History, job.Attempt.Number = h.Attempts, len(h.Attempts)+1
	lines, err := p.GitHub.ReviewComments(ctx, prIssue)
	if errors.Is(err, githubapi.ErrThreadsUnknown) {
		p.logger().Warn("review comments of resolved threads are not told apart", logkey.Err, err)
	} else if err != nil {
		return err
	}
	if lines, err = w.filter(ctx, lines, time.Time{}); err != nil {
		return err
	}
	since := h.Attempts[len(h.Attempts)-1].Started
	reviews, err := p.GitHub.Reviews(ctx, prIssue)
	if err != nil {
		return err
	}
	if reviews, err = w.filter(ctx, reviews, since); err != nil {
		return err
	}
	talk, err := p.GitHub.Comments(ctx, prIssue)
	if err != nil {
		return err
	}
	if talk, err = w.filter(ctx, talk, since); err != nil {
		return err
	}
	job.Issue.Feedback = retryFeedback(a, h, lines) +
		commentList("Reviews since the previous attempt:", reviews) +
		commentList("Comments on the pull request since the previous attempt:", talk)
	if a.ciHead != "" {
		return p.prepareCIFix(ctx, a, h, job)
	}
	if a.conflict != nil {
		job.Merge = &a.conflict.job
		return nil
	}
	if a.rebase != "" {
		pub.rebased = pr.HeadSHA
		job.Issue.Feedback = rebaseFeedback(a) + "\n" + job.Issue.Feedback
	}
	return nil
}

// prepareCIFix adds what the repository's CI reported to a CI fix's
// feedback and history, and bounds it by ci_fix_attempts.
func (p *Pipeline) prepareCIFix(ctx context.Context, a request, h report.History, job *pipeline.Job) error {
	checks, err := p.GitHub.FailedChecks(ctx, a.issue, a.ciHead)
	if err != nil {
		return err
	}
	a.ciReported = ciReportedOf(checks, a.ciReported)
	job.Attempt.Trigger = fmt.Sprintf("%s on %s: %s", ciTrigger, shortSHA(a.ciHead), a.ciReported)
	if note := rerunNote(a.at.Rerun); note != "" {
		job.Attempt.Trigger += "; " + note
	}
	job.Issue.Feedback = ciFeedback(a.ciHead, checks, a.ciReported) + "\n" + job.Issue.Feedback
	job.Admit = ciAdmit(a, h.Attempts)
	return nil
}

// foreignCommits lists the commits pushed to the pull request's branch
// since Patchwright's last push (the body's pushed marker): the retry
// builds on them, and the body must say they are not Patchwright's.
func (p *Pipeline) foreignCommits(ctx context.Context, repo tasks.Issue, pr githubapi.PullRequest) (report.Foreign, error) {
	pushed := marker.ParsePushed(pr.Body)
	if pushed == "" || pr.HeadSHA == "" || pushed == pr.HeadSHA {
		return report.Foreign{}, nil
	}
	commits, more, err := p.GitHub.CommitsBetween(ctx, repo, pushed, pr.HeadSHA)
	if err != nil {
		return report.Foreign{}, err
	}
	f := report.Foreign{More: more}
	for _, c := range commits {
		f.Commits = append(f.Commits, report.ForeignCommit{SHA: c.SHA, Author: c.Author, Subject: c.Subject, Files: c.Files, MoreFiles: c.MoreFiles})
	}
	return f, nil
}

// coAuthor is the Co-authored-by trailer of the requester, with the
// no-reply address GitHub links to the account.
func (p *Pipeline) coAuthor(ctx context.Context, a request) (string, error) {
	u, err := p.GitHub.User(ctx, a.issue, a.requester)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Co-authored-by: %s <%s>", u.Login, u.Email()), nil
}

// requestText is what the requester asked, framed for the model: their
// changes to a plan, or their instructions for an attempt.
func requestText(a request) string {
	text := strings.TrimSpace(a.instructions)
	switch {
	case a.previousPlan != "" && text == "":
		return fmt.Sprintf("@%s asked for a revised plan without saying what to change.", a.requester)
	case a.previousPlan != "":
		return fmt.Sprintf("@%s asked for these changes to the earlier plan: %s", a.requester, text)
	case a.planning && text != "":
		return fmt.Sprintf("@%s asked for this plan: %s", a.requester, text)
	case a.approvedPlan != "" && text != "":
		return fmt.Sprintf("@%s approved the plan with these notes: %s", a.requester, text)
	case a.approvedPlan != "":
		return ""
	}
	return instructionsText(a.requester, a.instructions)
}

// instructionsText frames a requester's free text for the model.
func instructionsText(by, text string) string {
	if strings.TrimSpace(text) == "" {
		return ""
	}
	return fmt.Sprintf("@%s asked for this attempt: %s", by, strings.TrimSpace(text))
}

// retryFeedback is what the model hears on a retry: the reviewer's words,
// the checks the last attempt failed, and the review comments still on
// the diff.
func retryFeedback(a request, h report.History, reviews []githubapi.Comment) string {
	var b strings.Builder
	if s := instructionsText(a.requester, a.instructions); s != "" {
		b.WriteString(s + "\n\n")
	} else if a.ciHead != "" {
		b.WriteString("Nobody asked for this attempt: the repository's CI did (above).\n\n")
	} else if a.conflict != nil {
		b.WriteString("This attempt resolves the conflicts of merging the base branch in (above).\n\n")
	} else if a.rebase != "" {
		b.WriteString("This attempt checks the branch after its base was merged in (above).\n\n")
	} else {
		fmt.Fprintf(&b, "@%s asked for another attempt without further instructions.\n\n", a.requester)
	}
	b.WriteString("The branch already holds the previous attempt (and any commits people added); improve on it.\n")
	if len(h.Failed) > 0 {
		b.WriteString("\nChecks that failed after the previous attempt:\n")
		for _, c := range h.Failed {
			fmt.Fprintf(&b, "- %s (`%s`), end of output:\n%s\n", c.Name, c.Command, c.Output)
		}
	}
	b.WriteString(commentList("Review comments on the pull request:", reviews))
	return b.String()
}

// clip keeps at most n bytes of s, cut at a character boundary, with an
// ellipsis when it cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return text.Head(s, n) + "…"
}
