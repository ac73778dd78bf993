package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/patchwright/patchwright/agent/provider"
	"github.com/patchwright/patchwright/eval"
	"github.com/patchwright/patchwright/eval/pipelinerun"
	"github.com/patchwright/patchwright/sandbox/docker"
)

// defaultEvalOut is where `patchwright eval` writes without --out.
const defaultEvalOut = "./patchwright-eval"

// evalOptions are the flags of `patchwright eval` (docs/design.md §4.9).
type evalOptions struct {
	tasks, repos, model, out, image string
	runs, concurrency               int
}

// runEval is `patchwright eval` and `patchwright eval compare`. Exit
// status as `patchwright run`: 0 when the evaluation completed (whatever
// it measured), 1 on bad usage or a malformed task, 2 on an
// infrastructure failure.
func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "compare" {
		return runCompare(args[1:], stdout, stderr)
	}
	o, err := parseEvalFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "patchwright eval: %v\n", err)
		return 1
	}
	plan, err := prepareEval(o)
	if err != nil {
		fmt.Fprintf(stderr, "patchwright eval: %v\n", oneLine(err))
		return 1
	}
	engine, err := docker.New(ctx, plan.sandbox.engineOptions(true))
	if err != nil {
		fmt.Fprintf(stderr, "patchwright eval: %v\n", err)
		return 2
	}
	defer engine.Close()
	opts := plan.options(engine)
	opts.Progress = stderr
	rep, err := eval.Evaluate(ctx, plan.tasks, opts)
	if rep != nil {
		if werr := eval.WriteOutputs(o.out, rep); werr != nil && err == nil {
			err = werr
		}
		printEval(stdout, o, rep)
	}
	if err != nil {
		fmt.Fprintf(stderr, "patchwright eval: %v\n", oneLine(err))
		return 2
	}
	return 0
}

func parseEvalFlags(args []string, stderr io.Writer) (evalOptions, error) {
	var o evalOptions
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "usage: patchwright eval --tasks DIR|FILE.jsonl --model PROVIDER:MODEL [flags]\n       patchwright eval compare A/eval.json B/eval.json\n\n")
		fs.PrintDefaults()
	}
	fs.StringVar(&o.tasks, "tasks", "", "a directory of task directories (docs/design.md §4.9), one task directory, or a SWE-bench JSONL file (required)")
	fs.StringVar(&o.repos, "repos", "", "with a JSONL file: the directory of local clones, named owner__repo")
	fs.StringVar(&o.model, "model", os.Getenv("PATCHWRIGHT_MODEL"), "model as PROVIDER:NAME [PATCHWRIGHT_MODEL]")
	fs.IntVar(&o.runs, "runs", 1, "runs per task")
	fs.IntVar(&o.concurrency, "concurrency", 1, "runs at once")
	fs.StringVar(&o.out, "out", defaultEvalOut, "directory for eval.json, report.md, plot.svg and runs/")
	fs.StringVar(&o.image, "image", "", "sandbox image for every task, overriding task.yml and .github/agent.yml")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	case o.tasks == "":
		return o, errors.New("--tasks is required: a directory of tasks or a SWE-bench JSONL file")
	case o.runs < 1:
		return o, fmt.Errorf("--runs %d: must be at least 1", o.runs)
	case o.concurrency < 1:
		return o, fmt.Errorf("--concurrency %d: must be at least 1", o.concurrency)
	case strings.TrimSpace(o.model) == "":
		return o, errors.New("no model: pass --model PROVIDER:NAME or set PATCHWRIGHT_MODEL (e.g. openai:gpt-4.1)")
	}
	return o, nil
}

// evalPlan is a `patchwright eval` whose flags, tasks and settings were
// checked: everything but the engine.
type evalPlan struct {
	tasks    []*eval.Task
	opts     eval.Options
	sandbox  sandboxSettings
	provider provider.Provider
	// window is the model's (provider.WindowFromEnv).
	window provider.Window
}

// prepareEval checks everything that can be checked without Docker: the
// tasks, the model, the prices and the sandbox settings.
func prepareEval(o evalOptions) (evalPlan, error) {
	var p evalPlan
	var err error
	if p.tasks, err = eval.Load(o.tasks, o.repos); err != nil {
		return p, err
	}
	if p.provider, err = provider.New(o.model, provider.Options{Logger: slog.New(slog.DiscardHandler)}); err != nil {
		return p, err
	}
	prices, err := provider.PricesFromEnv(nil)
	if err != nil {
		return p, err
	}
	if p.window, err = provider.WindowFromEnv(o.model, nil); err != nil {
		return p, err
	}
	out, err := filepath.Abs(o.out)
	if err != nil {
		return p, err
	}
	// The operator's sandbox settings, as serve's and run's.
	if p.sandbox, err = sandboxFromEnv(); err != nil {
		return p, err
	}
	model := o.model
	p.opts = eval.Options{
		Model: model, Runs: o.runs, Concurrency: o.concurrency, Out: out, Image: o.image,
		Cost: func(u provider.Usage) (float64, bool) { return prices.Cost(model, u) },
	}
	return p, nil
}

// options are eval's options on engine e: the runs go through
// newExecutor's executor, and eval's own checks see the same default
// image and sandbox settings.
func (p evalPlan) options(e engine) eval.Options {
	base := newExecutor(p.sandbox, e)
	base.Provider = p.provider
	base.Window = p.window
	opts := p.opts
	opts.Runner = &pipelinerun.Runner{Base: base}
	opts.Sandboxes, opts.Images = e, e
	opts.DefaultImage = base.DefaultImage
	opts.SandboxLimits, opts.SandboxRuntime = base.SandboxLimits, base.SandboxRuntime
	return opts
}

func printEval(w io.Writer, o evalOptions, rep *eval.Report) {
	s := rep.Summary
	fmt.Fprintf(w, "resolved %d of %d attempts: %.1f%% (95%% interval %.1f%%-%.1f%%); %d of %d tasks invalid\n",
		s.Resolved, s.Attempts, 100*s.Rate, 100*s.Wilson95[0], 100*s.Wilson95[1], len(rep.Invalid), rep.Tasks)
	fmt.Fprintf(w, "report:  %s (and %s, %s, runs/)\n", filepath.Join(o.out, eval.FileReport), eval.FileJSON, eval.FilePlot)
}

// runCompare is `patchwright eval compare A/eval.json B/eval.json`.
func runCompare(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("eval compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	plot := fs.String("plot", "", "also write an SVG of both configurations' rates to this file")
	fs.Usage = func() {
		fmt.Fprint(stderr, "usage: patchwright eval compare [--plot FILE] A/eval.json B/eval.json\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 1
	}
	if fs.NArg() != 2 {
		fmt.Fprintln(stderr, "patchwright eval compare: want two eval.json files: A/eval.json B/eval.json")
		return 1
	}
	var reps []*eval.Report
	for _, p := range fs.Args() {
		r, err := eval.ReadReport(p)
		if err != nil {
			fmt.Fprintf(stderr, "patchwright eval compare: %v\n", oneLine(err))
			return 1
		}
		reps = append(reps, r)
	}
	c := eval.Compare(reps[0], reps[1])
	fmt.Fprintf(stdout, "A = %s\nB = %s\n", fs.Arg(0), fs.Arg(1))
	fmt.Fprint(stdout, c.Text())
	if *plot != "" {
		if err := os.WriteFile(*plot, eval.Plot(reps), 0o644); err != nil {
			fmt.Fprintf(stderr, "patchwright eval compare: %v\n", err)
			return 2
		}
	}
	return 0
}
