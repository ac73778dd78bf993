package pipeline

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/config"
	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/agent/provider"
	"github.com/patchwright/patchwright/agent/secrets"
	"github.com/patchwright/patchwright/jobs/gitrepo"
	"github.com/patchwright/patchwright/report"
	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/verify"
	"github.com/patchwright/patchwright/verify/findings"
)

// Result is a run's result. Its JSON form is result.json, docs/design.md §4.5
// exactly; the fields without a JSON name are for the publisher.
type Result struct {
	Outcome      verify.Outcome     `json:"outcome"`
	Reason       string             `json:"reason"`
	Branch       string             `json:"branch"`
	BaseCommit   string             `json:"base_commit"`
	HeadCommit   string             `json:"head_commit"`
	FilesChanged []string           `json:"files_changed"`
	Checks       []CheckSummary     `json:"checks"`
	NotVerified  []string           `json:"not_verified"`
	Findings     []findings.Finding `json:"findings"`
	Steps        int                `json:"steps"`
	Usage        ledger.Usage       `json:"usage"`
	// ReplayedFrom is set when no model was called: the model turns were
	// replayed from this transcript (--model replay:FILE). It is left
	// out of result.json for a model's run.
	ReplayedFrom string `json:"replayed_from,omitempty"`
	// PatchwrightVersion names the build that ran the job
	// (Executor.Version), so a result can be traced to its release; left
	// out when unset.
	PatchwrightVersion string `json:"patchwright_version,omitempty"`
	// CostUSD is the run's estimated model cost from the operator's price
	// table (Executor.Prices); nil when the model has no price. It is not
	// in result.json, whose keys are docs/design.md §4.5's exactly.
	CostUSD *float64 `json:"-"`
	// Interrupted: a worker's shutdown stopped the model loop
	// (agent.Interrupted); the final checks did not run. Outcome is
	// stopped and Reason starts "interrupted:".
	Interrupted bool `json:"-"`
	// Merge is what a conflict's resolution laid (Job.Merge); nil for
	// any other run.
	Merge *MergeResult `json:"-"`

	// Body is the pull-request body, as written to pr.md.
	Body string `json:"-"`
	// Changes are the exact changes against the base commit, committed or
	// not.
	Changes []gitrepo.Change `json:"-"`
	// Secrets found in the change; when there are any, nothing was
	// committed.
	Secrets []secrets.Finding `json:"-"`
	// Summary is the model's finish summary (a claim, not a fact).
	Summary string `json:"-"`
	// Report is every fact the body states, built once from the ledger;
	// the publisher renders check runs and comments from it.
	Report report.Input `json:"-"`
	// URL is where the Publisher published the change (a pull request);
	// empty when it published nothing.
	URL string `json:"-"`
	// Draft is the run's `draft:` setting, from the trusted configuration.
	Draft config.Draft `json:"-"`
	// Reviewers are the configuration's `reviewers:`, read from the
	// default branch like Draft.
	Reviewers []string `json:"-"`
	// Approval is `approval: independent`, read like Draft: the
	// publisher puts the pending approval check on the new head.
	Approval bool `json:"-"`
	// OwnerReviewers and OwnerTeams are the CODEOWNERS owners (logins,
	// team slugs) of the changed files, from the configuration branch.
	OwnerReviewers []string `json:"-"`
	OwnerTeams     []string `json:"-"`
}

// CheckSummary is one entry of result.json's "checks".
type CheckSummary struct {
	Name       string       `json:"name"`
	Command    string       `json:"command"`
	Phase      verify.Phase `json:"phase"`
	Ran        bool         `json:"ran"`
	ExitCode   int          `json:"exit_code"`
	Passed     bool         `json:"passed"`
	DurationMS int64        `json:"duration_ms"`
}

