// Package pipeline is docs/design.md §1 steps 2-9 for one job, shared by
// `patchwright run` and the GitHub worker: clone, repository
// configuration, sandbox and setup, baseline, model loop, final
// verification, secret scan, commit, report and publish. Only where the
// result is published differs (a Publisher).
package pipeline

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"go.opentelemetry.io/otel/trace"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/config"
	"github.com/patchwright/patchwright/agent/provider"
	"github.com/patchwright/patchwright/agent/secrets"
	"github.com/patchwright/patchwright/jobs/gitrepo"
	"github.com/patchwright/patchwright/jobs/runstore"
	"github.com/patchwright/patchwright/report"
	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/verify"
)

// Defaults of Executor.
const (
	// DefaultImage is the sandbox image when neither the operator, the
	// job nor .github/agent.yml names one: the production image built
	// from deploy/sandbox/Dockerfile
	// (`docker build -t patchwright-sandbox:bookworm deploy/sandbox`).
	DefaultImage = "patchwright-sandbox:bookworm"
	// DefaultSetupTimeout bounds each setup command.
	DefaultSetupTimeout = 10 * time.Minute
	// DefaultSandboxUID and DefaultSandboxGID own the work tree so that
	// commands in the sandbox (sandbox/docker.DefaultUser) can change it.
	DefaultSandboxUID = 1000
	DefaultSandboxGID = 1000
)

// DefaultAuthor signs the commits when Executor.Author is empty.
var DefaultAuthor = gitrepo.Signature{Name: "Patchwright", Email: "patchwright@users.noreply.github.com"}

// Output files a run writes into Job.OutDir (docs/design.md §4.1); runstore owns
// their names, since it copies them for the run pages.
const (
	FileLedger = runstore.FileLedger
	FileResult = runstore.FileResult
	FileBody   = runstore.FileBody
)

// ErrConfig marks a failure the user or the repository's maintainer must
// fix (a malformed .github/agent.yml, a sandbox image that does not
// exist), as opposed to an infrastructure failure. `patchwright run` exits
// 1 for it; the GitHub worker reports it on the issue and does not retry.
var ErrConfig = errors.New("configuration error")

// configError is an error the user must fix; it matches ErrConfig without
// adding words to its message.
type configError struct{ err error }

func (e configError) Error() string        { return e.err.Error() }
func (e configError) Unwrap() error        { return e.err }
func (e configError) Is(target error) bool { return target == ErrConfig }

// ErrPolicy marks a job the operator's policy refuses before it starts
// (a model outside its models:): the operator, not the repository, can
// change that. It matches ErrConfig too, so `patchwright run` exits 1.
var ErrPolicy = errors.New("refused by the operator's policy")

type policyError struct{ err error }

func (e policyError) Error() string        { return e.err.Error() }
func (e policyError) Unwrap() error        { return e.err }
func (e policyError) Is(target error) bool { return target == ErrPolicy || target == ErrConfig }

