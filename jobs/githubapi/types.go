package githubapi

import (
	"errors"
	"fmt"
	"time"
)

// User is a GitHub account.
type User struct {
	Login string // for the app's bot, "<slug>[bot]"
	ID    int64
}

// Email is the no-reply address GitHub links to the account, so commits
// made with it show as the account's.
func (u User) Email() string {
	return fmt.Sprintf("%d+%s@users.noreply.github.com", u.ID, u.Login)
}

// Repository is what a job needs to know about a repository.
type Repository struct {
	DefaultBranch string
	// CloneURL is the https URL git clones from.
	CloneURL string
	Private  bool
}

// IssueText is an issue's title, body and state as filed. Title and Body
// are untrusted text.
type IssueText struct {
	Title, Body string
	// State is "open" or "closed".
	State string
	// Author is the login of the person who filed it.
	Author string
}

// Comment is an issue comment or a review comment.
type Comment struct {
	ID int64
	// NodeID is GraphQL's ID (issue comments only), which
	// MinimizeComment needs.
	NodeID string
	Author string
	Body   string
	// Path and Line locate a review comment; empty for issue comments.
	Path string
	Line int
	// State is a review's: APPROVED, CHANGES_REQUESTED or COMMENTED; empty
	// for comments.
	State   string
	Created time.Time
}

// PullRequest is the part of a pull request the pipeline reads.
type PullRequest struct {
	Number  int
	URL     string // html_url
	Title   string
	Body    string
	Draft   bool
	State   string
	HeadRef string
	HeadSHA string
	BaseRef string
	NodeID  string // GraphQL's ID, which SetDraft needs
	// MergeableState is GitHub's mergeable_state ("behind", "dirty",
	// "clean", "unknown"…), which only a single pull request's GET has.
	MergeableState string
	// UpdatedAt is GitHub's: the last comment, review, push, label or
	// edit by anyone.
	UpdatedAt time.Time
}

// NewPullRequest is a pull request to open.
type NewPullRequest struct {
	Title, Head, Base, Body string
	Draft                   bool
}

// CheckRun is one completed check run on a commit.
type CheckRun struct {
	Name       string
	HeadSHA    string
	DetailsURL string
	// Conclusion is GitHub's: "success", "failure" or "neutral"; ""
	// leaves the run in progress (pending).
	Conclusion string
	Title      string
	Summary    string
	// Annotations are sent in these batches, one request each (GitHub
	// takes at most 50 a request).
	Annotations [][]Annotation
}

// Annotation is one check-run annotation.
type Annotation struct {
	Path      string
	StartLine int
	EndLine   int
	// Level is "failure", "warning" or "notice".
	Level   string
	Message string
}

// GitHub's limits, in characters, on what Patchwright sends.
const (
	// MaxBody is the longest issue, comment or pull-request body.
	MaxBody = 65536
	// MaxTitle is the longest pull-request title.
	MaxTitle = 256
)

// ErrPullRequestExists is what CreatePullRequest wraps when GitHub answers
// that an open pull request from that head exists (a race with another
// run, or a lookup that missed it).
var ErrPullRequestExists = errors.New("a pull request for this branch already exists")

// ErrThreadsUnknown marks review comments whose threads' resolved state
// could not be read (GitHub's GraphQL API did not answer): the caller then
// hears every comment that is not outdated, as it would from REST alone.
var ErrThreadsUnknown = errors.New("the resolved state of review threads is unknown")
