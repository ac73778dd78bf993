package githubapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// The methods in this file are the calls of the GitHub pipeline, each
// acting as the installation of the repository or issue it is given. An
// issue's or pull request's calls take its number as the tasks.Issue's
// Number; repository-level calls ignore it.

// Bot returns the app's bot user: GET /app for the slug, then the user
// "<slug>[bot]" for its ID (the commit e-mail needs it).
func (a *App) Bot(ctx context.Context, repo tasks.Issue) (User, error) {
	login, err := a.BotLogin(ctx)
	if err != nil {
		return User{}, err
	}
	return a.User(ctx, repo, login)
}

// User reads GET /users/{login} as the installation of repo (an app JWT
// is good for /app endpoints only).
func (a *App) User(ctx context.Context, repo tasks.Issue, login string) (User, error) {
	c, err := a.Installation(repo.InstallationID)
	if err != nil {
		return User{}, err
	}
	u, _, err := c.Users.Get(ctx, login)
	if err != nil {
		return User{}, fmt.Errorf("get user %s: %w", login, err)
	}
	return User{Login: u.GetLogin(), ID: u.GetID()}, nil
}

// RepoToken mints a token for repo.Repo only, with contents: write (clone
// and push) and nothing else. It is never cached or written anywhere.
func (a *App) RepoToken(ctx context.Context, repo tasks.Issue) (string, error) {
	tok, _, err := a.app.Apps.CreateInstallationToken(ctx, repo.InstallationID, &github.InstallationTokenOptions{
		Repositories: []string{repo.Repo},
		Permissions:  &github.InstallationPermissions{Contents: github.String("write")},
	})
	if err != nil {
		return "", fmt.Errorf("mint token for %s/%s: %w", repo.Owner, repo.Repo, err)
	}
	if tok.GetToken() == "" {
		return "", fmt.Errorf("mint token for %s/%s: empty token", repo.Owner, repo.Repo)
	}
	return tok.GetToken(), nil
}

// Repository reads the default branch and clone URL.
func (a *App) Repository(ctx context.Context, repo tasks.Issue) (Repository, error) {
	c, err := a.Installation(repo.InstallationID)
	if err != nil {
		return Repository{}, err
	}
	r, _, err := c.Repositories.Get(ctx, repo.Owner, repo.Repo)
	if err != nil {
		return Repository{}, fmt.Errorf("get repository %s/%s: %w", repo.Owner, repo.Repo, err)
	}
	return Repository{DefaultBranch: r.GetDefaultBranch(), CloneURL: r.GetCloneURL(), Private: r.GetPrivate()}, nil
}

// GetIssue reads an issue's title, body, state and author.
func (a *App) GetIssue(ctx context.Context, issue tasks.Issue) (IssueText, error) {
	c, err := a.Installation(issue.InstallationID)
	if err != nil {
		return IssueText{}, err
	}
	i, _, err := c.Issues.Get(ctx, issue.Owner, issue.Repo, issue.Number)
	if err != nil {
		return IssueText{}, fmt.Errorf("get issue %s: %w", issue, err)
	}
	return IssueText{Title: i.GetTitle(), Body: i.GetBody(), State: i.GetState(), Author: i.GetUser().GetLogin()}, nil
}

// AddReaction adds a reaction (for example "eyes") to the issue.
func (a *App) AddReaction(ctx context.Context, issue tasks.Issue, content string) error {
	c, err := a.Installation(issue.InstallationID)
	if err != nil {
		return err
	}
	if _, _, err := c.Reactions.CreateIssueReaction(ctx, issue.Owner, issue.Repo, issue.Number, content); err != nil {
		return fmt.Errorf("react %s on %s: %w", content, issue, err)
	}
	return nil
}

// AddCommentReaction adds a reaction (for example "-1") to comment id of
// the issue's repository.
func (a *App) AddCommentReaction(ctx context.Context, issue tasks.Issue, id int64, content string) error {
	c, err := a.Installation(issue.InstallationID)
	if err != nil {
		return err
	}
	if _, _, err := c.Reactions.CreateIssueCommentReaction(ctx, issue.Owner, issue.Repo, id, content); err != nil {
		return fmt.Errorf("react %s on comment %d of %s: %w", content, id, issue, err)
	}
	return nil
}

