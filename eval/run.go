package eval

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/internal/text"
)

// FileHiddenLog is the hidden and existing tests' output in each run's
// directory.
const FileHiddenLog = "hidden.log"

// runSlot is one (task, run) pair.
type runSlot struct {
	p   *prepared
	run int
}

// runAll runs every valid task Runs times, Concurrency at a time. It
// returns the results by task in run order, the refused tasks with the
// reason, and the infrastructure problems met while judging.
func (e *evaluator) runAll(ctx context.Context, valid []*prepared) (map[string][]Result, map[string]string, []string) {
	var slots []runSlot
	for _, p := range valid {
		for r := 1; r <= e.o.Runs; r++ {
			slots = append(slots, runSlot{p, r})
		}
	}
	results := make([]Result, len(slots))
	refusals := make([]string, len(slots))
	problems := make([]string, len(slots))
	prog := newProgress(e.o, valid)
	parallel(len(slots), e.o.Concurrency, func(i int) {
		if ctx.Err() != nil {
			return
		}
		results[i], refusals[i], problems[i] = e.runOne(ctx, slots[i])
		prog.finish(slots[i].p.task.ID, results[i])
	})
	byTask, refused := map[string][]Result{}, map[string]string{}
	var probs []string
	for i, s := range slots {
		id := s.p.task.ID
		if refusals[i] != "" {
			if _, seen := refused[id]; !seen {
				refused[id] = fmt.Sprintf("run %d: %s", s.run, refusals[i])
			}
		}
		if problems[i] != "" {
			probs = append(probs, fmt.Sprintf("%s run %d: %s", id, s.run, problems[i]))
		}
		if results[i].Task != "" {
			byTask[id] = append(byTask[id], results[i])
		}
	}
	return byTask, refused, probs
}

// runOne runs a task once and judges the result. refusal is set when the
// hidden tests reached the sandbox or the model; problem when the result
// could not be judged.
func (e *evaluator) runOne(ctx context.Context, s runSlot) (res Result, refusal, problem string) {
	t := s.p.task
	res = Result{Task: t.ID, Run: s.run, Outcome: "error"}
	out := filepath.Join(e.o.Out, "runs", safeName(t.ID), strconv.Itoa(s.run))
	work := filepath.Join(e.work, "runs", safeName(t.ID)+"-"+strconv.Itoa(s.run))
	defer os.RemoveAll(work)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return res, "", err.Error()
	}
	repo := filepath.Join(work, "repo.git")
	if err := cloneAt(ctx, s.p.repo, t.Commit, repo); err != nil {
		return res, "", err.Error()
	}
	var leakMu sync.Mutex
	leak := ""
	req := RunRequest{
		Task: t, Run: s.run, Repo: repo, Title: t.Title, Body: t.Body,
		Image: firstOf(e.o.Image, t.Image), MaxSteps: t.MaxSteps,
		OutDir: out, CacheVolume: s.p.cache,
		CheckTree: func(dir string) error {
			err := s.p.fp.checkTree(dir)
			if err == nil {
				err = checkBase(t, dir)
			}
			if err != nil {
				leakMu.Lock()
				leak = "hidden tests leak into the sandbox: " + err.Error()
				leakMu.Unlock()
			}
			return err
		},
	}
	start := e.o.Now()
	rr, err := e.o.Runner.Run(ctx, req)
	res.DurationMS = e.o.Now().Sub(start).Milliseconds()
	leakMu.Lock()
	refusal = leak
	leakMu.Unlock()
	if refusal == "" {
		if lerr := s.p.fp.checkLedger(filepath.Join(out, "ledger.jsonl")); lerr != nil {
			refusal = "hidden tests leak into the model's context: " + lerr.Error()
		}
	}
	if refusal != "" {
		writeLog(out, "Refused: "+refusal+"\nThe hidden tests were not run.\n")
		return res, refusal, ""
	}
	res.fill(rr, e.o.Cost)
	if err != nil {
		res.Outcome = "error"
		res.Reason = oneLine(err.Error())
		res.Why = "the run failed: " + res.Reason
		writeLog(out, "The run failed: "+res.Reason+"\nThe hidden tests were not run.\n")
		return res, "", ""
	}
	return e.judge(ctx, s, rr, repo, work, out, res)
}

