package githubjob

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// Feedback bounds: the model hears the latest maxFeedbackComments of each
// kind, each cut to maxFeedbackBytes.
const (
	maxFeedbackComments = 20
	maxFeedbackBytes    = 1000
)

// errIssueEdited is a job whose issue changed after its trigger pinned it
// (tasks.IssueHash): running it would run text nobody approved.
var errIssueEdited = errors.New("the issue was edited after its trigger")

// checkPin refuses an issue whose text is not the text the trigger saw.
// A task from before pins existed has no hash and is not checked.
func checkPin(pin string, text githubapi.IssueText) error {
	if pin == "" || tasks.IssueHash(text.Title, text.Body) == pin {
		return nil
	}
	return permanent(errIssueEdited)
}

// writers tells whose words reach the model: only people with write
// access to the repository (anyone can comment on a public repository,
// and a comment is a way to instruct the model). Each login is looked up
// once per job.
type writers struct {
	gh    attemptSource
	repo  tasks.Issue
	bot   string
	known map[string]bool
}

func (w *writers) can(ctx context.Context, login string) (bool, error) {
	key := strings.ToLower(login)
	if ok, seen := w.known[key]; seen {
		return ok, nil
	}
	if w.known == nil {
		w.known = map[string]bool{}
	}
	p, err := w.gh.Permission(ctx, w.repo, login)
	if err != nil {
		return false, err
	}
	w.known[key] = p.CanWrite()
	return w.known[key], nil
}

// maxAuthorLookups bounds the permission lookups of one filter: a busy
// issue's many commenters must not spend the installation's rate limit.
const maxAuthorLookups = 3 * maxFeedbackComments

// filter keeps the comments written at or after since (all for a zero
// since) by people with write access, leaving out the app's own and other
// bots'; the latest maxFeedbackComments of them, oldest first. It looks
// from the newest back and stops after maxAuthorLookups new authors.
func (w *writers) filter(ctx context.Context, cs []githubapi.Comment, since time.Time) ([]githubapi.Comment, error) {
	var out []githubapi.Comment
	lookups := 0
	for i := len(cs) - 1; i >= 0 && len(out) < maxFeedbackComments; i-- {
		c := cs[i]
		if c.Author == "" || strings.EqualFold(c.Author, w.bot) || strings.HasSuffix(strings.ToLower(c.Author), "[bot]") ||
			strings.TrimSpace(c.Body) == "" || (!since.IsZero() && c.Created.Before(since)) {
			continue
		}
		if _, seen := w.known[strings.ToLower(c.Author)]; !seen {
			if lookups == maxAuthorLookups {
				break
			}
			lookups++
		}
		ok, err := w.can(ctx, c.Author)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, c)
		}
	}
	slices.Reverse(out)
	return out, nil
}

// commentList renders comments under a heading; "" for none.
func commentList(heading string, cs []githubapi.Comment) string {
	if len(cs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n" + heading + "\n")
	for _, c := range cs {
		who := "@" + c.Author
		if c.State != "" {
			who += " (" + strings.ToLower(strings.ReplaceAll(c.State, "_", " ")) + ")"
		}
		if c.Path != "" {
			who = fmt.Sprintf("%s:%d %s", c.Path, c.Line, who)
		}
		fmt.Fprintf(&b, "- %s: %s\n", who, clip(strings.TrimSpace(c.Body), maxFeedbackBytes))
	}
	return b.String()
}

// issueContext is what a solve adds to the requester's instructions: the
// issue's comments by people with write access.
func (p *Pipeline) issueContext(ctx context.Context, w *writers, issue tasks.Issue) (string, error) {
	cs, err := p.GitHub.Comments(ctx, issue)
	if err != nil {
		return "", err
	}
	kept, err := w.filter(ctx, cs, time.Time{})
	if err != nil {
		return "", err
	}
	return commentList("Comments on the issue by people with write access (oldest first):", kept), nil
}
