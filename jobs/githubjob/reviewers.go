package githubjob

import (
	"context"
	"slices"
	"strings"

	"github.com/patchwright/patchwright/internal/logkey"
	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/pipeline"
)

// requestReviews asks whoever asked for the run (the one who labelled the
// issue) and the configuration's `reviewers:` to review a pull request
// Patchwright just opened. Each is asked on their own, so one login GitHub
// refuses (not a collaborator) does not cost the others; a refusal is
// logged, never the run's failure. Bots are never asked: the app is the
// author, and GitHub refuses the author.
//
// The CODEOWNERS owners of the changed files (res.OwnerReviewers and
// res.OwnerTeams) come after, users then teams, each on their own too.
func (g *publisher) requestReviews(ctx context.Context, pr githubapi.PullRequest, res *pipeline.Result) {
	for _, login := range reviewers(g.requester, append(slices.Clone(res.Reviewers), res.OwnerReviewers...)) {
		if err := g.gh.RequestReviews(ctx, g.prIssue(pr.Number), []string{login}); err != nil {
			g.log.Warn("could not request a review", "reviewer", login, logkey.Err, err)
		}
	}
	for _, slug := range res.OwnerTeams {
		if err := g.gh.RequestTeamReviews(ctx, g.prIssue(pr.Number), []string{slug}); err != nil {
			g.log.Warn("could not request a team's review", "team", slug, logkey.Err, err)
		}
	}
}

// reviewers is requester and then configured, each once (logins are
// case-insensitive), without bots.
func reviewers(requester string, configured []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, login := range append([]string{requester}, configured...) {
		key := strings.ToLower(login)
		if login == "" || seen[key] || strings.HasSuffix(key, "[bot]") {
			continue
		}
		seen[key] = true
		out = append(out, login)
	}
	return out
}
