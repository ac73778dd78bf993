package githubjob

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	gitauth "github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/patchwright/patchwright/agent/config"
	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/gitrepo"
	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/patchwright/patchwright/report"
)

// ApprovalCheck is the check run `approval: independent` keeps on an
// agent pull request's head, for branch rules to require.
const ApprovalCheck = "patchwright/approval"

// approvalSource is what the approval check needs from GitHub.
type approvalSource interface {
	// AllReviews lists every submitted review, oldest first.
	AllReviews(ctx context.Context, pr tasks.Issue) ([]githubapi.Review, error)
	// LatestCheckRun is the newest check run named name on sha (id 0:
	// none) and its conclusion ("" while pending).
	LatestCheckRun(ctx context.Context, repo tasks.Issue, sha, name string) (int64, string, error)
	PutCheckRun(ctx context.Context, repo tasks.Issue, id int64, run githubapi.CheckRun) (int64, error)
	Permission(ctx context.Context, repo tasks.Issue, user string) (githubapi.Permission, error)
}

// Approvals keeps the approval check of agent pull requests; it needs
// no model, so a worker without one keeps it too.
type Approvals struct {
	GitHub GitHub
}

// Approval brings the approval check of pull request pr (Number is the
// pull request's) up to date: on an open agent pull request of a
// repository whose default branch's configuration says `approval:
// independent`, the check on its head passes once someone with write
// access who asked for none of its runs has approved that head, and is
// pending until then. It reads everything from GitHub, so repeats and
// reordered events end in the same check.
func (p *Approvals) Approval(ctx context.Context, pr tasks.Issue) error {
	got, err := p.GitHub.GetPullRequest(ctx, pr)
	if err != nil {
		return err
	}
	if _, ok := jobs.ParseAgentBranch(got.HeadRef); !ok || got.State != "open" {
		return nil
	}
	cfg, err := trustedConfig(ctx, p.GitHub, pr)
	if err != nil || !cfg.IndependentApproval() {
		return err
	}
	return putApproval(ctx, p.GitHub, pr, got.HeadSHA, requesters(got.Body))
}

// trustedConfig is the configuration a run trusts: .github/agent.yml of
// the default branch over the organisation's default (as the pipeline
// layers them); a file that does not parse is the default (every run
// stops on it anyway).
func trustedConfig(ctx context.Context, gh attemptSource, repo tasks.Issue) (config.Config, error) {
	org, err := gh.OrgFile(ctx, repo, config.Path)
	if err != nil {
		return config.Config{}, err
	}
	cfg, err := defaultBranchConfig(ctx, gh, repo, org)
	if errors.Is(err, errBadConfig) {
		return config.Default(), nil
	}
	return cfg, err
}

// errBadConfig: the default branch's .github/agent.yml does not parse.
var errBadConfig = errors.New("the default branch's configuration does not parse")

// defaultBranchConfig reads .github/agent.yml of repo's default branch
// and layers it over org, the organisation's default file (nil: none).
// The one reader of the trusted configuration outside a run.
func defaultBranchConfig(ctx context.Context, gh attemptSource, repo tasks.Issue, org []byte) (config.Config, error) {
	r, err := gh.Repository(ctx, repo)
	if err != nil {
		return config.Config{}, err
	}
	token, err := gh.RepoToken(ctx, repo)
	if err != nil {
		return config.Config{}, err
	}
	data, err := gitrepo.ReadBranchFile(ctx, gitrepo.CloneOptions{URL: r.CloneURL,
		Auth: &gitauth.BasicAuth{Username: "x-access-token", Password: token}}, r.DefaultBranch, config.Path)
	if err != nil {
		return config.Config{}, err
	}
	cfg, err := config.ParseLayered(org, data)
	if err != nil {
		return config.Config{}, fmt.Errorf("%w: %w", errBadConfig, err)
	}
	return cfg, nil
}

// requesters are whoever asked for one of the pull request's runs, from
// its attempt history: none of them can be the independent approver.
func requesters(body string) map[string]bool {
	out := map[string]bool{}
	for _, a := range report.ParseHistory(body).Attempts {
		out[strings.ToLower(a.TriggeredBy)] = true
	}
	return out
}

// putApproval sets the approval check of pr on head, writing only when
// its state changes: a pending check that gains an approval is
// completed, and a completed one that lost it (a dismissed review) is
// replaced by a new pending run, since a completed run stays completed.
func putApproval(ctx context.Context, gh approvalSource, pr tasks.Issue, head string, excluded map[string]bool) error {
	approver, err := independentApprover(ctx, gh, pr, head, excluded)
	if err != nil {
		return err
	}
	id, conclusion, err := gh.LatestCheckRun(ctx, pr, head, ApprovalCheck)
	if err != nil {
		return err
	}
	run := approvalRun(head, approver, excluded)
	switch {
	case id != 0 && conclusion == run.Conclusion:
		return nil
	case id != 0 && conclusion != "":
		id = 0
	}
	_, err = gh.PutCheckRun(ctx, pr, id, run)
	return err
}

// independentApprover is the first reviewer whose latest verdict is an
// approval of head, who has write access and is neither a bot nor one of
// excluded; "" when there is none. A comment is no verdict; a later
// request for changes or a dismissal cancels an approval.
func independentApprover(ctx context.Context, gh approvalSource, pr tasks.Issue, head string, excluded map[string]bool) (string, error) {
	reviews, err := gh.AllReviews(ctx, pr)
	if err != nil {
		return "", err
	}
	var order []string
	latest := map[string]githubapi.Review{}
	for _, r := range reviews {
		key := strings.ToLower(r.Author)
		if strings.EqualFold(r.State, "COMMENTED") || key == "" {
			continue
		}
		if _, seen := latest[key]; !seen {
			order = append(order, key)
		}
		latest[key] = r
	}
	for _, key := range order {
		r := latest[key]
		if !strings.EqualFold(r.State, "APPROVED") || r.CommitID != head || excluded[key] || strings.HasSuffix(key, "[bot]") {
			continue
		}
		perm, err := gh.Permission(ctx, pr, r.Author)
		if err != nil {
			return "", err
		}
		if perm.CanWrite() {
			return r.Author, nil
		}
	}
	return "", nil
}

// approvalRun is the check run for head: passed by approver, or pending.
func approvalRun(head, approver string, excluded map[string]bool) githubapi.CheckRun {
	run := githubapi.CheckRun{Name: ApprovalCheck, HeadSHA: head}
	if approver != "" {
		run.Conclusion, run.Title = "success", "Approved by @"+approver
		run.Summary = fmt.Sprintf("@%s, who has write access and asked for none of this pull request's runs, approved %s.", approver, shortSHA(head))
		return run
	}
	var who []string
	for login := range excluded {
		if login != "" {
			who = append(who, "@"+login)
		}
	}
	slices.Sort(who)
	run.Title = "Waiting for an independent approval"
	run.Summary = fmt.Sprintf("This repository asks (`approval: independent`) for an approval of the head %s by someone with write access "+
		"who did not ask for its runs (%s). A new push needs a new approval.", shortSHA(head), strings.Join(who, ", "))
	return run
}
