package eval

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"

	"github.com/patchwright/patchwright/agent/ledger"
)

// Report is eval.json (docs/design.md §4.9) exactly; the fields without a JSON
// name feed report.md.
type Report struct {
	Model       string    `json:"model"`
	RunsPerTask int       `json:"runs_per_task"`
	Tasks       int       `json:"tasks"`
	Invalid     []Invalid `json:"invalid"`
	Summary     Summary   `json:"summary"`
	Results     []Result  `json:"results"`

	// Notes says, per task, what the reader should know about how it was
	// judged (existing tests that fail on the base commit, for example).
	Notes map[string][]string `json:"-"`
	// Meta holds each scored task's category and language.
	Meta map[string]TaskMeta `json:"-"`
	// Problems are infrastructure failures met while judging runs.
	Problems []string `json:"-"`
}

// TaskMeta is what the report groups a task by.
type TaskMeta struct{ Category, Language string }

// Invalid is a task that was not scored, and why.
type Invalid struct {
	Task   string `json:"task"`
	Reason string `json:"reason"`
}

// Summary is eval.json's "summary".
type Summary struct {
	Group
	ByCategory        map[string]Group `json:"by_category"`
	ByLanguage        map[string]Group `json:"by_language"`
	VerifiedAgreement Agreement        `json:"verified_agreement"`
	Usage             ledger.Usage     `json:"usage"`
	// CostUSD is null when any run's model has no known price.
	CostUSD            *float64 `json:"cost_usd"`
	CostPerResolvedUSD *float64 `json:"cost_per_resolved_usd"`
}

// Group is a resolve rate with its 95% Wilson interval.
type Group struct {
	Attempts int      `json:"attempts"`
	Resolved int      `json:"resolved"`
	Rate     float64  `json:"rate"`
	Wilson95 Interval `json:"wilson95"`
}

// Agreement counts the run's own verdict (outcome "verified") against
// the hidden tests' (resolved): how honest "verified" is.
type Agreement struct {
	TruePos  int `json:"true_pos"`
	FalsePos int `json:"false_pos"`
	FalseNeg int `json:"false_neg"`
	TrueNeg  int `json:"true_neg"`
}

// Result is one run of one task.
type Result struct {
	Task         string       `json:"task"`
	Run          int          `json:"run"`
	Resolved     bool         `json:"resolved"`
	Outcome      string       `json:"outcome"`
	HiddenPassed bool         `json:"hidden_passed"`
	Regressions  int          `json:"regressions"`
	Steps        int          `json:"steps"`
	Usage        ledger.Usage `json:"usage"`
	CostUSD      *float64     `json:"cost_usd"`
	DurationMS   int64        `json:"duration_ms"`

	// Reason is the run's one-line reason for its outcome.
	Reason string `json:"-"`
	// Why says in a few words why the run is not resolved.
	Why string `json:"-"`
}

// Interval is a 95% interval's lower and upper bound.
type Interval [2]float64

// MarshalJSON writes the bounds with four decimals: more would be false
// precision, and the last bits of a float differ between machines that
// fuse multiply-adds. Figures printed from memory are rounded once, from
// the exact bounds.
func (iv Interval) MarshalJSON() ([]byte, error) {
	return json.Marshal([2]float64{round4(iv[0]), round4(iv[1])})
}

// newGroup computes a rate and its interval.
func newGroup(resolved, attempts int) Group {
	g := Group{Attempts: attempts, Resolved: resolved}
	if attempts > 0 {
		g.Rate = float64(resolved) / float64(attempts)
	}
	lo, hi := Wilson(resolved, attempts)
	g.Wilson95 = Interval{lo, hi}
	return g
}

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// summarize scores the results; meta gives each task's category and
// language.
func summarize(results []Result, meta map[string]TaskMeta) Summary {
	s := Summary{ByCategory: map[string]Group{}, ByLanguage: map[string]Group{}}
	cat, lang := map[string][2]int{}, map[string][2]int{}
	resolved, cost, costKnown := 0, 0.0, true
	for _, r := range results {
		m := meta[r.Task]
		tally(cat, m.Category, r.Resolved)
		tally(lang, m.Language, r.Resolved)
		if r.Resolved {
			resolved++
		}
		s.VerifiedAgreement.count(r.Outcome == "verified", r.Resolved)
		s.Usage = s.Usage.Add(r.Usage)
		if r.CostUSD == nil {
			costKnown = false
		} else {
			cost += *r.CostUSD
		}
	}
	s.Group = newGroup(resolved, len(results))
	for k, v := range cat {
		s.ByCategory[k] = newGroup(v[0], v[1])
	}
	for k, v := range lang {
		s.ByLanguage[k] = newGroup(v[0], v[1])
	}
	if costKnown {
		s.CostUSD = &cost
		if resolved > 0 {
			per := cost / float64(resolved)
			s.CostPerResolvedUSD = &per
		}
	}
	return s
}

func tally(m map[string][2]int, key string, resolved bool) {
	v := m[key]
	if resolved {
		v[0]++
	}
	v[1]++
	m[key] = v
}

func (a *Agreement) count(verified, resolved bool) {
	switch {
	case verified && resolved:
		a.TruePos++
	case verified:
		a.FalsePos++
	case resolved:
		a.FalseNeg++
	default:
		a.TrueNeg++
	}
}

// ReadReport reads an eval.json.
func ReadReport(path string) (*Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: not an eval.json: %w", path, err)
	}
	if r.Model == "" && r.Results == nil {
		return nil, fmt.Errorf("%s: not an eval.json (no model, no results)", path)
	}
	return &r, nil
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