// finish decides the outcome from what the phases recorded, commits when
// the outcome allows it, writes the report files and publishes.
func (r *run) finish(ctx context.Context) (*Result, error) {
	// Whatever ended the phases, nothing of the agent's may run while the
	// change is read.
	r.closeSandbox()
	if r.ended.infra == nil && r.ended.cancelled == "" {
		r.phase(PhaseScan)
	}
	if err := r.readChanges(); err != nil && r.ended.infra == nil {
		r.ended.infra = fmt.Errorf("%s: %w", PhaseScan, err)
	}
	if err := r.scan(); err != nil && r.ended.infra == nil {
		r.ended.infra = fmt.Errorf("%s: %w", PhaseScan, err)
	}
	if err := r.review(ctx); err != nil && r.ended.infra == nil {
		r.ended.infra = fmt.Errorf("%s: %w", PhaseReview, err)
	}
	if err := r.findMarkers(); err != nil && r.ended.infra == nil {
		r.ended.infra = fmt.Errorf("%s: %w", PhaseScan, err)
	}
	res := r.result()
	if r.mayCommit(res.Outcome) {
		r.phase(PhaseCommit)
		if err := r.commit(ctx, res); err != nil {
			r.ended.infra = fmt.Errorf("%s: %w", PhaseCommit, err)
			res = r.result()
		}
	}
	if err := r.render(res); err != nil {
		return res, err
	}
	if ctx.Err() == nil {
		r.phase(PhasePublish)
	}
	rendered := res.Body
	url, err := r.job.Publisher.Publish(ctx, r.repo, res)
	res.URL = url
	if err == nil && res.Body != rendered {
		err = writeFile(filepath.Join(r.job.OutDir, FileBody), []byte(res.Body))
	}
	if err != nil {
		// The commit never left the clone: the result says "error" and
		// names no branch.
		r.ended.infra = fmt.Errorf("%s: %w", PhasePublish, err)
		res = r.result()
		if rerr := r.render(res); rerr != nil {
			return res, rerr
		}
	}
	r.phase(PhaseDone)
	return res, r.ended.infra
}

// result builds the Result from the facts so far; Branch and HeadCommit
// are filled in by commit.
func (r *run) result() *Result {
	outcome, reason := r.decide()
	res := &Result{
		Outcome:      outcome,
		Reason:       reason,
		BaseCommit:   r.repo.Base().String(),
		FilesChanged: r.shownPaths(),
		Checks:       []CheckSummary{},
		Steps:        r.model.res.Steps,
		Usage:        r.model.res.Usage,
		Changes:      r.fin.changes,
		Secrets:      r.fin.findings,
		Findings:     r.allFindings(),
		Draft:        r.clone.cfg.Draft,
		Reviewers:    r.clone.cfg.Reviewers,
		Approval:     r.clone.cfg.IndependentApproval(),
		Summary:      r.model.res.Summary,
		Interrupted:  r.interrupted(),
		Merge:        r.merge.result(),

		PatchwrightVersion: r.e.Version,
	}
	res.OwnerReviewers, res.OwnerTeams = r.clone.codeOwners.Reviewers(r.changedPaths())
	if file, ok := provider.ReplayedFrom(r.e.Provider); ok {
		res.ReplayedFrom = file
	}
	if usd, ok := r.model.res.Cost(r.e.cost); ok {
		usd += r.reviewUSD()
		res.CostUSD = &usd
	}
	if r.gated() {
		// A risk the review found is for people to look at first,
		// whatever `draft:` says.
		res.Draft = config.DraftAlways
	}
	for _, c := range append(append([]verify.CheckResult(nil), r.baseline...), r.fin.checks...) {
		res.Checks = append(res.Checks, CheckSummary{
			Name: c.Name, Command: c.Command, Phase: c.Phase, Ran: c.Ran,
			ExitCode: c.ExitCode, Passed: c.Passed, DurationMS: c.Duration.Milliseconds(),
		})
	}
	return res
}

