// Package schedule runs the `schedules:` of each repository's default
// branch .github/agent.yml: at each time a schedule's cron names, it opens
// a tracking issue and enqueues its solve as the trigger label would, once
// per period whatever how many scanners look (a Redis claim per schedule
// and period), and not while the pull request of the schedule's last run
// is still open (it says so on that run's issue instead).
package schedule

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/patchwright/patchwright/agent/config"
	"github.com/patchwright/patchwright/internal/logkey"
	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// DefaultInterval is how often Run scans.
const DefaultInterval = 5 * time.Minute

// lastTTL keeps a schedule's last issue past any period it may have.
const lastTTL = 400 * 24 * time.Hour

// GitHub is what a scan reads and writes; *githubapi.App satisfies it.
type GitHub interface {
	InstalledRepos(ctx context.Context) ([]tasks.Issue, error)
	DefaultBranchFile(ctx context.Context, repo tasks.Issue, path string) ([]byte, bool, error)
	CreateIssue(ctx context.Context, repo tasks.Issue, title, body string) (int, error)
	IssueByApp(ctx context.Context, repo tasks.Issue, since time.Time, marker string) (int, bool, error)
	FindPullRequest(ctx context.Context, repo tasks.Issue, branch string) (githubapi.PullRequest, bool, error)
	PostComment(ctx context.Context, issue tasks.Issue, body string) (int64, error)
}

// Queue enqueues the tracking issue's solve; *jobs.Queue satisfies it.
type Queue interface {
	EnqueueSolve(ctx context.Context, p tasks.SolveIssue) (jobs.EnqueueResult, error)
}