func (r *Result) fill(rr RunResult, cost func(ledger.Usage) (float64, bool)) {
	if rr.Outcome != "" {
		r.Outcome = rr.Outcome
	}
	r.Reason, r.Steps, r.Usage = rr.Reason, rr.Steps, rr.Usage
	if usd, ok := cost(rr.Usage); ok {
		r.CostUSD = &usd
	}
}

// judge lays the hidden tests over the run's committed result and runs
// them with the existing tests in a fresh sandbox (docs/design.md §4.9).
func (e *evaluator) judge(ctx context.Context, s runSlot, rr RunResult, repo, work, out string, res Result) (Result, string, string) {
	t := s.p.task
	if rr.HeadCommit == "" {
		res.Why = "no change was committed"
		writeLog(out, fmt.Sprintf("No change was committed (outcome %s): not resolved. The hidden tests were not run; on the base commit they fail (checked at validation).\n", res.Outcome))
		return res, "", ""
	}
	tree := filepath.Join(work, "result")
	if err := exportTree(ctx, repo, rr.HeadCommit, tree); err != nil {
		res.Why = "the result could not be read"
		writeLog(out, "Could not read the result: "+err.Error()+"\n")
		return res, "", "read the result: " + err.Error()
	}
	if err := applyHidden(ctx, t, tree); err != nil {
		res.Why = "the hidden test patch does not apply to the result"
		writeLog(out, "Not resolved: "+err.Error()+"\n")
		return res, "", ""
	}
	cmds := append([]command{{"hidden", t.HiddenRun}}, s.p.setup.existing...)
	outs, err := e.chk.run(ctx, s.p, checkJob{jobID(t, "judge-"+strconv.Itoa(s.run)), tree, cmds})
	if err != nil {
		res.Why = "the hidden tests could not be run"
		writeLog(out, "The hidden tests could not be run: "+err.Error()+"\n")
		return res, "", "run the hidden tests: " + oneLine(err.Error())
	}
	res.HiddenPassed = outs[0].passed()
	for i, o := range outs[1:] {
		if i < len(s.p.baseOK) && s.p.baseOK[i] && !o.passed() {
			res.Regressions++
		}
	}
	res.Resolved = res.HiddenPassed && res.Regressions == 0
	switch {
	case !res.HiddenPassed:
		res.Why = fmt.Sprintf("the hidden tests fail (exit %d): %s", outs[0].ExitCode, lastLine(outs[0].Output))
	case res.Regressions > 0:
		res.Why = fmt.Sprintf("%d existing check(s) that pass on the base commit fail", res.Regressions)
	}
	writeLog(out, judgeLog(res, outs, s.p.baseOK))
	return res, "", ""
}

// judgeLog is hidden.log: the verdict, then each command's output.
func judgeLog(res Result, outs []outcome, baseOK []bool) string {
	var b strings.Builder
	verdict := "not resolved"
	if res.Resolved {
		verdict = "resolved"
	}
	fmt.Fprintf(&b, "Verdict: %s (hidden tests passed: %t, regressions: %d)\n", verdict, res.HiddenPassed, res.Regressions)
	for i, o := range outs {
		note := ""
		if i > 0 && (i-1 >= len(baseOK) || !baseOK[i-1]) {
			note = " (fails on the base commit too: not counted)"
		}
		fmt.Fprintf(&b, "\n=== %s: %s\n=== exit %d in %s%s\n%s\n", o.Name, o.Run, o.ExitCode, o.Duration.Round(time.Millisecond), note, strings.TrimRight(o.Output, "\n"))
		if o.TimedOut {
			b.WriteString("=== killed at the time limit\n")
		}
	}
	return b.String()
}

func writeLog(dir, text string) {
	_ = os.WriteFile(filepath.Join(dir, FileHiddenLog), []byte(text), 0o644)
}

// safeName makes a task ID a single path component.
func safeName(id string) string {
	s := unsafeID.ReplaceAllString(id, "-")
	if s == "" || s == "." || s == ".." {
		return "task"
	}
	return s
}

func oneLine(s string) string { return text.Line(s) }
