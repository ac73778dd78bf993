package jobs

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/patchwright/patchwright/agent/config"
	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/agent/verify"
	"github.com/patchwright/patchwright/jobs/gitrepo"
	"github.com/patchwright/patchwright/report"
)

// githubPublisher is the Publisher of the GitHub worker: the change goes
// to agent/issue-N as a compare-and-swap push, then into the one pull
// request of that branch, with a check run per final check.
type githubPublisher struct {
	gh       GitHub
	issue    Issue
	a        attempt
	title    string
	branch   string
	base     string // the pull request's base branch
	outDir   string
	logURL   string
	started  time.Time
	trailers []string
	// pr is the pull request of a retry; nil for a solve.
	pr      *PullRequest
	history history
	status  *statusComment

	expected plumbing.Hash
	prURL    string
}

// Target is agent/issue-N, expected where it is now: for a retry the head
// that was cloned (so a push made meanwhile is refused), for a solve the
// remote's branch as this run found it (zero when there is none).
func (g *githubPublisher) Target(ctx context.Context, repo *gitrepo.Repo, _ Job) (Target, error) {
	if g.pr != nil {
		g.expected = repo.Base()
	} else {
		heads, err := repo.RemoteBranches(ctx)
		if err != nil {
			return Target{}, err
		}
		g.expected = heads[g.branch]
	}
	return Target{Branch: g.branch, Expected: g.expected, Trailers: g.trailers}, nil
}

// Publish pushes the commit, opens or updates the pull request and posts
// the check runs. A run that committed nothing publishes nothing here:
// the pipeline then posts the failure comment.
func (g *githubPublisher) Publish(ctx context.Context, repo *gitrepo.Repo, res *Result) error {
	if ctx.Err() != nil || res.HeadCommit == "" {
		return nil
	}
	if err := repo.Push(ctx, res.Branch, g.expected); err != nil {
		return err
	}
	in, err := g.reportInput(res)
	if err != nil {
		return err
	}
	in.GoModule = goModule(repo.Worktree())
	h := g.nextHistory(res, in.Final)
	body := withHistory(res.Body, h, len(h.Attempts))
	pr, err := g.upsertPR(ctx, repo, res, body)
	if err != nil {
		return err
	}
	g.prURL = pr.URL
	return g.checkRuns(ctx, repo, res, in)
}

// upsertPR updates the retry's pull request, or the open one of the
// branch, or opens one; a 422 "already exists" (a race) is looked up
// again and updated.
func (g *githubPublisher) upsertPR(ctx context.Context, repo *gitrepo.Repo, res *Result, body string) (PullRequest, error) {
	title := prTitle(g.title, g.issue.Number)
	if g.pr != nil {
		return *g.pr, g.update(ctx, repo, res, *g.pr, title, body)
	}
	if pr, ok, err := g.gh.FindPullRequest(ctx, g.issue, g.branch); err != nil || ok {
		if err != nil {
			return PullRequest{}, err
		}
		return pr, g.update(ctx, repo, res, pr, title, body)
	}
	draft, err := g.draft(repo, res.Outcome)
	if err != nil {
		return PullRequest{}, err
	}
	pr, err := g.gh.CreatePullRequest(ctx, g.issue, NewPullRequest{Title: title, Head: g.branch, Base: g.base, Body: body, Draft: draft})
	if errors.Is(err, ErrPullRequestExists) {
		pr, ok, ferr := g.gh.FindPullRequest(ctx, g.issue, g.branch)
		if ferr != nil || !ok {
			return PullRequest{}, fmt.Errorf("%w; looking it up: found=%v %v", err, ok, ferr)
		}
		return pr, g.update(ctx, repo, res, pr, title, body)
	}
	return pr, err
}

// update edits an existing pull request and brings its draft state in
// line with `draft:` for this run's outcome, as if it were opened now: a
// retry that verifies the change under `draft: auto` makes the pull
// request ready for review, and one that does not makes it a draft again.
// Only a GitHub that is a Drafter can; failing to is logged, not fatal.
func (g *githubPublisher) update(ctx context.Context, repo *gitrepo.Repo, res *Result, pr PullRequest, title, body string) error {
	if err := g.gh.EditPullRequest(ctx, g.prIssue(pr.Number), title, body); err != nil {
		return err
	}
	want, err := g.draft(repo, res.Outcome)
	if err != nil {
		return err
	}
	d, ok := g.gh.(Drafter)
	if want == pr.Draft || !ok || pr.NodeID == "" {
		return nil
	}
	if err := d.SetDraft(ctx, g.prIssue(pr.Number), pr.NodeID, want); err != nil {
		g.logger().Warn("could not change the pull request's draft state", "draft", want, LogError, err)
	}
	return nil
}

