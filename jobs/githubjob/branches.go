package githubjob

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// BranchAPI is what Branches needs from GitHub; *githubapi.App is one.
type BranchAPI interface {
	RepoToken(ctx context.Context, repo tasks.Issue) (string, error)
	Repository(ctx context.Context, repo tasks.Issue) (githubapi.Repository, error)
}

// Branches deletes agent branches as a compare-and-swap: over git, with
// the commit the branch must still point at. GitHub's REST delete has no
// such condition, so a person's push between a look and a delete would be
// lost; git's receive-pack checks the old value under the ref's lock.
// It is the worker's Branches.
type Branches struct {
	GitHub BranchAPI
}

// DeleteBranchAt deletes branch of repo only while it points at sha.
// deleted is false, with no error, when the branch is gone or points
// elsewhere (someone pushed to it).
func (b *Branches) DeleteBranchAt(ctx context.Context, repo tasks.Issue, branch, sha string) (bool, error) {
	r, err := b.GitHub.Repository(ctx, repo)
	if err != nil {
		return false, err
	}
	token, err := b.GitHub.RepoToken(ctx, repo)
	if err != nil {
		return false, err
	}
	local, err := git.Init(memory.NewStorage(), nil)
	if err != nil {
		return false, err
	}
	if _, err := local.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{r.CloneURL}}); err != nil {
		return false, err
	}
	ref := "refs/heads/" + branch
	err = local.PushContext(ctx, &git.PushOptions{
		RemoteName:        "origin",
		Auth:              &http.BasicAuth{Username: "x-access-token", Password: token},
		RefSpecs:          []config.RefSpec{config.RefSpec(":" + ref)},
		RequireRemoteRefs: []config.RefSpec{config.RefSpec(sha + ":" + ref)},
	})
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, git.NoErrAlreadyUpToDate), strings.Contains(err.Error(), "required to be"):
		// Gone, or moved before the push: either way not ours to delete.
		return false, nil
	case strings.Contains(err.Error(), "command error on"):
		// Moved between the look and the update: receive-pack refused.
		return false, nil
	}
	return false, fmt.Errorf("delete %s of %s/%s: %w", branch, repo.Owner, repo.Repo, pushRefused(err, branch))
}
