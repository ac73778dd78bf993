// Package report writes what people read about a run: the pull-request
// body (docs/design.md §4.6), check-run outputs, the issue's status comment and
// the failure comment. Everything is rendered from embedded templates and
// from an Input holding recorded facts only: the ledger's events, the
// verification results, git's diff statistics and the outcome. The model's
// words appear only as its quoted summary, and a claim in it that no
// recorded command backs is listed as a claim.
package report

import (
	"errors"
	"fmt"
	"time"

	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/sandbox/egress"
	"github.com/patchwright/patchwright/verify"
)

// MaxBody is GitHub's limit on the characters of an issue or pull-request
// body or comment; rendered bodies stay under it.
const MaxBody = 65536

// MaxCheckRunSummary is GitHub's limit on a check run's output summary.
const MaxCheckRunSummary = 65535

// FileStat is one changed file as git counts it.
type FileStat struct {
	Path    string
	Added   int
	Deleted int
	// Binary files have no line counts.
	Binary bool
}

// Usage is the model's token count for the run.
type Usage = ledger.Usage

// Attempt is one earlier or current attempt on the same issue, for the
// body's attempt history.
// Its JSON form is the body's hidden history (see History).
type Attempt struct {
	Number      int            `json:"n"`
	Started     time.Time      `json:"started"`
	TriggeredBy string         `json:"by"`      // GitHub login, without "@"
	Trigger     string         `json:"trigger"` // for example "on the issue" or "/agent retry"
	Outcome     verify.Outcome `json:"outcome"`
	Reason      string         `json:"reason"`
}

// NotCommitted is why a change was not committed.
type NotCommitted string

// Reasons a change was not committed.
const (
	// NotCommittedSecret: the change adds what looks like a secret
	// (Input.Secrets says where).
	NotCommittedSecret NotCommitted = "secret"
	// NotCommittedStopped: the run was stopped before the model finished.
	NotCommittedStopped NotCommitted = "stopped"
	// NotCommittedError: the run failed before it could finish.
	NotCommittedError NotCommitted = "error"
)

// SecretPlace is where the secret scan found what looks like a secret.
type SecretPlace struct {
	Rule string
	Path string
	// Line is 0 when the secret is in the path itself.
	Line int
}

// Finding is a finding on the change (verify/findings, docs/design.md §4.5) as
// the report states it. Detail is another package's sentence and is
// untrusted as a whole: it quotes the change (paths, versions, test
// names), so it is escaped here, its backtick spans shown as code.
type Finding struct {
	Kind   string
	Path   string
	Line   int
	Detail string
}

