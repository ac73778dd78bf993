package githubjob

import (
	"context"

	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// GitHub is what the GitHub pipeline needs from GitHub, acting as an
// installation; *githubapi.App satisfies it. It is the three small
// interfaces its parts use. Repository-level calls take a tasks.Issue and
// ignore its Number; issue and pull-request calls take the issue's or the
// pull request's number as Number.
type GitHub interface {
	statusComments
	prPublisher
	attemptSource
	ciSource
	advisorySource
	merger
	approvalSource
}

// statusComments is what the status comment needs.
type statusComments interface {
	// Comments lists every comment of an issue, oldest first.
	Comments(ctx context.Context, issue tasks.Issue) ([]githubapi.Comment, error)
	PostComment(ctx context.Context, issue tasks.Issue, body string) (int64, error)
	EditComment(ctx context.Context, issue tasks.Issue, id int64, body string) error
	// MinimizeComment hides a comment (by its GraphQL node ID) as
	// outdated: a newer one supersedes it.
	MinimizeComment(ctx context.Context, repo tasks.Issue, nodeID string) error
}

// prPublisher is what publishing a change needs.
type prPublisher interface {
	// FindPullRequest finds the open pull request whose head is branch of
	// the repository itself; ok is false when there is none.
	FindPullRequest(ctx context.Context, repo tasks.Issue, branch string) (pr githubapi.PullRequest, ok bool, err error)
	// CreatePullRequest wraps githubapi.ErrPullRequestExists when GitHub
	// answers that one exists.
	CreatePullRequest(ctx context.Context, repo tasks.Issue, pr githubapi.NewPullRequest) (githubapi.PullRequest, error)
	EditPullRequest(ctx context.Context, pr tasks.Issue, title, body string) error
	// RequestReviews asks logins to review a pull request.
	RequestReviews(ctx context.Context, pr tasks.Issue, logins []string) error
	// RequestTeamReviews asks teams, by slug, to review a pull request.
	RequestTeamReviews(ctx context.Context, pr tasks.Issue, slugs []string) error
	// SetDraft changes a pull request's draft state (GraphQL: REST cannot).
	SetDraft(ctx context.Context, pr tasks.Issue, nodeID string, draft bool) error
	// CheckRunIDs lists the IDs of the check runs named name on commit sha.
	CheckRunIDs(ctx context.Context, repo tasks.Issue, sha, name string) ([]int64, error)
	// PutCheckRun creates a completed check run (id 0) or updates check run
	// id, with its annotations in GitHub's batches; it returns the ID.
	PutCheckRun(ctx context.Context, repo tasks.Issue, id int64, run githubapi.CheckRun) (int64, error)
	// CreateCommit makes a commit GitHub signs and moves a branch to it
	// as compare-and-swap; it returns the commit's SHA.
	CreateCommit(ctx context.Context, repo tasks.Issue, c githubapi.NewCommit) (string, error)
	approvalSource
}

// attemptSource is what preparing an attempt needs.
type attemptSource interface {
	// Bot is the app's bot user: login "<slug>[bot]" and user ID.
	Bot(ctx context.Context, repo tasks.Issue) (githubapi.User, error)
	// User looks a user up by login (for the Co-authored-by address).
	User(ctx context.Context, repo tasks.Issue, login string) (githubapi.User, error)
	// RepoToken mints an installation token for the one repository with
	// contents: write only, for git over HTTP.
	RepoToken(ctx context.Context, repo tasks.Issue) (string, error)
	Repository(ctx context.Context, repo tasks.Issue) (githubapi.Repository, error)
	// OrgFile reads a file of the owner's `.github` repository's default
	// branch; nil when there is none.
	OrgFile(ctx context.Context, repo tasks.Issue, path string) ([]byte, error)
	GetIssue(ctx context.Context, issue tasks.Issue) (githubapi.IssueText, error)
	// AddReaction reacts to the issue itself; GitHub answers an existing
	// reaction with 200, so repeating it is harmless.
	AddReaction(ctx context.Context, issue tasks.Issue, content string) error
	GetPullRequest(ctx context.Context, pr tasks.Issue) (githubapi.PullRequest, error)
	// CommitsBetween lists the commits reachable from head and not from
	// base, oldest first, with their files; more counts those left out.
	CommitsBetween(ctx context.Context, repo tasks.Issue, base, head string) (commits []githubapi.Commit, more int, err error)
	// ReviewComments lists a pull request's review comments that still
	// apply to its diff: not outdated, and not in a resolved thread. When
	// only the resolved state could not be read, it returns every comment
	// that is not outdated with an error wrapping
	// githubapi.ErrThreadsUnknown.
	ReviewComments(ctx context.Context, pr tasks.Issue) ([]githubapi.Comment, error)
	// Reviews lists a pull request's submitted reviews that have a body.
	Reviews(ctx context.Context, pr tasks.Issue) ([]githubapi.Comment, error)
	// Comments lists an issue's or pull request's conversation comments.
	Comments(ctx context.Context, issue tasks.Issue) ([]githubapi.Comment, error)
	// Permission is a user's permission on the repository: only the words
	// of people with write access are given to the model.
	Permission(ctx context.Context, repo tasks.Issue, user string) (githubapi.Permission, error)
}
