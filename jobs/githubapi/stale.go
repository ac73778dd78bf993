package githubapi

import (
	"context"
	"fmt"

	"github.com/google/go-github/v62/github"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// Installations lists the IDs of the app's installations (as the app).
func (a *App) Installations(ctx context.Context) ([]int64, error) {
	c := a.app
	opts := &github.ListOptions{PerPage: 100}
	var out []int64
	for {
		is, resp, err := c.Apps.ListInstallations(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("list installations: %w", err)
		}
		for _, i := range is {
			out = append(out, i.GetID())
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

// InstallationRepos lists the repositories installation inst reaches, as
// tasks.Issue with Number 0.
func (a *App) InstallationRepos(ctx context.Context, inst int64) ([]tasks.Issue, error) {
	c, err := a.Installation(inst)
	if err != nil {
		return nil, err
	}
	opts := &github.ListOptions{PerPage: 100}
	var out []tasks.Issue
	for {
		rs, resp, err := c.Apps.ListRepos(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("list repositories of installation %d: %w", inst, err)
		}
		for _, r := range rs.Repositories {
			out = append(out, tasks.Issue{InstallationID: inst, Owner: r.GetOwner().GetLogin(), Repo: r.GetName()})
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

// ClosePullRequest closes pull request pr without merging it.
func (a *App) ClosePullRequest(ctx context.Context, pr tasks.Issue) error {
	c, err := a.Installation(pr.InstallationID)
	if err != nil {
		return err
	}
	if _, _, err := c.PullRequests.Edit(ctx, pr.Owner, pr.Repo, pr.Number, &github.PullRequest{State: github.String("closed")}); err != nil {
		return fmt.Errorf("close %s: %w", pr, err)
	}
	return nil
}
