package githubjob

import (
	"context"
	"fmt"
	"strings"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/config"
	"github.com/patchwright/patchwright/internal/text"
	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/patchwright/patchwright/report"
	"github.com/patchwright/patchwright/report/marker"
)

// ciTrigger starts the history's trigger of an attempt the repository's
// own CI started; the attempts with it count against ci_fix_attempts.
const ciTrigger = "CI failed"

// Bounds on what the model hears of one failing check.
const (
	maxCIOutputBytes = 2000
	maxCILogBytes    = 4000
	maxCIChecks      = 5
)

// ciSource is what a CI fix reads from GitHub; *githubapi.App satisfies it.
type ciSource interface {
	// FailedChecks lists the failed check runs of other apps on sha,
	// with output, annotations and Actions logs.
	FailedChecks(ctx context.Context, repo tasks.Issue, sha string) ([]githubapi.FailedCheck, error)
}

// errCILimit ends a CI fix that ci_fix_attempts no longer allows.
type errCILimit struct {
	head     string
	reported string
	limit    int
}

func (e *errCILimit) Error() string {
	if e.limit == 0 {
		return fmt.Sprintf("the repository's CI failed on %s (%s); automatic fixes are off (`ci_fix_attempts: 0`), so Patchwright did not try again: comment `/agent retry` to ask for one", shortSHA(e.head), e.reported)
	}
	return fmt.Sprintf("the repository's CI failed on %s (%s); the %d automatic fix attempts `ci_fix_attempts` allows are spent, so Patchwright did not try again: comment `/agent retry` to ask for one", shortSHA(e.head), e.reported, e.limit)
}

// ciApplies reports whether a CI fix still has something to do: the pull
// request is open and its head is still the commit CI failed on, which
// is the commit Patchwright pushed (the hidden marker in the body). A
// head someone else pushed, or a newer one, is not Patchwright's to fix.
// A task without the pin of the text a writer approved (one from before
// the webhook set it) would run whatever the issue says now: not run.
func (p *Pipeline) ciApplies(ctx context.Context, a request) (bool, string, error) {
	if a.issueHash == "" {
		return false, "the task carries no pin of the issue text a writer approved", nil
	}
	prIssue := a.issue
	prIssue.Number = a.pr
	pr, err := p.GitHub.GetPullRequest(ctx, prIssue)
	if err != nil {
		return false, "", err
	}
	switch {
	case pr.State != "open":
		return false, "the pull request is " + pr.State, nil
	case pr.HeadSHA != a.ciHead:
		return false, fmt.Sprintf("its head moved on to %s", shortSHA(pr.HeadSHA)), nil
	case marker.ParsePushed(pr.Body) != a.ciHead:
		return false, "its head was not pushed by Patchwright", nil
	}
	return true, "", nil
}

// ciAttempts counts the attempts in a history that CI started.
func ciAttempts(h []report.Attempt) int {
	n := 0
	for _, at := range h {
		if strings.HasPrefix(at.Trigger, ciTrigger) {
			n++
		}
	}
	return n
}

// ciAdmit refuses a CI fix past the repository's ci_fix_attempts.
func ciAdmit(a request, history []report.Attempt) func(config.Config) error {
	used := ciAttempts(history)
	return func(cfg config.Config) error {
		if limit := cfg.CIFixLimit(); used >= limit {
			return permanent(&errCILimit{head: a.ciHead, reported: a.ciReported, limit: limit})
		}
		return nil
	}
}

// ciFeedback is what the model hears of the failing checks: each one's
// output, annotations and, for Actions, its failing steps' log. All of it
// is stripped of terminal escapes and invisible characters (agent.Strip)
// before it is cut to its bounds, so the bounds count what the model
// reads and a step marker behind a colour code is still found; the
// prompt frames it as untrusted data.
func ciFeedback(head string, checks []githubapi.FailedCheck, reported string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The repository's own CI failed on the commit the previous attempt pushed (%s). Fix what it reports; the branch holds that attempt.\n", shortSHA(head))
	if len(checks) == 0 {
		fmt.Fprintf(&b, "\nGitHub reported %s, but no failed check run with output could be read.\n", reported)
		return b.String()
	}
	for i, c := range checks {
		if i == maxCIChecks {
			fmt.Fprintf(&b, "\n(%d more failed checks left out.)\n", len(checks)-i)
			break
		}
		fmt.Fprintf(&b, "\nFailed check %q (%s): %s\n", c.Name, c.App, c.Conclusion)
		if out := strings.TrimSpace(agent.Strip(strings.Join(nonEmpty(c.Title, c.Summary, c.Text), "\n"))); out != "" {
			fmt.Fprintf(&b, "Output:\n%s\n", clipTail(out, maxCIOutputBytes))
		}
		if len(c.Annotations) > 0 {
			b.WriteString("Annotations:\n")
			for _, an := range c.Annotations {
				fmt.Fprintf(&b, "- %s\n", clip(agent.Strip(an), maxFeedbackBytes))
			}
		}
		if c.Log != "" {
			fmt.Fprintf(&b, "Log of the failing steps:\n%s\n", clipTail(FailingSteps(agent.Strip(c.Log)), maxCILogBytes))
		}
		if c.LogErr != "" {
			fmt.Fprintf(&b, "(Not read: %s.)\n", c.LogErr)
		}
	}
	return b.String()
}

// ciReportedOf names the failing checks for the history and the status
// comment: "test (github-actions): failure, lint (ci-app): timed_out".
func ciReportedOf(checks []githubapi.FailedCheck, fallback string) string {
	if len(checks) == 0 {
		return fallback
	}
	var parts []string
	for i, c := range checks {
		if i == maxCIChecks {
			parts = append(parts, fmt.Sprintf("%d more", len(checks)-i))
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%s): %s", c.Name, c.App, c.Conclusion))
	}
	return strings.Join(parts, ", ")
}

// FailingSteps trims a GitHub Actions job log to the steps that failed:
// a step starts at a "##[group]Run …" line, and a failed one holds an
// "##[error]" line; the timestamps that start each line are dropped. A
// log without an error marker is kept whole (its tail is what matters).
func FailingSteps(log string) string {
	var steps [][]string
	var cur []string
	for _, line := range strings.Split(strings.ReplaceAll(log, "\r\n", "\n"), "\n") {
		line = dropTimestamp(line)
		if strings.HasPrefix(line, "##[group]Run ") && len(cur) > 0 {
			steps = append(steps, cur)
			cur = nil
		}
		cur = append(cur, line)
	}
	steps = append(steps, cur)
	var kept []string
	for _, s := range steps {
		for _, line := range s {
			if strings.HasPrefix(line, "##[error]") {
				kept = append(kept, strings.Join(s, "\n"))
				break
			}
		}
	}
	if len(kept) == 0 {
		return strings.TrimSpace(log)
	}
	return strings.TrimSpace(strings.Join(kept, "\n"))
}

// dropTimestamp removes the RFC 3339 time Actions starts each line with.
func dropTimestamp(line string) string {
	if len(line) > 28 && line[4] == '-' && line[10] == 'T' {
		if i := strings.IndexByte(line, ' '); i > 0 && line[i-1] == 'Z' {
			return line[i+1:]
		}
	}
	return line
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out
}

// clipTail keeps the last n bytes of s (the end of output says most),
// cut at a line start when one is near.
func clipTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = text.Tail(s, n)
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < 200 {
		s = s[i+1:]
	}
	return "…\n" + s
}

func shortSHA(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}