func (g *githubPublisher) logger() *slog.Logger {
	if g.status != nil && g.status.log != nil {
		return g.status.log
	}
	return slog.Default()
}

// draft applies `draft:` from .github/agent.yml as the base commit has it
// (never as the run left it: the model could edit the file).
func (g *githubPublisher) draft(repo *gitrepo.Repo, o verify.Outcome) (bool, error) {
	data, err := repo.BaseContent(config.Path)
	if err != nil {
		return true, err
	}
	cfg := config.Default()
	if data != nil {
		if cfg, err = config.Parse(data); err != nil {
			return true, fmt.Errorf("%w: %w", ErrConfig, err)
		}
	}
	switch cfg.Draft {
	case config.DraftAlways:
		return true, nil
	case config.DraftNever:
		return false, nil
	}
	return o != verify.Verified, nil
}

func (g *githubPublisher) prIssue(n int) Issue {
	i := g.issue
	i.Number = n
	return i
}

func prTitle(title string, n int) string {
	title = strings.Join(strings.Fields(title), " ")
	if title == "" {
		return fmt.Sprintf("Patchwright: issue #%d", n)
	}
	return title
}

// checkRuns posts one check run per final check on the pushed commit,
// updating a run of the same name on that commit rather than adding one.
func (g *githubPublisher) checkRuns(ctx context.Context, repo *gitrepo.Repo, res *Result, in report.Input) error {
	for _, c := range in.Final {
		var base *verify.CheckResult
		for i := range in.Baseline {
			if in.Baseline[i].Name == c.Name {
				base = &in.Baseline[i]
			}
		}
		out, err := report.CheckRun(c, base, in.GoModule, g.logURL)
		if err != nil {
			return err
		}
		name := CheckRunPrefix + c.Name
		ids, err := g.gh.CheckRunIDs(ctx, g.issue, res.HeadCommit, name)
		if err != nil {
			return err
		}
		var id int64
		if len(ids) > 0 {
			id = ids[0]
		}
		if _, err := g.gh.PutCheckRun(ctx, g.issue, id, CheckRun{Name: name, HeadSHA: res.HeadCommit, DetailsURL: g.logURL, Output: out}); err != nil {
			return err
		}
	}
	return nil
}

var moduleRE = regexp.MustCompile(`(?m)^module\s+"?([^\s"]+)"?`)

// reportInput rebuilds the report's facts from the run's ledger file (the
// record the Executor wrote), for check runs and the failure comment.
func (g *githubPublisher) reportInput(res *Result) (report.Input, error) {
	log, err := ledger.ReadFile(filepath.Join(g.outDir, FileLedger))
	if err != nil {
		return report.Input{}, fmt.Errorf("read the run's ledger: %w", err)
	}
	in, err := report.FromLedger(log)
	if err != nil {
		return report.Input{}, err
	}
	in.RunID, in.Issue, in.LogURL = runID(g.a.run), g.issue.Number, g.logURL
	in.Outcome, in.Reason = res.Outcome, res.Reason
	in.Attempt = len(g.history.Attempts) + 1
	for _, c := range res.Changes {
		in.Files = append(in.Files, report.FileStat{Path: c.Path, Added: c.Added, Deleted: c.Removed, Binary: c.Binary})
	}
	return in, nil
}

// goModule reads the module path from go.mod in dir, "" if none.
func goModule(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return ""
	}
	if m := moduleRE.FindSubmatch(b); m != nil {
		return string(m[1])
	}
	return ""
}

// history is the attempt history kept, hidden, in the pull request body,
// so any worker can read it on a retry (the data directory is per worker).
type history struct {
	Attempts []historyAttempt `json:"attempts"`
	// Failed are the final checks that failed in the latest attempt.
	Failed []failedCheck `json:"failed,omitempty"`
}

type historyAttempt struct {
	Number  int            `json:"n"`
	Started time.Time      `json:"started"`
	By      string         `json:"by"`
	Trigger string         `json:"trigger"`
	Outcome verify.Outcome `json:"outcome"`
	Reason  string         `json:"reason"`
}

type failedCheck struct {
	Name    string `json:"name"`
	Command string `json:"command"`
	Output  string `json:"output"`
}

// History bounds: the body must stay under report.MaxBody with it.
const (
	maxHistoryAttempts = 20
	maxFailedChecks    = 5
	maxFailedOutput    = 1500
)

const historyMarker = "<!-- patchwright:history "