// decide applies docs/design.md §4.5, secrets and blocking findings included.
func (r *run) decide() (verify.Outcome, string) {
	in := verify.OutcomeInput{FilesChanged: len(r.fin.changes), Baseline: r.baseline, Final: r.fin.checks}
	switch {
	case r.ended.infra != nil:
		in.InfraError = scrubPaths(r.ended.infra, r.clone.tmp).Error()
	case r.ended.cancelled != "":
		in.StopReason = "the run was cancelled during the " + string(r.ended.cancelled) + " phase"
	case r.fin.tooLarge != "":
		in.StopReason = ReasonChangeTooLarge + ": " + r.fin.tooLarge
	case r.ended.wedged != "":
		in.StopReason = ReasonSandboxWedged + ": " + r.ended.wedged
	case r.ended.diskBound != "":
		in.StopReason = ReasonDiskBound + ": " + r.ended.diskBound
	case r.interrupted() && r.model.interruptWhy != "":
		in.StopReason = string(agent.Interrupted) + ": " + r.model.interruptWhy
	case r.interrupted():
		in.StopReason = string(agent.Interrupted) + ": " + InterruptedDetail
	case r.model.ran && r.model.res.Stop == agent.BudgetExceeded:
		in.StopReason = string(agent.BudgetExceeded) + ": " + r.model.res.Detail
	case r.model.ran && r.model.res.Stop != agent.Finished:
		in.StopReason = r.model.res.Detail
	}
	if len(r.fin.findings) > 0 {
		in.Secret = secrets.Describe(r.fin.findings...)
	}
	for _, f := range findings.Blocking(r.fin.evidence) {
		switch {
		case f.Kind != findings.HarnessChanged:
			in.Blocking = append(in.Blocking, f.Detail)
		case !slices.Contains(in.Harness, f.Path):
			in.Harness = append(in.Harness, f.Path)
		}
	}
	in.NotFetched = r.notFetched()
	o, reason := verify.Decide(in)
	if n := r.job.Foreign.Count(); o == verify.Verified && n > 0 {
		// The checks cover the tree, not whose work it is: Patchwright
		// vouches for its own change only.
		o = verify.Unverified
		reason = fmt.Sprintf("every check passed, but the branch holds %d commit%s Patchwright did not make, which it did not write or review", n, map[bool]string{true: "", false: "s"}[n == 1])
	}
	return r.merge.decide(o, reason)
}

// allFindings are result.json's findings: those on the change and the
// secrets the scan found (named by rule and place, never by value).
func (r *run) allFindings() []findings.Finding {
	out := append([]findings.Finding{}, r.fin.evidence...)
	for _, f := range r.fin.findings {
		detail := fmt.Sprintf("What looks like a secret (rule %s) is in the change, so nothing was committed.", f.RuleID)
		if f.Line == 0 {
			detail = fmt.Sprintf("A file or directory name in the change looks like a secret (rule %s), so nothing was committed.", f.RuleID)
		}
		out = append(out, findings.Finding{Kind: "secret", Path: f.File, Line: f.Line, Detail: detail})
	}
	return out
}

// scan looks for secrets the change adds, in its paths (file and
// directory names) as in its bytes; each match is named by its path with
// the match withheld, so that no report prints it. A file at a
// secret-bearing path (.env, *.pem, id_rsa, …) counts as one whatever its
// content: the tools refuse those paths, so only a command could have
// written it.
func (r *run) scan() error {
	// The findings on the change name its paths too, and are printed.
	for i := range r.fin.evidence {
		f := &r.fin.evidence[i]
		f.Path = r.shownPath(f.Path)
		detail, err := withholdText(r.scanner, f.Detail)
		if err != nil {
			return err
		}
		f.Detail = detail
	}
	scanner := r.scanner
	for _, c := range r.fin.changes {
		if c.Kind == gitrepo.Deleted {
			continue // its name and bytes are the base's
		}
		shown, inPath, err := scanner.ScanPath(context.Background(), c.Path)
		if err != nil {
			return err
		}
		r.fin.findings = append(r.fin.findings, inPath...)
		if sandbox.IsSecretPath(c.Path) {
			r.fin.findings = append(r.fin.findings, secrets.Finding{File: shown, Line: 1, RuleID: "secret-path", Description: "a file at a path reserved for secrets"})
			continue
		}
		found, err := r.scanChange(scanner, shown, c)
		if err != nil {
			return err
		}
		r.fin.findings = append(r.fin.findings, found...)
	}
	return nil
}

// scanChange scans the bytes the commit will hold (a link's target for a
// link, binary files too: a NUL byte must not hide a key), streamed in
// windows from the blob Changes wrote as it read the file, against the
// base's version, streamed likewise. A link's target is all new: the base
// may hold a directory there.
func (r *run) scanChange(scanner *secrets.Scanner, shown string, c gitrepo.Change) ([]secrets.Finding, error) {
	after, err := r.repo.Open(c)
	if err != nil {
		return nil, err
	}
	defer after.Close()
	var before io.Reader
	if !c.Symlink {
		base, err := r.repo.BaseReader(c.Path)
		if err != nil {
			return nil, err
		}
		if base != nil {
			defer base.Close()
			before = base
		}
	}
	return scanner.ScanChangeStream(context.Background(), shown, before, after)
}

