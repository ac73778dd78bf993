package githubjob

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/patchwright/patchwright/internal/logkey"
	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/patchwright/patchwright/report/marker"
)

// StaleCloseDays is how long a warned pull request waits for a person
// before the stale pass closes it.
const StaleCloseDays = 7

// DefaultStaleInterval is how often Stale.Run makes its pass.
const DefaultStaleInterval = time.Hour

// StaleGitHub is what the stale pass needs from GitHub; *githubapi.App
// is one.
type StaleGitHub interface {
	GitHub
	// Installations lists the app's installations, InstallationRepos the
	// repositories one reaches.
	Installations(ctx context.Context) ([]int64, error)
	InstallationRepos(ctx context.Context, inst int64) ([]tasks.Issue, error)
	// AgentPullRequests lists the open pull requests from agent/issue-N
	// branches of the repository itself ("" base: any).
	AgentPullRequests(ctx context.Context, repo tasks.Issue, base string) ([]githubapi.PullRequest, error)
	ClosePullRequest(ctx context.Context, pr tasks.Issue) error
}

// Claims makes each warning and each close happen once, whichever worker
// makes the pass; *jobs.Queue is one.
type Claims interface {
	ClaimMeaning(ctx context.Context, key, id string) (string, error)
}

// Stale warns agent pull requests nobody touched for the repository's
// stale_after_days (GitHub's updated_at: a comment, review, push, label
// or edit by anyone), then closes them and deletes their branch
// StaleCloseDays after the warning unless someone acted since.
type Stale struct {
	GitHub   StaleGitHub
	Branches *Branches
	Claims   Claims
	// Outcomes, when set, is made on the same schedule after each stale
	// pass: the periodic outcome check (*outcomes.Check).
	Outcomes OutcomeCheck
	// Now is the clock (time.Now when nil).
	Now    func() time.Time
	Logger *slog.Logger
}

// OutcomeCheck is a pass over agent pull requests whose outcome is not
// decided yet; it returns how many it classified.
type OutcomeCheck interface {
	Pass(ctx context.Context) (int, error)
}

// Pass looks at every open agent pull request of every installation once
// and returns how many it warned and closed.
func (s *Stale) Pass(ctx context.Context) (warned, closed int, err error) {
	insts, err := s.GitHub.Installations(ctx)
	if err != nil {
		return 0, 0, err
	}
	var errs []error
	for _, inst := range insts {
		repos, err := s.GitHub.InstallationRepos(ctx, inst)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, repo := range repos {
			w, c, err := s.repo(ctx, repo)
			warned, closed = warned+w, closed+c
			if err != nil {
				errs = append(errs, fmt.Errorf("%s/%s: %w", repo.Owner, repo.Repo, err))
			}
		}
	}
	return warned, closed, errors.Join(errs...)
}

// repo makes the pass over one repository, as its default branch's
// stale_after_days says (0: not at all).
func (s *Stale) repo(ctx context.Context, repo tasks.Issue) (warned, closed int, err error) {
	cfg, err := trustedConfig(ctx, s.GitHub, repo)
	if err != nil || cfg.StaleAfter() == 0 {
		return 0, 0, err
	}
	prs, err := s.GitHub.AgentPullRequests(ctx, repo, "")
	if err != nil || len(prs) == 0 {
		return 0, 0, err
	}
	bot, err := s.GitHub.Bot(ctx, repo)
	if err != nil {
		return 0, 0, err
	}
	var errs []error
	for _, pr := range prs {
		did, err := s.pull(ctx, repo, pr, bot.Login, cfg.StaleAfter())
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("#%d: %w", pr.Number, err))
		case did == "warned":
			warned++
		case did == "closed":
			closed++
		}
	}
	return warned, closed, errors.Join(errs...)
}

// pull warns or closes one pull request, or leaves it: "warned",
// "closed" or "".
func (s *Stale) pull(ctx context.Context, repo tasks.Issue, pr githubapi.PullRequest, bot string, days int) (string, error) {
	issue := repo
	issue.Number = pr.Number
	cs, err := s.GitHub.Comments(ctx, issue)
	if err != nil {
		return "", err
	}
	warning, warned := lastWarning(cs, bot, pr.Number)
	if warned {
		acted, err := s.actedSince(ctx, issue, pr, cs, bot, warning.Created)
		if err != nil {
			return "", err
		}
		if !acted {
			if s.now().Sub(warning.Created) < StaleCloseDays*24*time.Hour {
				return "", nil
			}
			return s.close(ctx, issue, pr, warning.ID, days)
		}
	}
	if s.now().Sub(pr.UpdatedAt) < time.Duration(days)*24*time.Hour {
		return "", nil
	}
	return s.warn(ctx, issue, pr, days)
}

