package githubapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/google/go-github/v62/github"

	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// AgentPullRequests lists the open pull requests into base whose head is
// an agent branch (jobs.ParseAgentBranch) of the repository itself: a
// fork's branch of the same name is someone else's. Every page is read.
func (a *App) AgentPullRequests(ctx context.Context, repo tasks.Issue, base string) ([]PullRequest, error) {
	c, err := a.Installation(repo.InstallationID)
	if err != nil {
		return nil, err
	}
	opts := &github.PullRequestListOptions{State: "open", Base: base, ListOptions: github.ListOptions{PerPage: 100}}
	var out []PullRequest
	for {
		prs, resp, err := c.PullRequests.List(ctx, repo.Owner, repo.Repo, opts)
		if err != nil {
			return nil, fmt.Errorf("list open pull requests of %s/%s into %s: %w", repo.Owner, repo.Repo, base, err)
		}
		for _, pr := range prs {
			head := pr.GetHead()
			if _, ok := jobs.ParseAgentBranch(head.GetRef()); ok && head.GetLabel() == repo.Owner+":"+head.GetRef() {
				out = append(out, pullRequest(pr))
			}
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

// ErrMergeConflict is MergeInto's answer when GitHub cannot merge without
// a person (409 "Merge conflict").
var ErrMergeConflict = errors.New("merge conflict")

// MergeInto merges commit head into branch of repo with GitHub's merge
// endpoint (POST /repos/{owner}/{repo}/merges), so GitHub makes (and
// signs) the merge commit. It returns the new head of branch, or "" when
// branch already holds head (204). A conflict wraps ErrMergeConflict.
func (a *App) MergeInto(ctx context.Context, repo tasks.Issue, branch, head, message string) (string, error) {
	c, err := a.Installation(repo.InstallationID)
	if err != nil {
		return "", err
	}
	commit, resp, err := c.Repositories.Merge(ctx, repo.Owner, repo.Repo, &github.RepositoryMergeRequest{
		Base: github.String(branch), Head: github.String(head), CommitMessage: github.String(message),
	})
	if resp != nil && resp.StatusCode == http.StatusConflict {
		return "", fmt.Errorf("merge %s into %s: %w", head, branch, ErrMergeConflict)
	}
	if err != nil {
		return "", fmt.Errorf("merge %s into %s of %s/%s: %w", head, branch, repo.Owner, repo.Repo, err)
	}
	if resp.StatusCode == http.StatusNoContent {
		return "", nil
	}
	return commit.GetSHA(), nil
}

// RequestTeamReviews asks the teams of the repository's organisation, by
// slug, to review pull request pr; GitHub answers 422 for a team without
// access to the repository.
func (a *App) RequestTeamReviews(ctx context.Context, pr tasks.Issue, slugs []string) error {
	c, err := a.Installation(pr.InstallationID)
	if err != nil {
		return err
	}
	_, _, err = c.PullRequests.RequestReviewers(ctx, pr.Owner, pr.Repo, pr.Number, github.ReviewersRequest{TeamReviewers: slugs})
	if err != nil {
		return fmt.Errorf("request reviews of teams %v on %s: %w", slugs, pr, err)
	}
	return nil
}

// RequestReviews asks logins to review pull request pr. GitHub answers
// 422 for a login that is not a collaborator or is the pull request's
// author; the error says so.
func (a *App) RequestReviews(ctx context.Context, pr tasks.Issue, logins []string) error {
	c, err := a.Installation(pr.InstallationID)
	if err != nil {
		return err
	}
	_, _, err = c.PullRequests.RequestReviewers(ctx, pr.Owner, pr.Repo, pr.Number, github.ReviewersRequest{Reviewers: logins})
	if err != nil {
		return fmt.Errorf("request reviews of %v on %s: %w", logins, pr, err)
	}
	return nil
}
