package eval

import (
	"encoding/json"
	"encoding/xml"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent/ledger"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// sampleReport is docs/design.md §4.9's example: 12 tasks, 9 resolved.
func sampleReport() *Report {
	meta := map[string]TaskMeta{}
	var results []Result
	for i := range 12 {
		id := string(rune('a'+i)) + "-task"
		cat := "bug"
		if i >= 8 {
			cat = "feature"
		}
		meta[id] = TaskMeta{Category: cat, Language: "go"}
		resolved := i != 0 && i != 8 && i != 9
		outcome := "verified"
		if i == 1 || i == 8 || i == 9 {
			outcome = "unverified"
		}
		cost := 0.01
		results = append(results, Result{Task: id, Run: 1, Resolved: resolved, Outcome: outcome, HiddenPassed: resolved,
			Steps: 11, Usage: ledger.Usage{InputTokens: 1000, OutputTokens: 100, CachedInputTokens: 500}, CostUSD: &cost, DurationMS: 2500})
	}
	rep := &Report{Model: "openai:gpt-4.1", RunsPerTask: 1, Tasks: 13, Invalid: []Invalid{{"m-task", "the hidden tests pass on the base commit"}},
		Results: results, Meta: meta}
	rep.Summary = summarize(results, meta)
	return rep
}

func TestEvalJSONGolden(t *testing.T) {
	got, err := json.MarshalIndent(sampleReport(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "eval.golden.json")
	if *update {
		os.WriteFile(golden, append(got, '\n'), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(got)+"\n" != string(want) {
		t.Errorf("eval.json changed; docs/design.md §4.9 is a contract (go test -update after a deliberate change):\n%s", got)
	}
}

// keys lists every object key path in a decoded JSON document, with map
// keys of by_category and by_language collapsed to "*".
func keys(v any, prefix string, out map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := prefix + "." + k
			if strings.HasSuffix(prefix, "by_category") || strings.HasSuffix(prefix, "by_language") {
				p = prefix + ".*"
			}
			out[p] = true
			keys(e, p, out)
		}
	case []any:
		for _, e := range x {
			keys(e, prefix+"[]", out)
		}
	}
}

func TestEvalJSONHasExactlyTheDesignKeys(t *testing.T) {
	data, _ := json.Marshal(sampleReport())
	var v any
	json.Unmarshal(data, &v)
	got := map[string]bool{}
	keys(v, "", got)
	want := []string{
		".model", ".runs_per_task", ".tasks", ".invalid", ".invalid[].task", ".invalid[].reason",
		".summary", ".summary.attempts", ".summary.resolved", ".summary.rate", ".summary.wilson95",
		".summary.by_category", ".summary.by_category.*", ".summary.by_category.*.attempts", ".summary.by_category.*.resolved",
		".summary.by_category.*.rate", ".summary.by_category.*.wilson95",
		".summary.by_language", ".summary.by_language.*", ".summary.by_language.*.attempts", ".summary.by_language.*.resolved",
		".summary.by_language.*.rate", ".summary.by_language.*.wilson95",
		".summary.verified_agreement", ".summary.verified_agreement.true_pos", ".summary.verified_agreement.false_pos",
		".summary.verified_agreement.false_neg", ".summary.verified_agreement.true_neg",
		".summary.usage", ".summary.usage.input_tokens", ".summary.usage.output_tokens", ".summary.usage.cached_input_tokens",
		".summary.cost_usd", ".summary.cost_per_resolved_usd",
		".results", ".results[].task", ".results[].run", ".results[].resolved", ".results[].outcome", ".results[].hidden_passed",
		".results[].regressions", ".results[].steps", ".results[].usage", ".results[].usage.input_tokens",
		".results[].usage.output_tokens", ".results[].usage.cached_input_tokens", ".results[].cost_usd", ".results[].duration_ms",
	}
	if g := slices.Sorted(mapKeys(got)); !slices.Equal(g, slices.Sorted(slices.Values(want))) {
		t.Errorf("keys:\n%s\nwant:\n%s", strings.Join(g, "\n"), strings.Join(slices.Sorted(slices.Values(want)), "\n"))
	}
	s := sampleReport().Summary
	if s.Attempts != 12 || s.Resolved != 9 || !near(s.Wilson95[0], 0.468, 0.0006) || !near(s.Wilson95[1], 0.911, 0.0006) {
		t.Errorf("summary %+v, want docs/design.md's 9 of 12, [0.468, 0.911]", s.Group)
	}
	if g := s.ByCategory["bug"]; g.Attempts != 8 || g.Resolved != 7 || !near(g.Wilson95[0], 0.529, 0.0006) || !near(g.Wilson95[1], 0.978, 0.0006) {
		t.Errorf("bug %+v, want docs/design.md's 7 of 8, [0.529, 0.978]", g)
	}
	if a := s.VerifiedAgreement; a != (Agreement{TruePos: 8, FalsePos: 1, FalseNeg: 1, TrueNeg: 2}) {
		t.Errorf("agreement %+v, want docs/design.md's 8/1/1/2", a)
	}
}

func mapKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func TestWriteOutputs(t *testing.T) {
	dir := t.TempDir()
	rep := sampleReport()
	rep.Model = `openai:<gpt & "4.1">`
	if err := WriteOutputs(dir, rep); err != nil {
		t.Fatal(err)
	}
	back, err := ReadReport(filepath.Join(dir, FileJSON))
	if err != nil || back.Summary.Resolved != 9 || len(back.Results) != 12 {
		t.Fatalf("eval.json read back: %v %+v", err, back)
	}
	md, _ := os.ReadFile(filepath.Join(dir, FileReport))
	for _, want := range []string{
		"**9 of 12 attempts resolved: 75.0% (95% interval 46.8%–91.1%).**",
		"| category: bug | 7/8 | 87.5% | 52.9%–97.8% |",
		"| outcome `verified` | 8 | 1 (false positive) |",
		"- m-task: the hidden tests pass on the base commit",
		"$0.1200 in all, $0.0133 per resolved attempt",
		"| a-task | bug | go | 0/1 | verified | 11.0 | 1000/100 | $0.0100 |",
		"| l-task | feature | go | 1/1 | verified | 11.0 | 1000/100 | $0.0100 |",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	svg, _ := os.ReadFile(filepath.Join(dir, FilePlot))
	if err := xml.Unmarshal(svg, new(any)); err != nil {
		t.Errorf("plot.svg is not well-formed XML: %v", err)
	}
	for _, want := range []string{">category: feature<", "75.0% (46.8%–91.1%) n=12", "&lt;gpt &amp; &quot;4.1&quot;&gt;"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("plot.svg lacks %q", want)
		}
	}
}

func TestReadReportRejectsOtherFiles(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.json": "[1,2]", "b.json": "{}"})
	for _, n := range []string{"a.json", "b.json", "missing.json"} {
		if _, err := ReadReport(filepath.Join(dir, n)); err == nil {
			t.Errorf("%s accepted", n)
		}
	}
}
