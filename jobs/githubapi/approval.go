package githubapi

import (
	"context"
	"fmt"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// Review is one submitted pull-request review as an approval check reads
// it: who, in which state, on which commit.
type Review struct {
	Author string
	// State is GitHub's: APPROVED, CHANGES_REQUESTED, COMMENTED or
	// DISMISSED.
	State string
	// CommitID is the pull request's head when the review was submitted.
	CommitID  string
	Submitted time.Time
}

// AllReviews lists every submitted review of a pull request, oldest
// first, bodies or not (an approval usually has none).
func (a *App) AllReviews(ctx context.Context, pr tasks.Issue) ([]Review, error) {
	c, err := a.Installation(pr.InstallationID)
	if err != nil {
		return nil, err
	}
	opts := &github.ListOptions{PerPage: 100}
	var out []Review
	for {
		rs, resp, err := c.PullRequests.ListReviews(ctx, pr.Owner, pr.Repo, pr.Number, opts)
		if err != nil {
			return nil, fmt.Errorf("list reviews of %s: %w", pr, err)
		}
		for _, r := range rs {
			out = append(out, Review{Author: r.GetUser().GetLogin(), State: r.GetState(), CommitID: r.GetCommitID(),
				Submitted: r.GetSubmittedAt().Time})
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

// LatestCheckRun is the newest check run named name on commit sha: its ID
// and conclusion ("" while it is not completed); id is 0 when there is
// none.
func (a *App) LatestCheckRun(ctx context.Context, repo tasks.Issue, sha, name string) (id int64, conclusion string, err error) {
	c, err := a.Installation(repo.InstallationID)
	if err != nil {
		return 0, "", err
	}
	res, _, err := c.Checks.ListCheckRunsForRef(ctx, repo.Owner, repo.Repo, sha, &github.ListCheckRunsOptions{
		CheckName: github.String(name), Filter: github.String("latest"), ListOptions: github.ListOptions{PerPage: 100},
	})
	if err != nil {
		return 0, "", fmt.Errorf("list check runs %q on %s: %w", name, sha, err)
	}
	for _, r := range res.CheckRuns {
		// IDs grow with time: the largest is the newest.
		if r.GetName() == name && r.GetID() > id {
			id, conclusion = r.GetID(), r.GetConclusion()
		}
	}
	return id, conclusion, nil
}

// MinimizeComment hides a comment as outdated (GraphQL's minimizeComment
// with classifier OUTDATED; REST cannot). The comment stays, folded, with
// "This comment was marked as outdated"; hiding it again changes nothing.
func (a *App) MinimizeComment(ctx context.Context, repo tasks.Issue, nodeID string) error {
	c, err := a.Installation(repo.InstallationID)
	if err != nil {
		return err
	}
	query := "mutation($id: ID!) { minimizeComment(input: {subjectId: $id, classifier: OUTDATED}) { minimizedComment { isMinimized } } }"
	var out struct {
		MinimizeComment struct {
			MinimizedComment struct {
				IsMinimized bool `json:"isMinimized"`
			} `json:"minimizedComment"`
		} `json:"minimizeComment"`
	}
	if err := graphql(ctx, c, query, map[string]any{"id": nodeID}, &out); err != nil {
		return fmt.Errorf("hide comment %s on %s: %w", nodeID, repo, err)
	}
	if !out.MinimizeComment.MinimizedComment.IsMinimized {
		return fmt.Errorf("hide comment %s on %s: GitHub says it is not hidden", nodeID, repo)
	}
	return nil
}