// Job is one attempt at one issue, as the pipeline sees it. Nothing in it
// says where the result goes: that is the Publisher's business.
type Job struct {
	// ID names the run: the sandbox container's label, the marker in the
	// body and the temporary directory. Letters, digits, '.', '_' and '-'
	// only. Required.
	ID string
	// RepoURL is what to clone: a local path or an https URL. Required.
	RepoURL string
	// Auth authenticates the clone and the push; nil for none.
	Auth transport.AuthMethod
	// Branch is the base branch; empty means the remote's HEAD.
	Branch string
	// ConfigBranch is the branch whose commit holds the trusted
	// .github/agent.yml (the default branch) when Branch is another one (a
	// retry clones the agent branch). Empty: Branch's commit.
	ConfigBranch string
	// Issue is the task. Number 0 means there is no issue to close.
	Issue agent.Issue
	// OutDir receives ledger.jsonl, result.json and pr.md; it is created
	// if missing. Required.
	OutDir string
	// LogURL links the full run log from the body; empty for none.
	LogURL string
	// Publisher names the branch and sends the commit. Required.
	Publisher Publisher
	// Author signs the commit; default DefaultAuthor.
	Author gitrepo.Signature
	// Progress, when set, is called at each phase and each tool call.
	// It must return quickly.
	Progress func(Progress)
	// History holds the earlier attempts at the same issue, oldest first;
	// this run is added to it as Attempt, with its outcome, and the body
	// renders it. Zero for a body without a history (`patchwright run`).
	History []report.Attempt
	// Foreign are the commits on Branch that Patchwright did not make
	// (someone pushed since its last push): the body lists them, and a
	// change whose checks all pass is "unverified", not "verified".
	Foreign report.Foreign
	// Attempt describes this run for the history (number, start, who and
	// what triggered it); its Number is 0 when the body has no history.
	Attempt report.Attempt
	// EnqueuedAt is when the trigger was enqueued (the task's
	// tasks.HeaderEnqueuedAt); Timings then start with PhaseQueued and
	// measure the time to the published change. Zero: unknown.
	EnqueuedAt time.Time
	// Admit, when set, is asked once the trusted configuration is read,
	// before any sandbox starts: an error ends the job with it, nothing
	// run or pushed (a CI fix past ci_fix_attempts).
	Admit func(config.Config) error
	// Notes, when set, is polled between the model's steps for notes
	// people sent to the running job (agent.Config.Notes).
	Notes func(ctx context.Context) ([]agent.Note, error)
	// Advisories, when set, looks the change's new and re-versioned
	// dependencies up in the GitHub advisory database before publishing
	// (review.go); nil: they are not looked up.
	Advisories AdvisoryLookup
	// PreviousPlan is, for Executor.Plan, the plan the run revises (a
	// `/agent retry` while it waited for approval); "" for a first plan.
	// Execute ignores it.
	PreviousPlan string
	// Policy is the operator's policy for this repository
	// (config.PolicyFile.For) and PolicyName its name: config.Apply
	// tightens the repository's file with it, and the body's
	// Configuration line names it. Zero: no policy, no line.
	Policy     config.Policy
	PolicyName string
	// OrgConfig is the organisation's default .github/agent.yml (from
	// its `.github` repository's default branch), which the repository's
	// own file is read over (config.ParseLayered); nil for none.
	OrgConfig []byte
	// Merge, when set, makes the run the resolution of a merge conflict
	// (merge.go): the clone (Branch, the pull request's head) becomes
	// the merge of Merge.Theirs into it before anything reads it. Nil:
	// the clone is the branch as it is.
	Merge *MergeJob
	// Span is the job's span (the worker's, jobs/githubjob): each phase
	// becomes a child span of it, model turns and tool calls its events
	// (progress.go). It is passed here rather than in the context so
	// that the libraries' own instrumentation (the Docker client's HTTP
	// calls) does not fill the trace. Nil, or not recording: no spans.
	Span trace.Span
}

var jobIDRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,100}$`)

func (j Job) validate() error {
	switch {
	case !jobIDRE.MatchString(j.ID):
		return fmt.Errorf("job ID %q: want 1-100 letters, digits, '.', '_' or '-'", j.ID)
	case j.RepoURL == "":
		return errors.New("job has no repository")
	case j.OutDir == "":
		return errors.New("job has no output directory")
	case j.Publisher == nil:
		return errors.New("job has no publisher")
	}
	return nil
}

// Progress is one update for a person watching a run.
type Progress struct {
	Phase Phase
	// Step is the model turn in progress; 0 before the loop.
	Step int
	// Tool is the last tool the model called.
	Tool         string
	InputTokens  int64
	OutputTokens int64
	// Elapsed is the time since the run started.
	Elapsed time.Duration
	// Baseline holds the checks' results on the untouched code once the
	// baseline has run; nil before.
	Baseline []verify.CheckResult
}

// Phase is a step of the pipeline, as Progress reports it.
type Phase string

// Phases reported in Progress, in order.
const (
	PhaseClone    Phase = "clone"
	PhaseSandbox  Phase = "sandbox"
	PhaseSetup    Phase = "setup"
	PhaseBaseline Phase = "baseline"
	PhaseAgent    Phase = "agent"
	PhaseFinal    Phase = "final"
	PhaseScan     Phase = "secret scan"
	PhaseCommit   Phase = "commit"
	PhasePublish  Phase = "publish"
	PhaseDone     Phase = "done"
)

// ReasonChangeTooLarge starts the reason of a run stopped because the
// work tree passed one of gitrepo.Limits' bounds: a change too large to
// hold, a tree too deep or with too many files. It is the change's
// failure, never retried as the worker's.
const ReasonChangeTooLarge = "change_too_large"

// ReasonSandboxWedged starts the reason of a run stopped because a
// command's processes could not be stopped and its sandbox was killed
// (sandbox.ErrWedged); like ReasonChangeTooLarge it is never retried.
const ReasonSandboxWedged = "sandbox_wedged"

// Executor runs the pipeline of docs/design.md §1 steps 2-9 for one job: clone,
// repository config, sandbox and setup, baseline, model loop, final
// verification, secret scan, commit, report, publish. `patchwright run`
// and the GitHub worker share it; only the Job's Publisher differs. It is
// configuration shared by every job and is not changed by Execute, so one
// Executor serves concurrent jobs. Zero optional fields take the defaults
// named on each.
type Executor struct {
	// Sandboxes creates the job's container. Required.
	Sandboxes sandbox.Runner
	// Provider is the model. Required.
	Provider provider.Provider
	// SummaryProvider, when set, summarises the observations compaction
	// replaces (agent.Config.SummaryProvider); nil: placeholders only.
	SummaryProvider provider.Provider
	// ReviewProvider, when set, is the model of the review before
	// publishing (review.go), which a repository's `review: off` skips;
	// nil: no review runs (a replayed run has no model to ask).
	ReviewProvider provider.Provider
	// ReviewMaxCostUSD is the review's own budget; default
	// DefaultReviewMaxCostUSD.
	ReviewMaxCostUSD float64
	// ModelSource, when set, says whose model and keys the providers
	// above are ("installation 12345678", bring your own key): the body
	// names the model and says so. "": the operator's model, no line.
	ModelSource string
	// ModelKeys are the API keys the providers above send, by a name that
	// says whose (installmodel.Entry.Keys): every output is searched for
	// them like the setup-only secrets. Nil: the operator's keys, which
	// never reach a run's outputs but through the scanner's rules.
	ModelKeys map[string]string
	// AdvisoryCache, when set, keeps the advisory database's answers
	// across the executor's runs; nil asks every time.
	AdvisoryCache *AdvisoryCache
	// Images, when set, resolves the sandbox's and the services' images
	// once before anything starts (images.go): a missing image, a
	// registry the operator does not allow or a failed pull is then a
	// configuration error. Nil: the names are used as they are.
	Images ImageResolver
	// Image, when set, overrides the repository's `image:` (the --image
	// flag).
	Image string
	// DefaultImage is used when neither Image nor the repository names
	// one; default DefaultImage.
	DefaultImage string
	// MaxSteps, when positive, overrides the repository's
	// limits.max_steps (the --max-steps flag).
	MaxSteps int
	// Prices is the price table every cost estimate of the run uses (the
	// body, the comments, result.json, the cost cap), the same one
	// /metrics uses; nil is the built-in table.
	Prices provider.Prices
	// MaxRunCostUSD is the operator's cap on one run's estimated model
	// cost; the repository's limits.max_cost_usd may lower it. Zero: no
	// cap unless the repository sets one.
	MaxRunCostUSD float64
	// CommitStopped commits the change of a run that a budget, a loop
	// detector or a timeout stopped. Default false: a stopped run's change
	// is reported, not committed. A cancelled run is never committed.
	CommitStopped bool
	// MaxChangeBytes bounds the sum of a change's file sizes; a larger
	// change stops the run (ReasonChangeTooLarge). Default
	// gitrepo.DefaultMaxChangeBytes.
	MaxChangeBytes int64
	// WorkDir holds each job's temporary clone; default os.TempDir().
	WorkDir string
	// BoundWorkspace, when set, makes dir (empty) a filesystem of bounded
	// size before the clone goes into it; dir then holds the work tree
	// and the checks' copies of it, so neither what commands write nor a
	// copy of it (a sparse file expanded) can fill the host's disk. The
	// function returned undoes it. Nil: those trees are plain directories
	// of WorkDir.
	BoundWorkspace func(ctx context.Context, dir string) (unbound func() error, err error)
	// MinFreeBytes is the free disk WorkDir must have for a job to start;
	// default DefaultMinFreeBytes. A job on a fuller disk fails with
	// ErrDiskFull before it clones anything.
	MinFreeBytes int64
	// SandboxLimits bound the container; zero fields take
	// sandbox.DefaultLimits.
	SandboxLimits sandbox.Limits
	// SandboxRuntime is the OCI runtime of every container, for example
	// "runsc" for gVisor; empty means the engine's default.
	SandboxRuntime string
	// CacheVolume, when set, names the sandbox's cache volume for a
	// repository URL (see sandbox.Spec.CacheVolume); RepoCacheVolume gives
	// each repository its own. Nil: caches start empty in every run.
	CacheVolume func(repoURL string) string
	// EgressAllow are host names every repository's setup network reaches
	// besides Registries and its own network.allow (the operator's
	// PATCHWRIGHT_EGRESS_ALLOW); egress.Allowlist entries.
	EgressAllow []string
	// AllowOpenNetwork lets a repository's `network: open` give setup the
	// whole internet. Default false: the allowlist applies whatever the
	// repository asks.
	AllowOpenNetwork bool
	// GoProxyAnyOrigin lets dependency setup on a changed tree fetch a
	// new Go module through a module proxy whatever its host (the
	// operator's PATCHWRIGHT_GOPROXY_ANY_ORIGIN). Default false: such a
	// module is fetched only when the setup network's allowlist names
	// its host (goproxy.go).
	GoProxyAnyOrigin bool
	// SetupSecrets are the operator's setup-only secrets by repository
	// (PATCHWRIGHT_SETUP_SECRETS_FILE): environment variables of the setup
	// container only, never of the agent's or the checks', and searched
	// for in every output the run records. Nil: none.
	SetupSecrets secrets.SetupSecrets
	// SandboxUID and SandboxGID must match the sandbox's command user;
	// defaults DefaultSandboxUID and DefaultSandboxGID.
	SandboxUID, SandboxGID int
	// RemoveCache, when set, removes a job's own cache volume (made by
	// dependency setup after a change, deps.go) when the job ends; the
	// Docker engine's RemoveCache. Nil: it is left to the engine's
	// pruning of old cache volumes.
	RemoveCache func(ctx context.Context, volume string) error
	// Window is the model's context window and output limit, which
	// compaction keeps each request within. Zero fields take the model's
	// entry in provider.DefaultWindows, then the agent's defaults.
	Window provider.Window
	// CheckTimeout bounds each verification check; default
	// verify.DefaultCheckTimeout.
	CheckTimeout time.Duration
	// Logger receives the agent's log lines; nil discards them.
	Logger *slog.Logger
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Version names the Patchwright build, written to result.json as
	// patchwright_version; empty leaves the key out.
	Version string
	// Timings, when set, receives each run's phase timings at its end
	// (the worker's /metrics histograms); it must return quickly. Nil:
	// they are only written to FilePhases.
	Timings func(Timings)
}

// Execute runs one job and writes its report files into job.OutDir. It
// returns the Result whenever the run got as far as reading the
// repository's configuration, even with an error. The error wraps
// ErrConfig for a problem the user must fix (no files are written
// then); any other error is an infrastructure failure, and the Result's
// outcome is then "error". A cancelled context ends the run as
// "stopped" with no error: the container is removed and nothing is
// committed. With job.Span set, each phase becomes a child span of it.
func (e *Executor) Execute(ctx context.Context, job Job) (*Result, error) {
	if err := e.check(job); err != nil {
		return nil, err
	}
	if err := e.checkDisk(); err != nil {
		return nil, err
	}
	scanner, err := secrets.Default()
	if err != nil {
		return nil, err
	}
	var setupSecrets map[string]string
	if e.SetupSecrets != nil {
		setupSecrets = e.SetupSecrets.For(job.RepoURL)
		scanner = scanner.WithValues(setupSecrets)
	}
	scanner = scanner.WithKeys(e.ModelKeys)
	r := &run{e: e, job: job, start: e.now(), scanner: scanner, first: firstSetup{setupSecrets: setupSecrets}}
	defer r.cleanup()
	r.traceUnder(job.Span)
	defer r.endTrace()
	if err := r.prepare(ctx); err != nil {
		return nil, scrubPaths(err, r.clone.tmp)
	}
	if err := os.MkdirAll(job.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("create output directory: %w", err)
	}
	if err := r.openLedger(filepath.Join(job.OutDir, FileLedger)); err != nil {
		return nil, err
	}
	defer r.closeLedger()
	r.work(ctx)
	res, err := r.finish(ctx)
	if terr := r.recordTimings(res != nil && res.URL != ""); terr != nil && err == nil {
		err = terr
	}
	return res, scrubPaths(err, r.clone.tmp)
}

func (e *Executor) check(job Job) error {
	switch {
	case e.Sandboxes == nil:
		return errors.New("executor: no sandbox runner")
	case e.Provider == nil:
		return errors.New("executor: no model provider")
	}
	if err := job.validate(); err != nil {
		return fmt.Errorf("executor: %w", err)
	}
	return nil
}

// checkModels refuses, before anything is cloned, a job whose policy
// does not allow one of the models the executor may call: its model and
// fallbacks, its summary and review models. A replay calls none.
func (e *Executor) checkModels(job Job) error {
	var models []string
	for _, p := range []provider.Provider{e.Provider, e.SummaryProvider, e.ReviewProvider} {
		if _, replayed := provider.ReplayedFrom(p); p != nil && !replayed {
			models = append(models, provider.Models(p)...)
		}
	}
	if m := job.Policy.DisallowedModel(models...); m != "" {
		return policyError{fmt.Errorf("the model %s is not allowed by the operator's policy (%s), whose models are %s",
			m, job.PolicyName, strings.Join(job.Policy.Models, ", "))}
	}
	return nil
}

func (e *Executor) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

func (e *Executor) sandboxOwner() (int, int) {
	return cmp.Or(e.SandboxUID, DefaultSandboxUID), cmp.Or(e.SandboxGID, DefaultSandboxGID)
}

// Target is where a change is committed and pushed.
type Target struct {
	// Branch receives the commit, for example "agent/issue-41".
	Branch string
	// Expected is where the branch is on the remote now; zero means it
	// must not exist yet (see gitrepo.Repo.Push).
	Expected plumbing.Hash
	// Trailers are appended to the commit message, one per line, for
	// example "Co-authored-by: …".
	Trailers []string
}

// Publisher is the one part of the pipeline that differs between
// `patchwright run` (a new branch in the local repository) and the GitHub
// worker (a branch and a pull request on GitHub).
type Publisher interface {
	// Target is called before a change is committed and names where it
	// goes.
	Target(ctx context.Context, repo *gitrepo.Repo, job Job) (Target, error)
	// Publish is called once at the end of every run that got a sandbox,
	// whatever its outcome, with the finished Result (res.HeadCommit is
	// empty when nothing was committed) and its body. It returns where the
	// change was published (a pull request's URL), "" for nowhere. When it
	// posts another body than res.Body (with a marker of its own, say), it
	// sets res.Body to what it posted, and pr.md is written again. An
	// error is an infrastructure failure.
	Publish(ctx context.Context, repo *gitrepo.Repo, res *Result) (url string, err error)
}

func (e *Executor) logger() *slog.Logger {
	if e.Logger != nil {
		return e.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// RepoCacheVolume names a repository's cache volume after a hash of its
// URL, so runs of one repository share warm caches and no repository reads
// another's.
func RepoCacheVolume(repoURL string) string {
	sum := sha256.Sum256([]byte(repoURL))
	return "patchwright-cache-" + hex.EncodeToString(sum[:8])
}

// cost estimates one model's usage from the executor's price table
// (agent.Config.Cost); a run's cost is agent.Result.Cost over it.
func (e *Executor) cost(model string, u provider.Usage) (float64, bool) {
	prices := e.Prices
	if prices == nil {
		prices = provider.DefaultPrices()
	}
	return prices.Cost(model, u)
}

// readsImages says whether the executor's model reads images, by its
// price table (agent.Config.ReadsImages).
func (e *Executor) readsImages() bool {
	prices := e.Prices
	if prices == nil {
		prices = provider.DefaultPrices()
	}
	return prices.ReadsImages(e.Provider.Model())
}
