package githubjob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/patchwright/patchwright/internal/logkey"
	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/gitrepo"
	"github.com/patchwright/patchwright/jobs/pipeline"
)

// push puts the run's commit on the branch through GitHub's Git Data API,
// so that GitHub signs it (branch rules may require signed commits), and
// sets res.HeadCommit to the commit GitHub made: the later phases (check
// runs, the body's pushed marker, CI fixes, retries) know that one, never
// the clone's. A change too large for the API is pushed with git instead,
// unsigned, and the body says so.
func (g *publisher) push(ctx context.Context, repo *gitrepo.Repo, res *pipeline.Result) error {
	c, err := newCommit(repo, res.HeadCommit, res.Branch, g.expected)
	if err != nil {
		return err
	}
	sha, err := g.gh.CreateCommit(ctx, g.issue, c)
	switch {
	case err == nil:
		res.HeadCommit = sha
		return nil
	case errors.Is(err, githubapi.ErrTooLargeForAPI):
		g.log.Warn("pushing with git: the commit will not be signed", logkey.Err, err)
		g.unsigned = true
		return pushRefused(repo.Push(ctx, res.Branch, g.expected), res.Branch)
	case errors.Is(err, githubapi.ErrRefMoved):
		return fmt.Errorf("push %s: %w: %v", res.Branch, gitrepo.ErrRemoteMoved, err)
	}
	return refused(err, "push "+res.Branch, "contents: write", "")
}

// newCommit describes the clone's commit head for CreateCommit.
func newCommit(repo *gitrepo.Repo, head, branch string, expected plumbing.Hash) (githubapi.NewCommit, error) {
	d, err := repo.Delta(plumbing.NewHash(head))
	if err != nil {
		return githubapi.NewCommit{}, err
	}
	c := githubapi.NewCommit{Branch: branch, Parent: d.Parent.String(), BaseTree: d.BaseTree.String(), Message: d.Message}
	if !d.Merged.IsZero() {
		c.Merged = d.Merged.String()
	}
	if !expected.IsZero() {
		c.Expected = expected.String()
	}
	for _, f := range d.Files {
		cf := githubapi.CommitFile{Path: f.Path, Size: f.Size}
		if !f.Deleted() {
			// go-git writes modes with a leading zero ("0100755").
			cf.Mode = strings.TrimLeft(f.Mode.String(), "0")
			cf.Open = func() (io.ReadCloser, error) { return repo.OpenBlob(f.Blob) }
		}
		c.Files = append(c.Files, cf)
	}
	return c, nil
}