// mayCommit: a change with no secret whose run ended normally, or that a
// budget stopped when CommitStopped is set. An infrastructure failure or
// a cancel commits nothing.
func (r *run) mayCommit(o verify.Outcome) bool {
	if len(r.fin.changes) == 0 || len(r.fin.findings) > 0 || len(r.merge.left) > 0 {
		return false
	}
	switch o {
	case verify.Verified, verify.Unverified, verify.Failed:
		return true
	case verify.Stopped:
		// A cost cap's partial work is pushed (a draft: it is not
		// verified), so what the money bought is not lost.
		// So is the work of a run a worker's shutdown interrupted.
		budget := r.model.ran && r.model.res.Stop == agent.BudgetExceeded
		return (r.e.CommitStopped || budget || r.interrupted()) && r.ended.cancelled == ""
	}
	return false
}

func (r *run) commit(ctx context.Context, res *Result) error {
	target, err := r.job.Publisher.Target(ctx, r.repo, r.job)
	if err != nil {
		return fmt.Errorf("choose branch: %w", err)
	}
	hash, err := r.repo.Commit(r.fin.changes, gitrepo.CommitOptions{
		Branch:  target.Branch,
		Message: commitMessage(r.job.Issue, res, target.Trailers),
		Author:  cmp.Or(r.job.Author, DefaultAuthor),
		Time:    r.e.now(),
	})
	if err != nil {
		return err
	}
	res.Branch, res.HeadCommit = target.Branch, hash.String()
	return nil
}

// commitMessage names the issue in the subject and the outcome in the
// body.
func commitMessage(issue agent.Issue, res *Result, trailers []string) string {
	title := strings.Join(strings.Fields(issue.Title), " ")
	if title == "" {
		title = "Change by Patchwright"
	}
	if utf8.RuneCountInString(title) > 72 {
		title = string([]rune(title)[:71]) + "…"
	}
	var b strings.Builder
	b.WriteString(title)
	b.WriteString("\n\n")
	if issue.Number > 0 {
		fmt.Fprintf(&b, "For issue #%d. ", issue.Number)
	}
	fmt.Fprintf(&b, "Patchwright's outcome: %s: %s\n", res.Outcome, res.Reason)
	if len(trailers) > 0 {
		b.WriteString("\n" + strings.Join(trailers, "\n") + "\n")
	}
	return b.String()
}

// render builds the report's facts once, renders the body and writes
// pr.md and result.json. pr.md is the body the publisher posts.
func (r *run) render(res *Result) error {
	in, err := r.reportInput(res)
	if err != nil {
		return err
	}
	if res.Body, err = report.PRBody(in); err != nil {
		return err
	}
	res.Report = in
	res.NotVerified = report.NotVerified(in)
	if res.NotVerified == nil {
		res.NotVerified = []string{}
	}
	if res.FilesChanged == nil {
		res.FilesChanged = []string{}
	}
	if res.Findings == nil {
		res.Findings = []findings.Finding{}
	}
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	if err := writeFile(filepath.Join(r.job.OutDir, FileResult), append(data, '\n')); err != nil {
		return err
	}
	return writeFile(filepath.Join(r.job.OutDir, FileBody), []byte(res.Body))
}