var historyRE = regexp.MustCompile(`<!-- patchwright:history ([A-Za-z0-9+/=]+) -->`)

// readHistory finds the history in a body; a body without one (edited by
// a person, or from before) gives an empty history.
func readHistory(body string) history {
	var h history
	m := historyRE.FindStringSubmatch(body)
	if m == nil {
		return h
	}
	b, err := base64.StdEncoding.DecodeString(m[1])
	if err != nil || json.Unmarshal(b, &h) != nil {
		return history{}
	}
	return h
}

// nextHistory adds this attempt and its failed checks.
func (g *githubPublisher) nextHistory(res *Result, final []verify.CheckResult) history {
	h := history{Attempts: append([]historyAttempt(nil), g.history.Attempts...)}
	if len(h.Attempts) == 0 && g.pr != nil {
		// The body lost its history: count the earlier attempt at least.
		h.Attempts = append(h.Attempts, historyAttempt{Number: 1, Outcome: "unknown", Reason: "the history was not found in the pull request body"})
	}
	h.Attempts = append(h.Attempts, historyAttempt{
		Number: len(h.Attempts) + 1, Started: g.started.UTC(), By: g.a.requester, Trigger: g.a.trigger,
		Outcome: res.Outcome, Reason: res.Reason,
	})
	if len(h.Attempts) > maxHistoryAttempts {
		h.Attempts = h.Attempts[len(h.Attempts)-maxHistoryAttempts:]
	}
	for _, c := range final {
		if c.Failed() && len(h.Failed) < maxFailedChecks {
			h.Failed = append(h.Failed, failedCheck{Name: c.Name, Command: c.Command, Output: tailText(c.Output, maxFailedOutput)})
		}
	}
	return h
}

func tailText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !isRuneStart(s[i]) {
		i++
	}
	return "…" + s[i:]
}

var runMarkerRE = regexp.MustCompile(`^(<!-- patchwright:run=[A-Za-z0-9_.-]+ attempt=)\d+( -->)`)

// withHistory puts the attempt number n (unless 0) in the body's run marker and
// appends the visible attempt list and the hidden history; failed-check
// output is dropped first if the body would pass GitHub's limit.
func withHistory(body string, h history, n int) string {
	if n > 0 {
		body = runMarkerRE.ReplaceAllString(body, fmt.Sprintf("${1}%d${2}", n))
	}
	if i := strings.Index(body, attemptsHeading); i >= 0 {
		body = strings.TrimRight(body[:i], "\n")
	}
	for {
		out := body + "\n\n" + attemptsSection(h)
		if len(out) < report.MaxBody || (len(h.Failed) == 0 && len(h.Attempts) <= 1) {
			return out
		}
		if len(h.Failed) > 0 {
			h.Failed = nil
		} else {
			h.Attempts = h.Attempts[1:]
		}
	}
}

const attemptsHeading = "<details><summary>Attempt history</summary>"

func attemptsSection(h history) string {
	var b strings.Builder
	b.WriteString(attemptsHeading + "\n\n")
	for _, a := range h.Attempts {
		fmt.Fprintf(&b, "%d. ", a.Number)
		if !a.Started.IsZero() {
			b.WriteString(a.Started.UTC().Format("2006-01-02 15:04 UTC"))
		}
		if a.By != "" {
			fmt.Fprintf(&b, ", triggered by @%s", oneLine(a.By))
		}
		if a.Trigger != "" {
			fmt.Fprintf(&b, " (%s)", oneLine(a.Trigger))
		}
		fmt.Fprintf(&b, ": %s", a.Outcome)
		if a.Reason != "" {
			fmt.Fprintf(&b, ", %s", oneLine(a.Reason))
		}
		b.WriteString(".\n")
	}
	b.WriteString("\n</details>\n")
	data, _ := json.Marshal(h)
	b.WriteString(historyMarker + base64.StdEncoding.EncodeToString(data) + " -->\n")
	return b.String()
}

// oneLine keeps text from breaking out of its list item or opening HTML.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.NewReplacer("<", "‹", ">", "›", "`", "'").Replace(truncateText(s, 300))
}

// recordAttempt adds an attempt that published nothing to the retried
// pull request's history, leaving its change and body otherwise as they
// were.
func (g *githubPublisher) recordAttempt(ctx context.Context, res *Result) error {
	if g.pr == nil {
		return nil
	}
	h := g.nextHistory(res, nil)
	h.Failed = g.history.Failed
	return g.gh.EditPullRequest(ctx, g.prIssue(g.pr.Number), g.pr.Title, withHistory(g.pr.Body, h, 0))
}
