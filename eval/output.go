package eval

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Output files in the --out directory (docs/design.md §4.9).
const (
	FileJSON   = "eval.json"
	FileReport = "report.md"
	FilePlot   = "plot.svg"
)

// WriteOutputs writes eval.json, report.md and plot.svg into dir.
func WriteOutputs(dir string, rep *Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	files := map[string][]byte{
		FileJSON:   append(data, '\n'),
		FileReport: []byte(Markdown(rep)),
		FilePlot:   Plot([]*Report{rep}),
	}
	for _, name := range sortedKeys(files) {
		if err := os.WriteFile(filepath.Join(dir, name), files[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}

func pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

func interval(g Group) string { return pct(g.Wilson95[0]) + "–" + pct(g.Wilson95[1]) }

func usd(x *float64) string {
	if x == nil {
		return "unknown"
	}
	return fmt.Sprintf("$%.4f", *x)
}

// Markdown is report.md: what a person reads first. The headline is the
// rate with its interval, never the rate alone.
func Markdown(rep *Report) string {
	var b strings.Builder
	s := rep.Summary
	fmt.Fprintf(&b, "# Eval: %s\n\n", rep.Model)
	fmt.Fprintf(&b, "**%d of %d attempts resolved: %s (95%% interval %s).**\n\n", s.Resolved, s.Attempts, pct(s.Rate), interval(s.Group))
	fmt.Fprintf(&b, "%d tasks, %d run(s) each; %d scored, %d invalid. Resolved means the hidden tests pass on the run's result and no existing test that passed on the base commit fails.\n\n",
		rep.Tasks, rep.RunsPerTask, rep.Tasks-len(rep.Invalid), len(rep.Invalid))
	if s.Attempts > 0 && s.Attempts < 30 {
		fmt.Fprintf(&b, "With %d attempts the interval is wide: a difference between two configurations smaller than it is not evidence. Use `patchwright eval compare` for a paired test.\n\n", s.Attempts)
	}
	writeGroups(&b, s)
	writeAgreement(&b, s.VerifiedAgreement)
	writeCost(&b, rep)
	writeTasks(&b, rep)
	writeUnresolved(&b, rep)
	writeInvalid(&b, rep)
	if len(rep.Problems) > 0 {
		b.WriteString("## Problems\n\nThese runs could not be judged and count as not resolved:\n\n")
		for _, p := range rep.Problems {
			fmt.Fprintf(&b, "- %s\n", p)
		}
		b.WriteString("\n")
	}
	b.WriteString("## Files\n\n`eval.json` holds every figure above; `plot.svg` draws the rates with their intervals; `runs/<task>/<run>/` holds each run's `pr.md`, `result.json`, `ledger.jsonl` and `hidden.log` (the hidden and existing tests' output).\n")
	return b.String()
}

func writeGroups(b *strings.Builder, s Summary) {
	b.WriteString("| group | resolved | rate | 95% interval |\n|---|---|---|---|\n")
	row := func(name string, g Group) {
		fmt.Fprintf(b, "| %s | %d/%d | %s | %s |\n", name, g.Resolved, g.Attempts, pct(g.Rate), interval(g))
	}
	row("all", s.Group)
	for _, k := range sortedKeys(s.ByCategory) {
		row("category: "+k, s.ByCategory[k])
	}
	for _, k := range sortedKeys(s.ByLanguage) {
		row("language: "+k, s.ByLanguage[k])
	}
	b.WriteString("\n")
}

func writeAgreement(b *strings.Builder, a Agreement) {
	b.WriteString("## How honest is `verified`\n\n")
	b.WriteString("The run's own outcome against the hidden tests:\n\n")
	b.WriteString("| | resolved | not resolved |\n|---|---|---|\n")
	fmt.Fprintf(b, "| outcome `verified` | %d | %d (false positive) |\n", a.TruePos, a.FalsePos)
	fmt.Fprintf(b, "| any other outcome | %d (false negative) | %d |\n\n", a.FalseNeg, a.TrueNeg)
	if v := a.TruePos + a.FalsePos; v > 0 {
		fmt.Fprintf(b, "Of %d runs that said `verified`, %d were resolved (%s).\n\n", v, a.TruePos, pct(float64(a.TruePos)/float64(v)))
	}
}

func writeCost(b *strings.Builder, rep *Report) {
	s := rep.Summary
	b.WriteString("## Cost\n\n")
	fmt.Fprintf(b, "Tokens: %d input (%d of them cached), %d output. Cost: %s in all, %s per resolved attempt",
		s.Usage.InputTokens, s.Usage.CachedInputTokens, s.Usage.OutputTokens, usd(s.CostUSD), usd(s.CostPerResolvedUSD))
	if s.CostUSD == nil {
		b.WriteString(" (the model has no known price: set PATCHWRIGHT_PRICES)")
	}
	b.WriteString(".\n\n")
}

func writeTasks(b *strings.Builder, rep *Report) {
	if len(rep.Results) == 0 {
		return
	}
	byTask := map[string][]Result{}
	for _, r := range rep.Results {
		byTask[r.Task] = append(byTask[r.Task], r)
	}
	b.WriteString("## Tasks\n\nEach task's resolved runs of its total (the spread across runs), outcomes, and mean steps, tokens and cost per run.\n\n")
	b.WriteString("| task | category | language | resolved | outcomes | steps | tokens in/out | cost |\n|---|---|---|---|---|---|---|---|\n")
	spread := map[int]int{}
	for _, id := range sortedKeys(byTask) {
		k, row := taskRow(byTask[id])
		spread[k]++
		m := rep.Meta[id]
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", id, m.Category, m.Language, row)
	}
	b.WriteString("\n")
	if rep.RunsPerTask > 1 {
		var parts []string
		for k := rep.RunsPerTask; k >= 0; k-- {
			parts = append(parts, fmt.Sprintf("%d task(s) resolved in %d of %d runs", spread[k], k, rep.RunsPerTask))
		}
		b.WriteString("Spread: " + strings.Join(parts, "; ") + ".\n\n")
	}
	for _, id := range sortedKeys(rep.Notes) {
		for _, n := range rep.Notes[id] {
			fmt.Fprintf(b, "- %s: %s\n", id, n)
		}
	}
	if len(rep.Notes) > 0 {
		b.WriteString("\n")
	}
}

// taskRow sums one task's runs: how many were resolved, and the table
// cells from "resolved" to "cost".
func taskRow(rs []Result) (int, string) {
	k, steps, in, out := 0, 0, int64(0), int64(0)
	var outcomes []string
	total, known := 0.0, true
	for _, r := range rs {
		if r.Resolved {
			k++
		}
		steps += r.Steps
		in += r.Usage.InputTokens
		out += r.Usage.OutputTokens
		outcomes = append(outcomes, r.Outcome)
		if r.CostUSD == nil {
			known = false
		} else {
			total += *r.CostUSD
		}
	}
	n := int64(len(rs))
	var cost *float64
	if known {
		mean := total / float64(n)
		cost = &mean
	}
	return k, fmt.Sprintf("%d/%d | %s | %.1f | %d/%d | %s", k, n, strings.Join(outcomes, ", "), float64(steps)/float64(n), in/n, out/n, usd(cost))
}

// writeUnresolved lists the runs that were not resolved and why, each
// with the file that shows it.
func writeUnresolved(b *strings.Builder, rep *Report) {
	var lines []string
	for _, r := range rep.Results {
		if r.Resolved || r.Why == "" {
			continue
		}
		lines = append(lines, fmt.Sprintf("- %s run %d (outcome %s): %s; see `runs/%s/%d/%s`", r.Task, r.Run, r.Outcome, r.Why, safeName(r.Task), r.Run, FileHiddenLog))
	}
	if len(lines) == 0 {
		return
	}
	b.WriteString("## Not resolved\n\n" + strings.Join(lines, "\n") + "\n\n")
}

func writeInvalid(b *strings.Builder, rep *Report) {
	if len(rep.Invalid) == 0 {
		return
	}
	b.WriteString("## Invalid tasks (not scored)\n\n")
	for _, in := range rep.Invalid {
		fmt.Fprintf(b, "- %s: %s\n", in.Task, in.Reason)
	}
	b.WriteString("\n")
}
