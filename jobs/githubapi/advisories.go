package githubapi

import (
	"context"
	"fmt"

	"github.com/google/go-github/v62/github"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// Advisory is one global security advisory of the GitHub advisory
// database.
type Advisory struct {
	ID       string // GHSA identifier
	Severity string // low, medium, high, critical or unknown
	Summary  string
	URL      string
}

// maxAdvisories is the one page asked for: a package with more known
// advisories than this is flagged either way.
const maxAdvisories = 100

// Advisories lists the reviewed advisories of the GitHub advisory
// database (GET /advisories) that affect affects ("name@version" or
// "name") in ecosystem ("npm", "go", "pip", "rust", "maven", "rubygems",
// "composer"…), as the installation of repo.
func (a *App) Advisories(ctx context.Context, repo tasks.Issue, ecosystem, affects string) ([]Advisory, error) {
	c, err := a.Installation(repo.InstallationID)
	if err != nil {
		return nil, err
	}
	list, _, err := c.SecurityAdvisories.ListGlobalSecurityAdvisories(ctx, &github.ListGlobalSecurityAdvisoriesOptions{
		Ecosystem: github.String(ecosystem), Affects: github.String(affects),
		ListCursorOptions: github.ListCursorOptions{PerPage: maxAdvisories},
	})
	if err != nil {
		return nil, fmt.Errorf("look up %s %s in the advisory database: %w", ecosystem, affects, err)
	}
	out := make([]Advisory, 0, len(list))
	for _, adv := range list {
		out = append(out, Advisory{ID: adv.GetGHSAID(), Severity: adv.GetSeverity(), Summary: adv.GetSummary(), URL: adv.GetHTMLURL()})
	}
	return out, nil
}
