package eval

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/sandbox"
)

// Options configure Evaluate. Zero optional fields take the defaults named
// on each.
type Options struct {
	// Model is "provider:model", as recorded in eval.json. Required.
	Model string
	// Runner runs the pipeline. Required.
	Runner Runner
	// Sandboxes runs the hidden and existing tests. Required.
	Sandboxes sandbox.Runner
	// SandboxLimits and SandboxRuntime shape those tests' sandboxes, as
	// the operator's settings shape the runs' (cmd/patchwright sets both
	// from the one setting); zero: sandbox.DefaultLimits, the engine's
	// runtime.
	SandboxLimits  sandbox.Limits
	SandboxRuntime string
	// Runs is how many times each task runs; default 1.
	Runs int
	// Concurrency is how many runs (and validations) go at once; default 1.
	Concurrency int
	// Out receives the run directories, Out/runs/<task>/<run>/; an
	// earlier Out/runs is removed first. Required.
	Out string
	// Images, when set, is asked whether each task's image exists; a task
	// whose image is missing is invalid, with that reason.
	Images ImageChecker
	// Image overrides every task's image (--image).
	Image string
	// DefaultImage is the operator's default, for tasks and repositories
	// that name none. Required.
	DefaultImage string
	// Cost prices a run's usage; known false gives cost_usd null. Nil:
	// every cost is unknown.
	Cost func(ledger.Usage) (usd float64, known bool)
	// CacheVolume names the sandbox cache volume of a task's repository.
	// Nil: DefaultCacheVolume.
	CacheVolume func(*Task) string
	// CheckTimeout bounds each hidden or existing test command; default
	// DefaultCheckTimeout.
	CheckTimeout time.Duration
	// Progress, when set, receives a line after each finished run.
	Progress io.Writer
	// WorkDir holds the temporary trees and clones; default os.TempDir().
	WorkDir string
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// ImageChecker reports whether the Docker engine has an image
// (sandbox/docker.Docker is one).
type ImageChecker interface {
	ImageExists(ctx context.Context, image string) (bool, error)
}

// DefaultCacheVolume names one cache volume per task repository, so runs
// of one task share warm caches and no repository reads another's. A
// remote repository is known by its URL; a local one by its base commit,
// since its path may be a temporary copy: the same task then finds its
// cache again in the next evaluation.
func DefaultCacheVolume(t *Task) string {
	key := t.Repo
	if !isURL(key) {
		key = t.Commit
	}
	sum := sha256.Sum256([]byte(key))
	return "patchwright-cache-eval-" + hex.EncodeToString(sum[:8])
}

// errInfra marks a failure of the machinery (no sandbox, no git), which
// ends the evaluation, as opposed to a task that is invalid.
type errInfra struct{ err error }

func (e errInfra) Error() string { return e.err.Error() }
func (e errInfra) Unwrap() error { return e.err }

// Evaluate validates every task, runs each valid one Runs times and judges
// each run with the hidden tests. It returns the report with Out's run
// directories written (WriteOutputs writes the rest). An error means the
// evaluation could not be carried out at all.
func Evaluate(ctx context.Context, tasks []*Task, o Options) (*Report, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	o.fill()
	// Run directories left by an earlier evaluation into the same Out
	// would mix with this one's (and a stale ledger would be read).
	if err := os.RemoveAll(filepath.Join(o.Out, "runs")); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp(o.WorkDir, "patchwright-eval-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	e := &evaluator{o: o, work: work, chk: checker{runner: o.Sandboxes, timeout: o.CheckTimeout,
		limits: o.SandboxLimits, runtime: o.SandboxRuntime}}
	rep := &Report{
		Model: o.Model, RunsPerTask: o.Runs, Tasks: len(tasks),
		Invalid: []Invalid{}, Results: []Result{},
		Notes: map[string][]string{}, Meta: map[string]TaskMeta{},
	}
	e.say("eval: validating %d task(s): hidden tests must fail on the base commit and pass with fix.patch", len(tasks))
	valid, err := e.validateAll(ctx, tasks, rep)
	if err != nil {
		return nil, err
	}
	e.say("eval: %d valid, %d invalid; %d run(s) to go, %d at a time", len(valid), len(rep.Invalid), len(valid)*o.Runs, o.Concurrency)
	results, refused, problems := e.runAll(ctx, valid)
	rep.Problems = problems
	for _, p := range valid {
		if reason, ok := refused[p.task.ID]; ok {
			rep.Invalid = append(rep.Invalid, Invalid{p.task.ID, "refused: " + reason})
			continue
		}
		rep.Meta[p.task.ID] = TaskMeta{p.task.Category, p.task.Language}
		if len(p.notes) > 0 {
			rep.Notes[p.task.ID] = p.notes
		}
		rep.Results = append(rep.Results, results[p.task.ID]...)
	}
	rep.Summary = summarize(rep.Results, rep.Meta)
	if ctx.Err() != nil {
		rep.Problems = append(rep.Problems, fmt.Sprintf("interrupted: %d of %d runs finished; the figures cover those only", len(rep.Results), len(valid)*o.Runs))
	}
	return rep, ctx.Err()
}