// Scanner scans the installed repositories for due schedules.
type Scanner struct {
	GitHub GitHub
	Queue  Queue
	Redis  redis.UniversalClient
	Logger *slog.Logger
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Outcome is what a scan did with one schedule's period.
type Outcome struct {
	Repo   tasks.Issue
	Title  string
	Period time.Time
	// Issue is the tracking issue opened (Started) or the last run's
	// issue told it was skipped (Skipped).
	Issue   int
	Started bool
	// Skipped: the last run's pull request, PR, is still open.
	Skipped bool
	PR      int
}

// Scan looks at every installed repository once and starts the schedules
// whose period has not been claimed. A repository whose file cannot be
// read or parsed is logged and passed over; the error is the first failure
// to reach GitHub or Redis, after the other repositories were scanned.
func (s *Scanner) Scan(ctx context.Context) ([]Outcome, error) {
	repos, err := s.GitHub.InstalledRepos(ctx)
	if err != nil {
		return nil, err
	}
	var out []Outcome
	var first error
	for _, repo := range repos {
		got, err := s.scanRepo(ctx, repo)
		out = append(out, got...)
		if err != nil && first == nil {
			first = err
		}
	}
	return out, first
}

func (s *Scanner) scanRepo(ctx context.Context, repo tasks.Issue) ([]Outcome, error) {
	data, ok, err := s.GitHub.DefaultBranchFile(ctx, repo, config.Path)
	if err != nil || !ok {
		return nil, err
	}
	cfg, err := config.Parse(data)
	if err != nil {
		s.log().Warn("schedules not read: the default branch's configuration does not parse", "repo", repo.Owner+"/"+repo.Repo, logkey.Err, err)
		return nil, nil
	}
	var out []Outcome
	for _, sc := range cfg.Schedules {
		o, due, err := s.runOne(ctx, repo, sc)
		if err != nil {
			return out, fmt.Errorf("schedule %q of %s/%s: %w", sc.Title, repo.Owner, repo.Repo, err)
		}
		if due {
			out = append(out, o)
		}
	}
	return out, nil
}

func (s *Scanner) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

func (s *Scanner) log() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

// scheduleID names a schedule by its repository and title (titles are
// unique per file): changing its cron or body keeps its history.
func scheduleID(repo tasks.Issue, title string) string {
	sum := sha256.Sum256([]byte(strings.ToLower(repo.Owner + "/" + repo.Repo + "\x00" + strings.TrimSpace(title))))
	return hex.EncodeToString(sum[:8])
}

func claimKey(id string, period time.Time) string {
	return jobs.KeyPrefix + "schedule:" + id + ":" + strconv.FormatInt(period.Unix(), 10)
}

func lastKey(id string) string { return jobs.KeyPrefix + "schedule-last:" + id }

// runOne handles one schedule: due is false when its period was claimed
// already (by this scanner or another).
func (s *Scanner) runOne(ctx context.Context, repo tasks.Issue, sc config.Schedule) (o Outcome, due bool, err error) {
	sched, err := sc.Parse()
	if err != nil {
		return o, false, nil // config.Parse refused it already
	}
	now := s.now()
	period, ok := config.Period(sched, now)
	if !ok {
		return o, false, nil
	}
	id := scheduleID(repo, sc.Title)
	o = Outcome{Repo: repo, Title: sc.Title, Period: period}
	// The claim outlives the period, so a late scan of it finds it. It
	// holds "pending:T" until the issue is opened, then "issue:N" until
	// its solve is enqueued, then "done": a scan that finds "issue:N"
	// enqueues it again (the enqueue is idempotent), so a failure in
	// between opens no second issue. T ends a lease: a process that dies
	// holding "pending" loses the period to the next scan, not forever.
	key := claimKey(id, period)
	ttl := max(2*sched.Next(period).Sub(period), 2*time.Hour)
	mine := "pending:" + strconv.FormatInt(now.Add(claimLease).Unix(), 10)
	claimed, err := s.Redis.SetNX(ctx, key, mine, ttl).Result()
	if err != nil {
		return o, false, err
	}
	if !claimed {
		v, err := s.Redis.Get(ctx, key).Result()
		if err != nil {
			return o, false, ignoreNil(err)
		}
		if n, half := strings.CutPrefix(v, "issue:"); half {
			o.Issue, _ = strconv.Atoi(n)
			err = s.enqueue(ctx, repo, id, sc, period, o.Issue)
			o.Started = err == nil
			return o, true, err
		}
		if claimed, err = s.takeOver(ctx, key, v, mine, now); !claimed || err != nil {
			return o, false, err
		}
	}
	if o, skipped, err := s.skipWhileOpen(ctx, repo, id, sc, o); skipped || err != nil {
		if err != nil {
			s.giveBack(ctx, key, mine)
		}
		return o, true, err
	}
	if o.Issue, err = s.openIssue(ctx, repo, sc, period); err != nil {
		s.giveBack(ctx, key, mine)
		return o, true, err
	}
	if err := s.Redis.Set(ctx, key, "issue:"+strconv.Itoa(o.Issue), ttl).Err(); err != nil {
		return o, true, err
	}
	err = s.enqueue(ctx, repo, id, sc, period, o.Issue)
	o.Started = err == nil
	return o, true, err
}

// openIssue opens the period's tracking issue, unless the app opened it
// already: a scanner that died after GitHub created the issue and before
// the claim recorded it, or a create whose answer was lost (a 502, a
// timeout) after it landed, left one that the claim does not name.
func (s *Scanner) openIssue(ctx context.Context, repo tasks.Issue, sc config.Schedule, period time.Time) (int, error) {
	n, found, err := s.GitHub.IssueByApp(ctx, repo, period, marker(sc, period))
	if err != nil || found {
		if found {
			s.log().Warn("adopted the tracking issue an earlier scan opened", "repo", repo.Owner+"/"+repo.Repo, logkey.Issue, n)
		}
		return n, err
	}
	title, body := text(sc, period)
	return s.GitHub.CreateIssue(ctx, repo, title, body)
}

// claimLease is how long a "pending" claim holds before another scan may
// take the period over: far longer than opening an issue takes.
const claimLease = 10 * time.Minute

// swapClaim replaces a claim only if it still holds what the caller read
// (KEYS[1], ARGV[1] the old value, ARGV[2] the new, "" to delete).
var swapClaim = redis.NewScript(`
if redis.call("GET", KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == "" then redis.call("DEL", KEYS[1]) else redis.call("SET", KEYS[1], ARGV[2], "KEEPTTL") end
return 1`)

// takeOver claims a period whose "pending" lease (v) ran out: its holder
// died between the claim and the issue. A claim of before leases (bare
// "pending") counts as run out; "done" never does.
func (s *Scanner) takeOver(ctx context.Context, key, v, mine string, now time.Time) (bool, error) {
	t, ok := strings.CutPrefix(v, "pending")
	end, _ := strconv.ParseInt(strings.TrimPrefix(t, ":"), 10, 64)
	if !ok || now.Unix() <= end {
		return false, nil
	}
	n, err := swapClaim.Run(ctx, s.Redis, []string{key}, v, mine).Int()
	if err == nil && n == 1 {
		s.log().Warn("took over a scheduled period whose claim ran out", "claim", v)
	}
	return n == 1, err
}

// giveBack frees a period's claim after a failure before anything was
// done, so the next scan tries again; only while it is still mine, not
// once another scan took it over.
func (s *Scanner) giveBack(ctx context.Context, key, mine string) {
	if err := swapClaim.Run(context.WithoutCancel(ctx), s.Redis, []string{key}, mine, "").Err(); err != nil {
		s.log().Warn("give a schedule's period back", logkey.Err, err)
	}
}

func ignoreNil(err error) error {
	if errors.Is(err, redis.Nil) {
		return nil
	}
	return err
}

// skipWhileOpen says on the schedule's last issue that this period is
// skipped when that run's pull request is still open.
func (s *Scanner) skipWhileOpen(ctx context.Context, repo tasks.Issue, id string, sc config.Schedule, o Outcome) (Outcome, bool, error) {
	last, err := s.Redis.Get(ctx, lastKey(id)).Int()
	if errors.Is(err, redis.Nil) {
		return o, false, nil
	}
	if err != nil {
		return o, false, err
	}
	pr, open, err := s.GitHub.FindPullRequest(ctx, repo, jobs.AgentBranch(last))
	if err != nil || !open {
		return o, false, err
	}
	issue := repo
	issue.Number = last
	msg := fmt.Sprintf("The scheduled run of %s (`%s`) was skipped: the pull request of this run, #%d, is still open. Merge or close it, and the next period runs again.",
		o.Period.Format(time.RFC3339), sc.Cron, pr.Number)
	if _, err := s.GitHub.PostComment(ctx, issue, msg); err != nil {
		return o, false, err
	}
	s.log().Info("scheduled run skipped: the last run's pull request is open", "repo", repo.Owner+"/"+repo.Repo, "schedule", sc.Title, "pr", pr.Number)
	o.Issue, o.Skipped, o.PR = last, true, pr.Number
	return o, true, nil
}

// text is the tracking issue's title and body for a period.
func text(sc config.Schedule, period time.Time) (title, body string) {
	return strings.TrimSpace(sc.Title), strings.TrimSpace(sc.Body) + "\n\n---\n" + marker(sc, period)
}

// marker is the line of a tracking issue's body that names its schedule
// and period: what openIssue looks for.
func marker(sc config.Schedule, period time.Time) string {
	return fmt.Sprintf("Opened by Patchwright for the schedule `%s` of `%s` (period %s).", sc.Cron, config.Path, period.Format(time.RFC3339))
}

// enqueue records issue n as the schedule's last run and enqueues its
// solve as the label would: pinned to the text it was opened with, on the
// same queue, under the same policy and budgets. Then the period's claim
// is done.
func (s *Scanner) enqueue(ctx context.Context, repo tasks.Issue, id string, sc config.Schedule, period time.Time, n int) error {
	if err := s.Redis.Set(ctx, lastKey(id), n, lastTTL).Err(); err != nil {
		return err
	}
	issue := repo
	issue.Number = n
	title, body := text(sc, period)
	_, err := s.Queue.EnqueueSolve(ctx, tasks.SolveIssue{Issue: issue, DeliveryID: "schedule-" + id + "-" + strconv.FormatInt(period.Unix(), 10),
		IssueHash: tasks.IssueHash(title, body), Trigger: tasks.TriggerSchedule})
	if err != nil {
		return err
	}
	if err := s.Redis.Set(ctx, claimKey(id, period), "done", redis.KeepTTL).Err(); err != nil {
		return err
	}
	s.log().Info("scheduled run started", "repo", repo.Owner+"/"+repo.Repo, "schedule", sc.Title, logkey.Issue, issue.String())
	return nil
}

// Run scans now and then every interval (DefaultInterval when zero) until
// ctx ends, logging what failed. Of the workers that run it, one scans
// per interval (Tick).
func (s *Scanner) Run(ctx context.Context, every time.Duration) {
	if every <= 0 {
		every = DefaultInterval
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		if _, err := s.Tick(ctx, every); err != nil && ctx.Err() == nil {
			s.log().ErrorContext(ctx, "scan schedules", logkey.Err, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// scanKey is held by the worker that scans in the current interval.
const scanKey = jobs.KeyPrefix + "schedule-scan"

// Tick scans unless another scanner did within the interval every: each
// scan reads every installed repository's agent.yml, so N workers
// scanning would cost N times the API calls for nothing (the period
// claims already keep the runs single). scanned is false when another
// scanner held the interval.
func (s *Scanner) Tick(ctx context.Context, every time.Duration) (scanned bool, err error) {
	// A little under the interval, so the next tick of the same worker
	// finds it free.
	first, err := s.Redis.SetNX(ctx, scanKey, s.now().Format(time.RFC3339Nano), every*9/10).Result()
	if err != nil || !first {
		return false, err
	}
	_, err = s.Scan(ctx)
	return true, err
}
