package githubapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/google/go-github/v62/github"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// OrgRepo is the repository where an organisation keeps its defaults
// (community health files, and Patchwright's default configuration).
const OrgRepo = ".github"

// OrgFile reads path from the default branch of the `.github`
// repository of repo's owner, with repo's installation's token. It
// returns nil and no error when the owner has no such repository, the
// installation cannot see it, or it has no such file: GitHub answers
// 404 for all three.
func (a *App) OrgFile(ctx context.Context, repo tasks.Issue, path string) ([]byte, error) {
	c, err := a.Installation(repo.InstallationID)
	if err != nil {
		return nil, err
	}
	f, _, _, err := c.Repositories.GetContents(ctx, repo.Owner, OrgRepo, path, nil)
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s/%s/%s: %w", repo.Owner, OrgRepo, path, err)
	}
	if f == nil {
		return nil, fmt.Errorf("read %s/%s/%s: a directory, not a file", repo.Owner, OrgRepo, path)
	}
	text, err := f.GetContent()
	if err != nil {
		return nil, fmt.Errorf("read %s/%s/%s: %w", repo.Owner, OrgRepo, path, err)
	}
	return []byte(text), nil
}
