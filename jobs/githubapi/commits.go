package githubapi

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/go-github/v62/github"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// Commit is one commit of a branch as GitHub lists it.
type Commit struct {
	SHA string
	// Author is the author's GitHub login when GitHub links the commit to
	// an account, else the name git recorded; untrusted text.
	Author string
	// Subject is the first line of the message; untrusted text.
	Subject string
	// Files are the paths the commit changed (at most MaxCommitFiles).
	Files []string
	// MoreFiles counts the files past Files.
	MoreFiles int
}

// Bounds of CommitsBetween: a branch someone rewrote at length is listed
// in part, and says so.
const (
	MaxCommits     = 20
	MaxCommitFiles = 50
)

// CommitsBetween lists the commits reachable from head and not from base,
// oldest first, with each commit's files (GitHub's compare endpoint lists
// the files of the range only, so each commit is read once more). At most
// MaxCommits are read; more reports how many were left out.
func (a *App) CommitsBetween(ctx context.Context, repo tasks.Issue, base, head string) (commits []Commit, more int, err error) {
	c, err := a.Installation(repo.InstallationID)
	if err != nil {
		return nil, 0, err
	}
	cmp, _, err := c.Repositories.CompareCommits(ctx, repo.Owner, repo.Repo, base, head, &github.ListOptions{PerPage: 100})
	if err != nil {
		return nil, 0, fmt.Errorf("compare %s...%s on %s/%s: %w", base, head, repo.Owner, repo.Repo, err)
	}
	list := cmp.Commits
	if len(list) > MaxCommits {
		more, list = len(list)-MaxCommits, list[len(list)-MaxCommits:]
	}
	for _, rc := range list {
		full, _, err := c.Repositories.GetCommit(ctx, repo.Owner, repo.Repo, rc.GetSHA(), nil)
		if err != nil {
			return nil, 0, fmt.Errorf("read commit %s of %s/%s: %w", rc.GetSHA(), repo.Owner, repo.Repo, err)
		}
		cm := Commit{SHA: rc.GetSHA(), Author: rc.GetAuthor().GetLogin()}
		if cm.Author == "" {
			cm.Author = rc.GetCommit().GetAuthor().GetName()
		}
		cm.Subject, _, _ = strings.Cut(rc.GetCommit().GetMessage(), "\n")
		for _, f := range full.Files {
			if len(cm.Files) == MaxCommitFiles {
				cm.MoreFiles++
				continue
			}
			cm.Files = append(cm.Files, f.GetFilename())
		}
		commits = append(commits, cm)
	}
	return commits, more, nil
}

// Divergence is how a pull request's head and its moved base parted.
type Divergence struct {
	// MergeBase is their newest common commit.
	MergeBase string
	// Base is the base's commit the comparison read (a branch name
	// resolved); "" when the base has no commit the head lacks.
	Base string
	// Subjects are the first lines of the base's commits since the
	// merge base, oldest first, at most MaxCommits (the newest).
	Subjects []string
}

// Diverged compares head with base (a commit or a branch) through
// GitHub's compare endpoint: their merge base, and what the base did
// since. The merge base is what a three-way merge of the two needs.
func (a *App) Diverged(ctx context.Context, repo tasks.Issue, head, base string) (Divergence, error) {
	c, err := a.Installation(repo.InstallationID)
	if err != nil {
		return Divergence{}, err
	}
	cmp, _, err := c.Repositories.CompareCommits(ctx, repo.Owner, repo.Repo, head, base, &github.ListOptions{PerPage: 100})
	if err != nil {
		return Divergence{}, fmt.Errorf("compare %s...%s on %s/%s: %w", head, base, repo.Owner, repo.Repo, err)
	}
	d := Divergence{MergeBase: cmp.GetMergeBaseCommit().GetSHA()}
	if d.MergeBase == "" {
		return Divergence{}, fmt.Errorf("compare %s...%s on %s/%s: no merge base", head, base, repo.Owner, repo.Repo)
	}
	list := cmp.Commits
	if len(list) > 0 {
		// The newest commit of the range is the base's, unless GitHub
		// cut the list (250 commits): a commit SHA asked for is exact.
		d.Base = list[len(list)-1].GetSHA()
	}
	if tasks.ValidSHA(base) {
		d.Base = base
	}
	if len(list) > MaxCommits {
		list = list[len(list)-MaxCommits:]
	}
	for _, rc := range list {
		s, _, _ := strings.Cut(rc.GetCommit().GetMessage(), "\n")
		d.Subjects = append(d.Subjects, s)
	}
	return d, nil
}
