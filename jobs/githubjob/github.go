package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/patchwright/patchwright/report"
)

// GitHub is what the GitHub pipeline needs from GitHub's REST API, acting
// as an installation (STYLE item 5: the consumer declares the methods; a
// thin adapter, githubapi.App, satisfies it). Repository-level calls take
// an Issue and ignore its Number; pull-request calls take the pull
// request's number as Number.
type GitHub interface {
	// Bot is the app's bot user: login "<slug>[bot]" and user ID.
	Bot(ctx context.Context, repo Issue) (User, error)
	// User looks a user up by login (for the Co-authored-by address).
	User(ctx context.Context, repo Issue, login string) (User, error)
	// RepoToken mints an installation token for the one repository with
	// contents: write only, for git over HTTP.
	RepoToken(ctx context.Context, repo Issue) (string, error)
	Repository(ctx context.Context, repo Issue) (Repository, error)
	GetIssue(ctx context.Context, issue Issue) (IssueText, error)
	// AddReaction reacts to the issue itself; GitHub answers an existing
	// reaction with 200, so repeating it is harmless.
	AddReaction(ctx context.Context, issue Issue, content string) error
	// Comments lists every comment of an issue, oldest first.
	Comments(ctx context.Context, issue Issue) ([]Comment, error)
	PostComment(ctx context.Context, issue Issue, body string) (int64, error)
	EditComment(ctx context.Context, issue Issue, id int64, body string) error
	// FindPullRequest finds the open pull request whose head is branch of
	// the repository itself; ok is false when there is none.
	FindPullRequest(ctx context.Context, repo Issue, branch string) (pr PullRequest, ok bool, err error)
	GetPullRequest(ctx context.Context, pr Issue) (PullRequest, error)
	CreatePullRequest(ctx context.Context, repo Issue, pr NewPullRequest) (PullRequest, error)
	EditPullRequest(ctx context.Context, pr Issue, title, body string) error
	// ReviewComments lists a pull request's review comments that still
	// apply to its diff: not outdated, and not in a resolved thread. When
	// only the resolved state could not be read, it returns every comment
	// that is not outdated with an error wrapping ErrThreadsUnknown.
	ReviewComments(ctx context.Context, pr Issue) ([]Comment, error)
	// CheckRunIDs lists the IDs of the check runs named name on commit sha.
	CheckRunIDs(ctx context.Context, repo Issue, sha, name string) ([]int64, error)
	// PutCheckRun creates a completed check run (id 0) or updates check run
	// id, with its annotations in GitHub's batches; it returns the ID.
	PutCheckRun(ctx context.Context, repo Issue, id int64, run CheckRun) (int64, error)
}

// Drafter changes a pull request's draft state, which GitHub's REST API
// cannot. *githubapi.App does it through GraphQL; a GitHub that is not a
// Drafter leaves the state as the pull request was opened.
type Drafter interface {
	SetDraft(ctx context.Context, pr Issue, nodeID string, draft bool) error
}

// User is a GitHub account.
type User struct {
	Login string // for the app's bot, "<slug>[bot]"
	ID    int64
}

// ErrPullRequestExists is what GitHub.CreatePullRequest wraps when GitHub
// answers that an open pull request from that head exists (a race with
// another run, or a lookup that missed it).
var ErrPullRequestExists = errors.New("a pull request for this branch already exists")

// Email is the no-reply address GitHub links to the bot account, so
// commits made with it show as the app's.
func (b User) Email() string {
	return fmt.Sprintf("%d+%s@users.noreply.github.com", b.ID, b.Login)
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
	ID     int64
	Author string
	Body   string
	// Path and Line locate a review comment; empty for issue comments.
	Path    string
	Line    int
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
	NodeID  string // GraphQL's ID, which Drafter needs
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
	Output     report.CheckRunOutput
}