// Input is every fact a report may state. Build it with FromLedger and
// add what the ledger does not hold (git's line counts, links, the
// outcome).
type Input struct {
	// RunID names the run in markers and links; Attempt counts from 1.
	RunID   string
	Attempt int
	// LogURL links the full run log; empty when there is none.
	LogURL string
	// OpenPullRequestURL is the pull request a retry that published
	// nothing left open as it was: the failure comment links it instead
	// of saying no pull request was opened.
	OpenPullRequestURL string
	// Merging: the run merged the moved base branch into the pull
	// request to resolve a conflict, so the failure comment's advice is
	// about that merge, not about the issue.
	Merging bool
	// Issue is the issue number the pull request closes; 0 for none.
	Issue int

	Outcome verify.Outcome
	Reason  string

	// Summary is the model's own description from finish: a claim.
	Summary string
	// StopDetail explains a stop that was not the model finishing.
	StopDetail string

	Files    []FileStat
	Baseline []verify.CheckResult
	Final    []verify.CheckResult
	NewTests []verify.NewTestResult
	// Missing lists checks that were not configured or detected, one
	// sentence each, as verify.Detection.Missing words them (only those:
	// every other fact below is typed, and report words it).
	Missing []string
	// NotCommitted says why a change that exists was not committed; ""
	// when it was committed or there is none.
	NotCommitted NotCommitted
	// Secrets are where the secret scan found what looks like a secret,
	// by rule and place, never by value.
	Secrets []SecretPlace
	// Findings are the findings on the change, for "Not verified".
	Findings []Finding
	// Coverage says, for a repository of several detected projects,
	// which checks cover the change; nil when that was not asked.
	Coverage *verify.Coverage
	// Unbounded says why the work tree had no size limit; "" when it had.
	Unbounded string
	// Dependencies are the runs of dependency setup on the changed tree,
	// in order: the model's (fetch_dependencies) and the application's
	// after the change. Nil when the change touched no manifest.
	Dependencies []DependencySetup
	// DetectedSetup are the commands of the first setup when the default
	// branch's configuration has no `setup:`: detection's download
	// command of each project whose manifest declares dependencies. Nil
	// when setup was configured or none ran.
	DetectedSetup []DetectedCommand
	// SetupSecretsWithheld names the setup-only secrets the first setup
	// ran without: the tree was a retry's agent branch, code a model
	// wrote. Nil when setup got them or the repository has none.
	SetupSecretsWithheld []string
	// SetupSecretFiles are the files the first setup left holding a
	// setup-only secret's value, which were removed before the agent's
	// phase. Nil when there were none.
	SetupSecretFiles []SecretFile
	// Refused are the connections the egress proxy refused to setup;
	// "Not verified" lists them when a check failed, as a likely cause.
	Refused []egress.Refusal
	// RefusedDropped says how many refusals past the run's bounds were
	// only counted ("and 203950 more refusals to 3 hosts, not recorded
	// one by one"); "" when none were.
	RefusedDropped string
	// Review is what the review before publishing recorded; its Ran is
	// false when it recorded nothing.
	Review Review
	// Fallbacks say where the run moved down its model list, one line
	// each ("step 3: openai:gpt-4.1 failed (…), continued on …").
	Fallbacks []string
	// Template is the repository's pull-request template; zero for none.
	Template Template
	// Foreign are commits on the branch that Patchwright did not make
	// (a retry builds on them); the Changes section lists them.
	Foreign Foreign
	// HeadCommit is the commit the publisher pushed: the body ends with
	// its marker (see PushedMarker). "" when nothing was pushed.
	HeadCommit string
	// DraftRefused: the pull request should be a draft, but the
	// repository has no drafts, so it is open for review and the body
	// opens with a note that says so.
	DraftRefused bool
	// Unsigned: the change was too large for GitHub's API, so the commit
	// was pushed with git, unsigned; the body opens with a note that says
	// so.
	Unsigned bool
	// GoModule maps go test's packages to directories; "" when not Go.
	GoModule string
	// ReplayedFrom is the transcript whose model turns the run replayed
	// (provider "replay:FILE"): no model was called, and the body opens
	// with a note that says so. "" for a model's run.
	ReplayedFrom string

	// Policy names the operator's policy that applied to the
	// configuration ("installation 7"); "" for none, and then the body
	// has no Configuration line. PolicyTightened says what it took back
	// from .github/agent.yml, one phrase each, values from the
	// repository in backtick spans (config.Applied).
	Policy          string
	PolicyTightened []string
	// PolicyModels are the policy's models: globs, which every model
	// of the run matched (a job outside them never starts); nil when the
	// policy sets none, and then the line says nothing of models.
	PolicyModels []string
	// PulledImages are the images the engine pulled for the run, with
	// the digest every container of the run used; nil when it pulled
	// none, and then the body says nothing of images.
	PulledImages []PulledImage
	// ModelSource says whose model and keys the run used when they are
	// not the operator's own ("installation 7", bring your own key), and
	// Model names that model; "" for the operator's, and no line.
	ModelSource, Model string

	Steps    int
	MaxSteps int
	Usage    Usage
	// CostUSD is the estimated model cost; nil renders "cost unknown".
	CostUSD  *float64
	Duration time.Duration

	// Attempts is the history, oldest first, including this attempt; the
	// body renders it, with the failed final checks hidden for the next
	// attempt (History). Empty: the body has no history.
	Attempts []Attempt
}

// FromLedger collects the recorded facts of one run: the model's summary,
// steps and tokens from run_stop, the stop reason, and every check and
// new-test event. A check recorded twice for one phase keeps the last.
func FromLedger(log ledger.Log) (Input, error) {
	var in Input
	for _, rec := range log.Records {
		p, err := rec.Payload()
		if errors.Is(err, ledger.ErrUnknownType) {
			continue
		}
		if err != nil {
			return Input{}, fmt.Errorf("build report input: %w", err)
		}
		switch e := p.(type) {
		case *ledger.RunStart:
			in.MaxSteps = e.Limits.MaxSteps
		case *ledger.RunStop:
			in.Summary = e.Summary
			in.Steps = e.Steps
			in.Usage = e.Usage
			if e.Reason != "finished" {
				in.StopDetail = e.Detail
			}
		case *ledger.CheckEvent:
			c, err := verify.CheckFrom(e)
			if err != nil {
				return Input{}, fmt.Errorf("build report input: event %d: %w", rec.Seq, err)
			}
			switch c.Phase {
			case verify.Baseline:
				in.Baseline = replaceCheck(in.Baseline, c)
			case verify.Final:
				in.Final = replaceCheck(in.Final, c)
			}
		case *ledger.NewTestEvent:
			t, err := verify.NewTestFrom(e)
			if err != nil {
				return Input{}, fmt.Errorf("build report input: event %d: %w", rec.Seq, err)
			}
			in.NewTests = append(in.NewTests, t)
		case *ledger.Review, *ledger.AdvisoryCheck:
			in.Review.add(e)
		case *ledger.ModelTurn:
			for _, f := range e.FellBack {
				in.Fallbacks = append(in.Fallbacks, fmt.Sprintf("step %d: %s", e.Step, f))
			}
		}
	}
	return in, nil
}

func replaceCheck(list []verify.CheckResult, c verify.CheckResult) []verify.CheckResult {
	for i := range list {
		if list[i].Name == c.Name {
			list[i] = c
			return list
		}
	}
	return append(list, c)
}

// PulledImage is an image pulled for a run (Input.PulledImages).
type PulledImage struct {
	// Service names the service; empty for the sandbox's image.
	Service string
	// Ref is the image as configured, Digest the registry's manifest
	// digest the run used.
	Ref    string
	Digest string
}