// lastWarning is the bot's latest stale warning on pull request n.
func lastWarning(cs []githubapi.Comment, bot string, n int) (githubapi.Comment, bool) {
	for i := len(cs) - 1; i >= 0; i-- {
		if strings.EqualFold(cs[i].Author, bot) && strings.Contains(cs[i].Body, marker.Stale(n)) {
			return cs[i], true
		}
	}
	return githubapi.Comment{}, false
}

// actedSince reports whether anyone touched the pull request after the
// warning at: a comment or review by someone other than the bot, a push
// by someone else (its head is not the commit Patchwright pushed), or
// anything else GitHub counts in updated_at (a label) later than the
// warning's own update, with a minute's slack for the two clocks.
func (s *Stale) actedSince(ctx context.Context, issue tasks.Issue, pr githubapi.PullRequest, cs []githubapi.Comment, bot string, at time.Time) (bool, error) {
	if marker.ParsePushed(pr.Body) != pr.HeadSHA || pr.UpdatedAt.After(at.Add(time.Minute)) {
		return true, nil
	}
	for _, c := range cs {
		if !strings.EqualFold(c.Author, bot) && c.Created.After(at) {
			return true, nil
		}
	}
	reviews, err := s.GitHub.AllReviews(ctx, issue)
	if err != nil {
		return false, err
	}
	for _, r := range reviews {
		if !strings.EqualFold(r.Author, bot) && r.Submitted.After(at) {
			return true, nil
		}
	}
	return false, nil
}

// warn posts the warning, once per quiet spell (claimed by the update it
// follows).
func (s *Stale) warn(ctx context.Context, issue tasks.Issue, pr githubapi.PullRequest, days int) (string, error) {
	key := fmt.Sprintf("%sstale-warn:%s:%d", jobs.KeyPrefix, issue, pr.UpdatedAt.Unix())
	if ok, err := s.claim(ctx, key); err != nil || !ok {
		return "", err
	}
	body := fmt.Sprintf("This pull request has had no activity for %d days. It will be closed, and its branch deleted, "+
		"in %d days unless someone comments, reviews, pushes to it or labels it.\n\n%s", days, StaleCloseDays, marker.Stale(pr.Number))
	if _, err := s.GitHub.PostComment(ctx, issue, body); err != nil {
		return "", err
	}
	s.log().Info("warned a stale pull request", logkey.Issue, issue.String())
	return "warned", nil
}

// close closes the pull request after its warning and deletes its branch
// while the head is still the commit Patchwright pushed.
func (s *Stale) close(ctx context.Context, issue tasks.Issue, pr githubapi.PullRequest, warningID int64, days int) (string, error) {
	key := fmt.Sprintf("%sstale-close:%s:%d", jobs.KeyPrefix, issue, warningID)
	if ok, err := s.claim(ctx, key); err != nil || !ok {
		return "", err
	}
	body := fmt.Sprintf("Closed: no activity for %d days after the warning above. Reopen it, or label the issue again, to go on.", StaleCloseDays)
	if _, err := s.GitHub.PostComment(ctx, issue, body); err != nil {
		return "", err
	}
	if err := s.GitHub.ClosePullRequest(ctx, issue); err != nil {
		return "", err
	}
	if _, err := s.Branches.DeleteBranchAt(ctx, issue, pr.HeadRef, pr.HeadSHA); err != nil {
		return "", err
	}
	s.log().Info("closed a stale pull request", logkey.Issue, issue.String(), "stale_after_days", days)
	return "closed", nil
}

// claim takes key for good: true when this pass is the first.
func (s *Stale) claim(ctx context.Context, key string) (bool, error) {
	// Unique per claim, whatever the clock says: two passes must not
	// both read as the holder.
	id := fmt.Sprintf("stale-%d-%d", time.Now().UnixNano(), rand.Uint64())
	holder, err := s.Claims.ClaimMeaning(ctx, key, id)
	return holder == id, err
}

func (s *Stale) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Stale) log() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

// Run makes a pass (and the outcome check) now and then every interval (DefaultStaleInterval when
// zero) until ctx ends, logging what it did and what failed.
func (s *Stale) Run(ctx context.Context, every time.Duration) {
	if every <= 0 {
		every = DefaultStaleInterval
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		if w, c, err := s.Pass(ctx); err != nil && ctx.Err() == nil {
			s.log().ErrorContext(ctx, "stale pass", "warned", w, "closed", c, logkey.Err, err)
		}
		if s.Outcomes != nil {
			if n, err := s.Outcomes.Pass(ctx); err != nil && ctx.Err() == nil {
				s.log().ErrorContext(ctx, "outcome check", "classified", n, logkey.Err, err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
