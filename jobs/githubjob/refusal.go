package githubjob

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/transport"

	"github.com/patchwright/patchwright/jobs/githubapi"
)

// refusal is a step GitHub refused in a way that trying again cannot
// change: a permission the app lacks, a 422, a push the remote declined.
// It ends the job at once (asynq.SkipRetry): a retry would only run the
// model again and fail at the same place.
type refusal struct {
	// what the step does, completing "Patchwright cannot …".
	what string
	// need is the permission the step needs, in GitHub's settings
	// spelling ("pull_requests: write"); "" when no permission helps.
	need string
	// gh is GitHub's answer to an API call; nil for a push.
	gh *githubapi.Refusal
	// pushed is the branch the change was pushed to before the refusal,
	// "" when nothing was pushed.
	pushed string
	err    error
}

func (r *refusal) Error() string { return fmt.Sprintf("cannot %s: %v", r.what, r.err) }
func (r *refusal) Unwrap() error { return r.err }

// reason is the status comment's sentence: what is missing and what the
// maintainer can do about it. It is plain text (the status comment
// escapes Markdown) without a final period (the comment adds one).
func (r *refusal) reason() string {
	var b strings.Builder
	switch {
	case r.gh != nil && r.gh.Forbidden() && r.gh.Lacks(r.need) == "":
		fmt.Fprintf(&b, "Patchwright cannot %s here: GitHub denied it (403 %q). An owner of the repository or organization can check the app's permissions and the repository's rules; then label the issue again or comment /agent retry", r.what, r.gh.Message)
	case r.gh != nil && r.gh.Forbidden():
		need := r.gh.Lacks(r.need)
		fmt.Fprintf(&b, "Patchwright cannot %s here: the app lacks %s (GitHub answered 403 %q). ", r.what, need, r.gh.Message)
		fmt.Fprintf(&b, "An owner of the repository or organization can grant it: in the GitHub App's settings, give it %s, then accept the new permissions on the installation (Settings → GitHub Apps → Configure); then label the issue again or comment /agent retry", need)
	case r.gh != nil:
		fmt.Fprintf(&b, "Patchwright cannot %s here: GitHub refused it (%d %q). Trying again would not change that, so the job stopped", r.what, r.gh.Status, r.gh.Message)
	default:
		fmt.Fprintf(&b, "Patchwright cannot %s: the remote refused the push (%v). Trying again would not change that, so the job stopped. Check the branch's protection rules and the app's permissions", r.what, r.err)
	}
	if r.pushed != "" {
		fmt.Fprintf(&b, ". The change itself was pushed to %s", r.pushed)
	}
	return b.String()
}

// refused wraps err as a permanent refusal when GitHub's answer was one;
// other errors (5xx, network, rate limits) are returned as they are, to
// be retried.
func refused(err error, what, need, pushed string) error {
	if err == nil {
		return nil
	}
	if gh, ok := githubapi.AsRefusal(err); ok {
		return permanent(&refusal{what: what, need: need, gh: gh, pushed: pushed, err: err})
	}
	return err
}

// pushRefused wraps a push the remote declined: no access (HTTP 403 on
// git, or 401 with a token that works), or a ref update the remote
// rejected (a protected branch, a hook, a workflow file without the
// workflows permission). A transport failure is not one.
func pushRefused(err error, branch string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	switch {
	case errors.Is(err, transport.ErrAuthorizationFailed):
		return permanent(&refusal{what: "push " + branch, gh: &githubapi.Refusal{Status: 403, Message: "git push: authorization failed"}, need: "contents: write", err: err})
	case strings.Contains(msg, "command error on"), strings.Contains(msg, "unpack error"),
		strings.Contains(msg, "hook declined"), strings.Contains(msg, "refusing to allow"):
		return permanent(&refusal{what: "push " + branch, err: err})
	}
	return err
}
