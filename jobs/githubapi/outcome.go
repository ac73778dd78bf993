package githubapi

import (
	"context"
	"fmt"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// PullState is what jobs/outcomes classifies an agent pull request
// from: GitHub's state and the authors of its commits and reviews.
type PullState struct {
	State               string // open or closed
	HeadRef             string
	Merged              bool
	CreatedAt, ClosedAt time.Time
	// CommitAuthors are the logins GitHub links each commit to, or the
	// name git recorded when it links none; untrusted text.
	CommitAuthors []string
	// Reviewers are the logins of every submitted review.
	Reviewers []string
}

// PullRequestState reads pull request pr, its commits (GitHub lists at
// most 250) and its reviews.
func (a *App) PullRequestState(ctx context.Context, pr tasks.Issue) (PullState, error) {
	c, err := a.Installation(pr.InstallationID)
	if err != nil {
		return PullState{}, err
	}
	p, _, err := c.PullRequests.Get(ctx, pr.Owner, pr.Repo, pr.Number)
	if err != nil {
		return PullState{}, fmt.Errorf("get pull request %s: %w", pr, err)
	}
	st := PullState{State: p.GetState(), HeadRef: p.GetHead().GetRef(), Merged: p.GetMerged(), CreatedAt: p.GetCreatedAt().Time, ClosedAt: p.GetClosedAt().Time}
	opts := &github.ListOptions{PerPage: 100}
	for {
		cs, resp, err := c.PullRequests.ListCommits(ctx, pr.Owner, pr.Repo, pr.Number, opts)
		if err != nil {
			return PullState{}, fmt.Errorf("list commits of %s: %w", pr, err)
		}
		for _, rc := range cs {
			who := rc.GetAuthor().GetLogin()
			if who == "" {
				who = rc.GetCommit().GetAuthor().GetName()
			}
			st.CommitAuthors = append(st.CommitAuthors, who)
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	reviews, err := a.AllReviews(ctx, pr)
	if err != nil {
		return PullState{}, err
	}
	for _, r := range reviews {
		st.Reviewers = append(st.Reviewers, r.Author)
	}
	return st, nil
}