// reportInput gathers what the report may state: the ledger's facts, the
// outcome, git's line counts, the cost and the attempt history.
func (r *run) reportInput(res *Result) (report.Input, error) {
	in, err := report.FromLedger(ledger.Log{Records: r.ledger.Records()})
	if err != nil {
		return report.Input{}, err
	}
	in.RunID, in.Attempt, in.Issue, in.LogURL = r.job.ID, max(r.job.Attempt.Number, 1), r.job.Issue.Number, r.job.LogURL
	in.Outcome, in.Reason = res.Outcome, res.Reason
	in.Missing = append([]string(nil), r.clone.missing...)
	in.NotCommitted, in.Secrets = r.notCommitted(res)
	for _, f := range r.fin.evidence {
		in.Findings = append(in.Findings, r.findingLine(f))
	}
	in.Coverage = r.coverage()
	in.Unbounded = r.clone.unboundWhy
	in.Dependencies = r.fin.deps
	in.DetectedSetup = r.first.detectedRan
	in.Foreign, in.Template = r.job.Foreign, r.clone.template
	var dropped *ledger.EgressRefusalsDropped
	if in.Refused, dropped = r.box.refused.list(); dropped != nil {
		in.RefusedDropped = droppedSummary(*dropped)
	}
	in.SetupSecretFiles = r.first.secretFiles
	in.GoModule = r.clone.goModule
	in.Policy, in.PolicyTightened = r.clone.applied.Policy, r.clone.applied.Tightened
	if in.Policy != "" {
		in.PolicyModels = r.job.Policy.Models // checked before the clone (checkModels)
	}
	in.PulledImages = r.pulledImages()
	if r.e.ModelSource != "" {
		in.ModelSource, in.Model = r.e.ModelSource, r.e.Provider.Model()
	}
	in.ReplayedFrom = res.ReplayedFrom
	in.Duration = r.e.now().Sub(r.start)
	for _, c := range r.fin.changes {
		in.Files = append(in.Files, report.FileStat{Path: r.shownPath(c.Path), Added: c.Added, Deleted: c.Removed, Binary: c.Binary})
	}
	in.CostUSD = res.CostUSD
	if err := withholdSecrets(r.scanner, &in); err != nil {
		return report.Input{}, err
	}
	if r.job.Attempt.Number > 0 {
		this := r.job.Attempt
		this.Outcome, this.Reason = res.Outcome, res.Reason
		in.Attempts = append(append([]report.Attempt(nil), r.job.History...), this)
	}
	return in, nil
}

// coverage says, for a repository of several projects, which checks
// cover the change and which paths no check covers (as they may be
// printed); nil when the question does not arise.
func (r *run) coverage() *verify.Coverage {
	if len(r.clone.detection.Projects) < 2 || len(r.fin.changes) == 0 || len(r.clone.cfg.Verify) > 0 {
		return nil
	}
	cov := r.clone.detection.Cover(r.changedPaths())
	for i, p := range cov.Uncovered {
		cov.Uncovered[i] = r.shownPath(p)
	}
	cov.ByPath = nil
	return &cov
}

// findingLine is one finding as the report states it, its path as it may
// be printed and its detail with any secret withheld; report words it.
func (r *run) findingLine(f findings.Finding) report.Finding {
	detail, err := withholdText(r.scanner, f.Detail)
	if err != nil {
		detail = secrets.Note()
	}
	path := f.Path
	if path != "" {
		path = r.shownPath(path)
	}
	return report.Finding{Kind: f.Kind, Path: path, Line: f.Line, Detail: detail}
}

// notCommitted says why a change that exists was not committed, and for
// a secret where the scan found it.
func (r *run) notCommitted(res *Result) (report.NotCommitted, []report.SecretPlace) {
	if len(r.fin.changes) == 0 || res.HeadCommit != "" {
		return "", nil
	}
	switch {
	case len(r.fin.findings) > 0:
		places := make([]report.SecretPlace, len(r.fin.findings))
		for i, f := range r.fin.findings {
			places[i] = report.SecretPlace{Rule: f.RuleID, Path: r.shownPath(f.File), Line: f.Line}
		}
		return report.NotCommittedSecret, places
	case res.Outcome == verify.Stopped:
		return report.NotCommittedStopped, nil
	case res.Outcome == verify.Error:
		return report.NotCommittedError, nil
	}
	return "", nil
}

func writeFile(path string, data []byte) error {
	if err := os.WriteFile(path, data, fs.FileMode(0o644)); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}

// interrupted: the model loop was stopped by a worker's shutdown
// (agent.WithInterrupt), not by a limit of the run.
func (r *run) interrupted() bool {
	return r.model.ran && r.model.res.Stop == agent.Interrupted
}

// InterruptedDetail is the reason of a run a worker's shutdown interrupted
// (after "interrupted: "), in the body and the status comment.
const InterruptedDetail = "a worker shutdown stopped the model before it finished (a command or model answer still running was cut short), to push its work so far as a draft. The final checks were skipped to leave time to push, so nothing verified this change. Comment `/agent retry` to continue"
