package eval

import (
	"context"

	"github.com/patchwright/patchwright/agent/ledger"
)

// Runner runs the pipeline of `patchwright run` once. It is the seam
// between the benchmark and the product: everything else in this package
// (validation, judging, scoring, output) is tested with a fake Runner, and
// package eval/pipelinerun adapts the real pipeline.
type Runner interface {
	Run(ctx context.Context, r RunRequest) (RunResult, error)
}

// RunRequest is one run of one task.
type RunRequest struct {
	Task *Task
	// Run counts from 1.
	Run int
	// Repo is a bare repository made for this run alone: its one branch,
	// main, is the task's base commit, and it holds no later history. The
	// runner clones it and pushes its result branch to it.
	Repo string
	// Title and Body are the issue.
	Title, Body string
	// Image overrides the repository's image when set (--image, else
	// task.yml's image). The default image is the runner's own, the
	// operator's (Options.DefaultImage is the same value).
	Image string
	// MaxSteps caps the model's turns when positive.
	MaxSteps int
	// OutDir receives pr.md, result.json and ledger.jsonl.
	OutDir string
	// CacheVolume names the sandbox cache volume for the task's
	// repository; empty for none.
	CacheVolume string
	// CheckTree is the leak check. The runner calls it with the sandbox's
	// work tree after setup and before the model starts, and stops the run
	// when it returns an error: the hidden tests reached the sandbox.
	CheckTree func(dir string) error
}

// RunResult is what a run produced.
type RunResult struct {
	// Outcome and Reason are result.json's.
	Outcome string
	Reason  string
	// HeadCommit is the commit in RunRequest.Repo that holds the change;
	// empty when nothing was committed.
	HeadCommit string
	Steps      int
	Usage      ledger.Usage
}