// Comments lists every comment of the issue, 100 a page.
func (a *App) Comments(ctx context.Context, issue tasks.Issue) ([]Comment, error) {
	c, err := a.Installation(issue.InstallationID)
	if err != nil {
		return nil, err
	}
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	var out []Comment
	for {
		cs, resp, err := c.Issues.ListComments(ctx, issue.Owner, issue.Repo, issue.Number, opts)
		if err != nil {
			return nil, fmt.Errorf("list comments of %s: %w", issue, err)
		}
		for _, x := range cs {
			out = append(out, Comment{ID: x.GetID(), NodeID: x.GetNodeID(), Author: x.GetUser().GetLogin(), Body: x.GetBody(), Created: x.GetCreatedAt().Time})
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

// PostComment creates a comment and returns its ID.
func (a *App) PostComment(ctx context.Context, issue tasks.Issue, body string) (int64, error) {
	c, err := a.Installation(issue.InstallationID)
	if err != nil {
		return 0, err
	}
	cm, _, err := c.Issues.CreateComment(ctx, issue.Owner, issue.Repo, issue.Number, &github.IssueComment{Body: github.String(body)})
	if err != nil {
		return 0, fmt.Errorf("comment on %s: %w", issue, err)
	}
	return cm.GetID(), nil
}

// EditComment replaces the body of comment id.
func (a *App) EditComment(ctx context.Context, issue tasks.Issue, id int64, body string) error {
	c, err := a.Installation(issue.InstallationID)
	if err != nil {
		return err
	}
	if _, _, err := c.Issues.EditComment(ctx, issue.Owner, issue.Repo, id, &github.IssueComment{Body: github.String(body)}); err != nil {
		return fmt.Errorf("edit comment %d on %s: %w", id, issue, err)
	}
	return nil
}

// FindPullRequest looks up the open pull request from owner:branch.
func (a *App) FindPullRequest(ctx context.Context, repo tasks.Issue, branch string) (PullRequest, bool, error) {
	c, err := a.Installation(repo.InstallationID)
	if err != nil {
		return PullRequest{}, false, err
	}
	prs, _, err := c.PullRequests.List(ctx, repo.Owner, repo.Repo, &github.PullRequestListOptions{
		State: "open", Head: repo.Owner + ":" + branch, ListOptions: github.ListOptions{PerPage: 10},
	})
	if err != nil {
		return PullRequest{}, false, fmt.Errorf("list pull requests of %s/%s from %s: %w", repo.Owner, repo.Repo, branch, err)
	}
	for _, pr := range prs {
		// The head filter is the API's; checking it again costs nothing
		// and keeps a misbehaving proxy from pointing us at another PR.
		if pr.GetHead().GetRef() == branch {
			return pullRequest(pr), true, nil
		}
	}
	return PullRequest{}, false, nil
}

// GetPullRequest reads pull request pr.Number.
func (a *App) GetPullRequest(ctx context.Context, pr tasks.Issue) (PullRequest, error) {
	c, err := a.Installation(pr.InstallationID)
	if err != nil {
		return PullRequest{}, err
	}
	p, _, err := c.PullRequests.Get(ctx, pr.Owner, pr.Repo, pr.Number)
	if err != nil {
		return PullRequest{}, fmt.Errorf("get pull request %s: %w", pr, err)
	}
	return pullRequest(p), nil
}

// CreatePullRequest opens a pull request; GitHub's 422 "already exists"
// becomes ErrPullRequestExists.
func (a *App) CreatePullRequest(ctx context.Context, repo tasks.Issue, np NewPullRequest) (PullRequest, error) {
	c, err := a.Installation(repo.InstallationID)
	if err != nil {
		return PullRequest{}, err
	}
	p, _, err := c.PullRequests.Create(ctx, repo.Owner, repo.Repo, &github.NewPullRequest{
		Title: github.String(np.Title), Head: github.String(np.Head), Base: github.String(np.Base),
		Body: github.String(np.Body), Draft: github.Bool(np.Draft),
	})
	if err != nil {
		var er *github.ErrorResponse
		if errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusUnprocessableEntity {
			switch {
			case alreadyExists(er):
				return PullRequest{}, fmt.Errorf("open pull request from %s on %s/%s: %w", np.Head, repo.Owner, repo.Repo, ErrPullRequestExists)
			case np.Draft && draftRefused(er):
				return PullRequest{}, fmt.Errorf("open pull request from %s on %s/%s: %w (%w)", np.Head, repo.Owner, repo.Repo, ErrDraftUnsupported, err)
			}
		}
		return PullRequest{}, fmt.Errorf("open pull request from %s on %s/%s: %w", np.Head, repo.Owner, repo.Repo, err)
	}
	return pullRequest(p), nil
}

func alreadyExists(er *github.ErrorResponse) bool { return says(er, "already exists") }

// EditPullRequest sets a pull request's title and body. The draft state
// is left as it is: the REST API cannot change it.
func (a *App) EditPullRequest(ctx context.Context, pr tasks.Issue, title, body string) error {
	c, err := a.Installation(pr.InstallationID)
	if err != nil {
		return err
	}
	if _, _, err := c.PullRequests.Edit(ctx, pr.Owner, pr.Repo, pr.Number, &github.PullRequest{Title: github.String(title), Body: github.String(body)}); err != nil {
		return fmt.Errorf("edit pull request %s: %w", pr, err)
	}
	return nil
}

// ReviewComments lists review comments still placed on the diff: GitHub
// sets line to null on outdated ones (position, which did the same, is
// closing down). Whether a thread is resolved is only in the GraphQL API.
func (a *App) ReviewComments(ctx context.Context, pr tasks.Issue) ([]Comment, error) {
	c, err := a.Installation(pr.InstallationID)
	if err != nil {
		return nil, err
	}
	// GitHub Enterprise and other GitHub-like servers may lack GraphQL: a
	// failed lookup costs the filter, not the retry.
	resolved, threadsErr := resolvedComments(ctx, c, pr)
	if threadsErr != nil {
		threadsErr = fmt.Errorf("%w: %w", ErrThreadsUnknown, threadsErr)
	}
	opts := &github.PullRequestListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	var out []Comment
	for {
		cs, resp, err := c.PullRequests.ListComments(ctx, pr.Owner, pr.Repo, pr.Number, opts)
		if err != nil {
			return nil, fmt.Errorf("list review comments of %s: %w", pr, err)
		}
		for _, x := range cs {
			if x.Line == nil || resolved[x.GetID()] {
				continue
			}
			out = append(out, Comment{ID: x.GetID(), Author: x.GetUser().GetLogin(), Body: x.GetBody(),
				Path: x.GetPath(), Line: x.GetLine(), Created: x.GetCreatedAt().Time})
		}
		if resp.NextPage == 0 {
			return out, threadsErr
		}
		opts.Page = resp.NextPage
	}
}

// reviewThreadsQuery pages through a pull request's review threads. REST
// has no resolved state; only GraphQL tells a resolved thread from an open
// one. It selects fullDatabaseId, a BigInt sent as a string: databaseId
// is a 32-bit Int, and review-comment IDs have passed 2^31 (GitHub then
// answers with a coercion error).
const reviewThreadsQuery = `query($owner: String!, $repo: String!, $number: Int!, $cursor: String) {
  repository(owner: $owner, name: $repo) {
    pullRequest(number: $number) {
      reviewThreads(first: 100, after: $cursor) {
        nodes { isResolved comments(first: 100) { nodes { fullDatabaseId } } }
        pageInfo { hasNextPage endCursor }
      }
    }
  }
}`

type reviewThreadsPage struct {
	Repository struct {
		PullRequest struct {
			ReviewThreads struct {
				Nodes []struct {
					IsResolved bool `json:"isResolved"`
					Comments   struct {
						Nodes []struct {
							FullDatabaseID bigInt `json:"fullDatabaseId"`
						} `json:"nodes"`
					} `json:"comments"`
				} `json:"nodes"`
				PageInfo struct {
					HasNextPage bool   `json:"hasNextPage"`
					EndCursor   string `json:"endCursor"`
				} `json:"pageInfo"`
			} `json:"reviewThreads"`
		} `json:"pullRequest"`
	} `json:"repository"`
}

// resolvedComments returns the IDs of review comments in resolved threads
// (the first 100 comments of each thread).
func resolvedComments(ctx context.Context, c *github.Client, pr tasks.Issue) (map[int64]bool, error) {
	resolved := map[int64]bool{}
	vars := map[string]any{"owner": pr.Owner, "repo": pr.Repo, "number": pr.Number}
	for {
		var page reviewThreadsPage
		if err := graphql(ctx, c, reviewThreadsQuery, vars, &page); err != nil {
			return nil, fmt.Errorf("list review threads of %s: %w", pr, err)
		}
		threads := page.Repository.PullRequest.ReviewThreads
		for _, t := range threads.Nodes {
			for _, cm := range t.Comments.Nodes {
				if t.IsResolved {
					resolved[int64(cm.FullDatabaseID)] = true
				}
			}
		}
		if !threads.PageInfo.HasNextPage {
			return resolved, nil
		}
		vars["cursor"] = threads.PageInfo.EndCursor
	}
}

// bigInt decodes GraphQL's BigInt scalar, which GitHub sends as a string
// of digits (a number is accepted too).
type bigInt int64

func (b *bigInt) UnmarshalJSON(data []byte) error {
	s := strings.Trim(string(data), `"`)
	if s == "null" || s == "" {
		*b = 0
		return nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("BigInt %s: %w", data, err)
	}
	*b = bigInt(n)
	return nil
}

// graphql sends one GraphQL request and decodes its data into out; an
// answer with errors is an error.
func graphql(ctx context.Context, c *github.Client, query string, vars map[string]any, out any) error {
	req, err := c.NewRequest(http.MethodPost, graphqlPath(c.BaseURL), map[string]any{"query": query, "variables": vars})
	if err != nil {
		return err
	}
	var answer struct {
		Data   json.RawMessage `json:"data"`
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	if _, err := c.Do(ctx, req, &answer); err != nil {
		return err
	}
	if len(answer.Errors) > 0 {
		// Every message: the one that classifies the answer need not be first.
		msgs := make([]string, len(answer.Errors))
		for i, e := range answer.Errors {
			msgs[i] = e.Message
		}
		return fmt.Errorf("graphql: %s", strings.Join(msgs, "; "))
	}
	return json.Unmarshal(answer.Data, out)
}

// SetDraft marks a pull request as a draft or as ready for review. REST
// cannot change the draft state; GraphQL's mutations can, by node ID.
func (a *App) SetDraft(ctx context.Context, pr tasks.Issue, nodeID string, draft bool) error {
	c, err := a.Installation(pr.InstallationID)
	if err != nil {
		return err
	}
	mutation := "markPullRequestReadyForReview"
	if draft {
		mutation = "convertPullRequestToDraft"
	}
	query := "mutation($id: ID!) { " + mutation + "(input: {pullRequestId: $id}) { pullRequest { isDraft } } }"
	var out map[string]struct {
		PullRequest struct {
			IsDraft bool `json:"isDraft"`
		} `json:"pullRequest"`
	}
	if err := graphql(ctx, c, query, map[string]any{"id": nodeID}, &out); err != nil {
		var er *github.ErrorResponse
		if draft && (strings.Contains(strings.ToLower(err.Error()), draftPhrase) || errors.As(err, &er) && draftRefused(er)) {
			return fmt.Errorf("set draft=%v on %s: %w (%w)", draft, pr, ErrDraftUnsupported, err)
		}
		return fmt.Errorf("set draft=%v on %s: %w", draft, pr, err)
	}
	if got := out[mutation].PullRequest.IsDraft; got != draft {
		return fmt.Errorf("set draft=%v on %s: GitHub says draft=%v", draft, pr, got)
	}
	return nil
}

// graphqlPath is GraphQL's endpoint relative to the REST root: /graphql
// beside https://api.github.com/, /api/graphql beside GitHub Enterprise's
// https://HOST/api/v3/.
func graphqlPath(rest *url.URL) string {
	if strings.HasSuffix(rest.Path, "/api/v3/") {
		return "../graphql"
	}
	return "graphql"
}

// CheckRunIDs lists check runs named name on sha.
func (a *App) CheckRunIDs(ctx context.Context, repo tasks.Issue, sha, name string) ([]int64, error) {
	c, err := a.Installation(repo.InstallationID)
	if err != nil {
		return nil, err
	}
	res, _, err := c.Checks.ListCheckRunsForRef(ctx, repo.Owner, repo.Repo, sha, &github.ListCheckRunsOptions{
		CheckName: github.String(name), Filter: github.String("all"), ListOptions: github.ListOptions{PerPage: 100},
	})
	if err != nil {
		return nil, fmt.Errorf("list check runs %q on %s: %w", name, sha, err)
	}
	var ids []int64
	for _, r := range res.CheckRuns {
		if r.GetName() == name {
			ids = append(ids, r.GetID())
		}
	}
	return ids, nil
}

// PutCheckRun creates (id 0) or updates a completed check run, or an
// in-progress one when run.Conclusion is "". GitHub takes
// at most 50 annotations per request and appends those of each update, so
// a create sends the first batch and the rest follow as updates; an update
// of an existing run sends none, keeping the annotations it has.
func (a *App) PutCheckRun(ctx context.Context, repo tasks.Issue, id int64, run CheckRun) (int64, error) {
	c, err := a.Installation(repo.InstallationID)
	if err != nil {
		return 0, err
	}
	batches := run.Annotations
	if id != 0 {
		// GitHub appends the annotations of every update to the run's, so
		// the run already has those posted with it; sending them again
		// would list each twice.
		batches = nil
	}
	output := func(i int) *github.CheckRunOutput {
		o := &github.CheckRunOutput{Title: github.String(run.Title), Summary: github.String(run.Summary)}
		if i < len(batches) {
			for _, an := range batches[i] {
				o.Annotations = append(o.Annotations, &github.CheckRunAnnotation{
					Path: github.String(an.Path), StartLine: github.Int(an.StartLine), EndLine: github.Int(an.EndLine),
					AnnotationLevel: github.String(an.Level), Message: github.String(an.Message),
				})
			}
		}
		return o
	}
	var details *string
	if run.DetailsURL != "" {
		details = github.String(run.DetailsURL)
	}
	now := github.Timestamp{Time: time.Now()}
	status, conclusion, completed := github.String("completed"), github.String(run.Conclusion), &now
	if run.Conclusion == "" {
		// Pending: a required check that blocks merging until updated.
		status, conclusion, completed = github.String("in_progress"), nil, nil
	}
	first := 0
	if id == 0 {
		cr, _, err := c.Checks.CreateCheckRun(ctx, repo.Owner, repo.Repo, github.CreateCheckRunOptions{
			Name: run.Name, HeadSHA: run.HeadSHA, DetailsURL: details, Status: status,
			Conclusion: conclusion, CompletedAt: completed, Output: output(0),
		})
		if err != nil {
			return 0, fmt.Errorf("create check run %q on %s: %w", run.Name, run.HeadSHA, err)
		}
		id, first = cr.GetID(), 1
	}
	for i := first; i < max(len(batches), 1); i++ {
		_, _, err := c.Checks.UpdateCheckRun(ctx, repo.Owner, repo.Repo, id, github.UpdateCheckRunOptions{
			Name: run.Name, DetailsURL: details, Status: status,
			Conclusion: conclusion, CompletedAt: completed, Output: output(i),
		})
		if err != nil {
			return id, fmt.Errorf("update check run %q (%d): %w", run.Name, id, err)
		}
	}
	return id, nil
}

func pullRequest(p *github.PullRequest) PullRequest {
	return PullRequest{
		Number: p.GetNumber(), URL: p.GetHTMLURL(), Title: p.GetTitle(), Body: p.GetBody(), Draft: p.GetDraft(),
		State: p.GetState(), HeadRef: p.GetHead().GetRef(), HeadSHA: p.GetHead().GetSHA(), BaseRef: p.GetBase().GetRef(),
		NodeID: p.GetNodeID(), MergeableState: p.GetMergeableState(), UpdatedAt: p.GetUpdatedAt().Time,
	}
}

// Reviews lists a pull request's submitted reviews with a body, oldest
// first (pending ones are the reviewer's own and not listed by GitHub).
func (a *App) Reviews(ctx context.Context, pr tasks.Issue) ([]Comment, error) {
	c, err := a.Installation(pr.InstallationID)
	if err != nil {
		return nil, err
	}
	opts := &github.ListOptions{PerPage: 100}
	var out []Comment
	for {
		rs, resp, err := c.PullRequests.ListReviews(ctx, pr.Owner, pr.Repo, pr.Number, opts)
		if err != nil {
			return nil, fmt.Errorf("list reviews of %s: %w", pr, err)
		}
		for _, r := range rs {
			if strings.TrimSpace(r.GetBody()) == "" {
				continue
			}
			out = append(out, Comment{ID: r.GetID(), Author: r.GetUser().GetLogin(), Body: r.GetBody(),
				State: r.GetState(), Created: r.GetSubmittedAt().Time})
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}
