package githubapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// The calls the schedule scan makes (jobs/schedule): which repositories the
// app is installed on, a file of a repository's default branch, and a new
// tracking issue (after a look for one it opened already).

// maxInstallPages bounds the repositories one scan reads per installation:
// pages of 100.
const maxInstallPages = 10

// InstalledRepos lists the repositories of every installation of the app,
// each as a tasks.Issue without a number.
func (a *App) InstalledRepos(ctx context.Context) ([]tasks.Issue, error) {
	var out []tasks.Issue
	opt := &github.ListOptions{PerPage: 100}
	for {
		insts, resp, err := a.app.Apps.ListInstallations(ctx, opt)
		if err != nil {
			return nil, fmt.Errorf("list installations: %w", err)
		}
		for _, in := range insts {
			repos, err := a.installationRepos(ctx, in.GetID())
			if err != nil {
				return nil, err
			}
			out = append(out, repos...)
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opt.Page = resp.NextPage
	}
}

func (a *App) installationRepos(ctx context.Context, id int64) ([]tasks.Issue, error) {
	c, err := a.Installation(id)
	if err != nil {
		return nil, err
	}
	var out []tasks.Issue
	opt := &github.ListOptions{PerPage: 100}
	for range maxInstallPages {
		list, resp, err := c.Apps.ListRepos(ctx, opt)
		if err != nil {
			return nil, fmt.Errorf("list repositories of installation %d: %w", id, err)
		}
		for _, r := range list.Repositories {
			if r.GetArchived() {
				continue
			}
			out = append(out, tasks.Issue{InstallationID: id, Owner: r.GetOwner().GetLogin(), Repo: r.GetName()})
		}
		if resp.NextPage == 0 {
			break
		}
		opt.Page = resp.NextPage
	}
	return out, nil
}

// DefaultBranchFile reads path from the repository's default branch; ok
// is false when the file is not there.
func (a *App) DefaultBranchFile(ctx context.Context, repo tasks.Issue, path string) (data []byte, ok bool, err error) {
	c, err := a.Installation(repo.InstallationID)
	if err != nil {
		return nil, false, err
	}
	// No ref: GitHub reads the default branch.
	f, _, resp, err := c.Repositories.GetContents(ctx, repo.Owner, repo.Repo, path, nil)
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read %s of %s/%s: %w", path, repo.Owner, repo.Repo, err)
	}
	if f == nil {
		return nil, false, errors.New("read " + path + ": it is a directory")
	}
	text, err := f.GetContent()
	if err != nil {
		return nil, false, fmt.Errorf("read %s of %s/%s: %w", path, repo.Owner, repo.Repo, err)
	}
	return []byte(text), true, nil
}

// IssueByApp finds an issue the app itself opened on repo, updated at or
// after since, whose body holds marker; 0 and false when none does. It
// reads the newest 100 such issues: what a schedule opens once per
// period is among them. Only the app's own issues count, so nobody else
// can pass an issue of theirs off as one the app opened.
func (a *App) IssueByApp(ctx context.Context, repo tasks.Issue, since time.Time, marker string) (int, bool, error) {
	login, err := a.BotLogin(ctx)
	if err != nil {
		return 0, false, err
	}
	c, err := a.Installation(repo.InstallationID)
	if err != nil {
		return 0, false, err
	}
	list, _, err := c.Issues.ListByRepo(ctx, repo.Owner, repo.Repo, &github.IssueListByRepoOptions{
		State: "all", Creator: login, Since: since, Sort: "created", Direction: "desc",
		ListOptions: github.ListOptions{PerPage: 100}})
	if err != nil {
		return 0, false, fmt.Errorf("list the issues of %s/%s: %w", repo.Owner, repo.Repo, err)
	}
	for _, i := range list {
		if !i.IsPullRequest() && strings.EqualFold(i.GetUser().GetLogin(), login) && strings.Contains(i.GetBody(), marker) {
			return i.GetNumber(), true, nil
		}
	}
	return 0, false, nil
}

// CreateIssue opens an issue and returns its number.
func (a *App) CreateIssue(ctx context.Context, repo tasks.Issue, title, body string) (int, error) {
	c, err := a.Installation(repo.InstallationID)
	if err != nil {
		return 0, err
	}
	i, _, err := c.Issues.Create(ctx, repo.Owner, repo.Repo, &github.IssueRequest{Title: &title, Body: &body})
	if err != nil {
		return 0, fmt.Errorf("open an issue on %s/%s: %w", repo.Owner, repo.Repo, err)
	}
	return i.GetNumber(), nil
}
