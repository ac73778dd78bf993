package githubapi

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-github/v62/github"
)

// Refusal is an answer from GitHub that asking again cannot change: the
// app lacks a permission (403 "Resource not accessible by integration"),
// the thing is gone (404, 410), or GitHub will not accept what was sent
// (422). Rate limits are never refusals: go-github reports them as
// RateLimitError and AbuseRateLimitError, and RetryTransport waits them
// out first.
type Refusal struct {
	Status int
	// Message is GitHub's message with the messages of its errors list.
	Message string
	// Accepted is GitHub's X-Accepted-GitHub-Permissions header on a 403:
	// the permission sets the endpoint takes, for example
	// "pull_requests=write" ("" when GitHub did not say).
	Accepted string
}

func (r *Refusal) Error() string {
	return fmt.Sprintf("GitHub answered %d %s", r.Status, r.Message)
}

// Lacks names the permission a 403 asked for in GitHub's settings
// spelling ("pull_requests: write"), from X-Accepted-GitHub-Permissions,
// or fallback when the header is missing. Of alternative sets (separated
// by ";") the first is named.
func (r *Refusal) Lacks(fallback string) string {
	first, _, _ := strings.Cut(r.Accepted, ";")
	var names []string
	for p := range strings.SplitSeq(first, ",") {
		if name, level, ok := strings.Cut(strings.TrimSpace(p), "="); ok && name != "" {
			names = append(names, name+": "+level)
		}
	}
	if len(names) == 0 {
		return fallback
	}
	return strings.Join(names, " and ")
}

// Forbidden reports a 403 denial.
func (r *Refusal) Forbidden() bool { return r.Status == http.StatusForbidden }

// AsRefusal finds the Refusal in err: a go-github ErrorResponse of 403,
// 404, 410 or 422 that is not a rate limit.
func AsRefusal(err error) (*Refusal, bool) {
	var r *Refusal
	if errors.As(err, &r) {
		return r, true
	}
	var er *github.ErrorResponse
	if !errors.As(err, &er) || er.Response == nil {
		return nil, false
	}
	resp := er.Response
	switch resp.StatusCode {
	case http.StatusForbidden, http.StatusNotFound, http.StatusGone, http.StatusUnprocessableEntity:
	default:
		return nil, false
	}
	if resp.Header.Get("X-RateLimit-Remaining") == "0" || resp.Header.Get("Retry-After") != "" {
		return nil, false
	}
	msg := er.Message
	for _, e := range er.Errors {
		if e.Message != "" {
			msg += ": " + e.Message
		}
	}
	return &Refusal{Status: resp.StatusCode, Message: msg, Accepted: resp.Header.Get("X-Accepted-GitHub-Permissions")}, true
}

// ErrDraftUnsupported is what CreatePullRequest and SetDraft wrap when the
// repository has no draft pull requests (GitHub's 422 "Draft pull requests
// are not supported in this repository.", for example a private
// repository on GitHub Free).
var ErrDraftUnsupported = errors.New("draft pull requests are not supported in this repository")

// draftRefused reports whether a 422 says drafts are not available. GitHub
// puts the sentence in the errors list under "Validation Failed", so every
// message of the answer is read, not only the top-level one.
func draftRefused(er *github.ErrorResponse) bool { return says(er, draftPhrase) }

// draftPhrase is how GitHub's refusal of a draft begins, lower-cased.
const draftPhrase = "draft pull requests are not supported"

// says reports whether GitHub's message or any message of its errors list
// contains phrase, ignoring case.
func says(er *github.ErrorResponse, phrase string) bool {
	if strings.Contains(strings.ToLower(er.Message), phrase) {
		return true
	}
	for _, e := range er.Errors {
		if strings.Contains(strings.ToLower(e.Message), phrase) {
			return true
		}
	}
	return false
}
