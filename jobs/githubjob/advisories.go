package githubjob

import (
	"context"

	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/patchwright/patchwright/verify/findings"
)

// advisorySource is what the review before publishing needs of GitHub.
type advisorySource interface {
	// Advisories lists the advisory database's advisories affecting
	// affects ("name@version") in ecosystem.
	Advisories(ctx context.Context, repo tasks.Issue, ecosystem, affects string) ([]githubapi.Advisory, error)
}

// advisories is the pipeline's advisory lookup through the app's client,
// as the installation of the job's repository.
type advisories struct {
	gh   advisorySource
	repo tasks.Issue
}

// Advisories implements pipeline.AdvisoryLookup.
func (a advisories) Advisories(ctx context.Context, q findings.AdvisoryQuery) ([]findings.KnownAdvisory, error) {
	list, err := a.gh.Advisories(ctx, a.repo, q.Ecosystem, q.Affects())
	if err != nil {
		return nil, err
	}
	out := make([]findings.KnownAdvisory, len(list))
	for i, adv := range list {
		out[i] = findings.KnownAdvisory{ID: adv.ID, Severity: adv.Severity, Summary: adv.Summary, URL: adv.URL}
	}
	return out, nil
}