func (o Options) check() error {
	switch {
	case o.Model == "":
		return errors.New("eval: no model")
	case o.Runner == nil:
		return errors.New("eval: no runner")
	case o.Sandboxes == nil:
		return errors.New("eval: no sandbox runner")
	case o.Out == "":
		return errors.New("eval: no output directory")
	case o.DefaultImage == "":
		return errors.New("eval: no default image")
	case o.Runs < 0 || o.Concurrency < 0:
		return errors.New("eval: runs and concurrency must be positive")
	}
	return nil
}

func (o *Options) fill() {
	if o.Runs == 0 {
		o.Runs = 1
	}
	if o.Concurrency == 0 {
		o.Concurrency = 1
	}
	if o.CheckTimeout == 0 {
		o.CheckTimeout = DefaultCheckTimeout
	}
	if o.CacheVolume == nil {
		o.CacheVolume = DefaultCacheVolume
	}
	if o.Cost == nil {
		o.Cost = func(ledger.Usage) (float64, bool) { return 0, false }
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

type evaluator struct {
	o    Options
	work string
	chk  checker
}

// say writes a progress line, when there is a progress writer.
func (e *evaluator) say(format string, args ...any) {
	if e.o.Progress != nil {
		fmt.Fprintf(e.o.Progress, format+"\n", args...)
	}
}

// prepared is a task that passed validation, with what its runs need.
type prepared struct {
	task  *Task
	repo  string // the local repository runs are cloned from
	setup repoSetup
	image string
	cache string
	// baseOK says, per existing command, whether it passes on the base
	// commit without the hidden tests; only those can regress.
	baseOK []bool
	fp     fingerprint
	notes  []string
}

// validateAll validates the tasks, Concurrency at a time, and lists the
// invalid ones in rep in task order.
func (e *evaluator) validateAll(ctx context.Context, tasks []*Task, rep *Report) ([]*prepared, error) {
	preps := make([]*prepared, len(tasks))
	reasons := make([]string, len(tasks))
	errs := make([]error, len(tasks))
	parallel(len(tasks), e.o.Concurrency, func(i int) {
		preps[i], reasons[i], errs[i] = e.validate(ctx, tasks[i])
	})
	var valid []*prepared
	for i, t := range tasks {
		switch {
		case errs[i] != nil:
			return nil, fmt.Errorf("validate %s: %w", t.ID, errs[i])
		case reasons[i] != "":
			rep.Invalid = append(rep.Invalid, Invalid{t.ID, reasons[i]})
		default:
			valid = append(valid, preps[i])
		}
	}
	return valid, ctx.Err()
}

// parallel calls fn(0..n-1), at most k at a time, and waits.
func parallel(n, k int, fn func(int)) {
	sem := make(chan struct{}, k)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			fn(i)
		}()
	}
	wg.Wait()
}

var unsafeID = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// jobID names a sandbox for the reaper and the logs.
func jobID(t *Task, what string) string {
	id := "eval-" + unsafeID.ReplaceAllString(t.ID, "-") + "-" + what
	if len(id) > 100 {
		id = id[:100]
	}
	return id
}
