package pipeline

import (
	"context"

	"github.com/patchwright/patchwright/internal/logkey"
	"github.com/patchwright/patchwright/jobs/codeowners"
	"github.com/patchwright/patchwright/jobs/gitrepo"
)

// loadCodeOwners reads CODEOWNERS as loadTemplate reads the template: a
// git object of the configuration branch, so a change cannot pick its own
// reviewers. A file that cannot be read only costs those reviewers.
func (r *run) loadCodeOwners(ctx context.Context) {
	var data []byte
	var err error
	if r.job.ConfigBranch != "" && r.job.ConfigBranch != r.repo.BaseBranch() {
		_, data, err = gitrepo.ReadBranchFirst(ctx, gitrepo.CloneOptions{URL: r.job.RepoURL, Auth: r.job.Auth}, r.job.ConfigBranch, codeowners.Paths)
	} else {
		_, data, err = r.repo.BaseFirst(codeowners.Paths)
	}
	if err != nil {
		r.e.logger().Warn("read CODEOWNERS; its owners are not asked to review", logkey.Err, err)
		return
	}
	r.clone.codeOwners = codeowners.Parse(string(data))
}
