package outcomes

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Label bounds: only the most frequent values of each label (by number
// of pull requests, ties by name) keep their own series; the rest are
// Other. So the series stay bounded by MaxInstallations × MaxRepos ×
// MaxModels × 4 states however many repositories the app is on.
const (
	MaxInstallations = 20
	MaxRepos         = 50
	MaxModels        = 10
	Other            = "other"
)

// timeToMergeBuckets: an agent pull request is merged within minutes at
// best and weeks at worst.
var timeToMergeBuckets = []float64{600, 1800, 3600, 4 * 3600, 12 * 3600, 86400, 3 * 86400, 7 * 86400, 14 * 86400, 30 * 86400}

var labels = []string{"installation", "repository", "model"}

func desc(name, help string, extra ...string) *prometheus.Desc {
	return prometheus.NewDesc("patchwright_"+name, help, append(slices.Clone(labels), extra...), nil)
}

var (
	descPRs = desc("agent_pull_requests",
		"Agent pull requests by outcome state (merged, closed, open, superseded), from GitHub's state.", "state")
	descNoCommit = desc("agent_pull_requests_merged_without_human_commit",
		"Merged agent pull requests whose every commit is the app's.")
	descNoReview = desc("agent_pull_requests_merged_without_human_review",
		"Merged agent pull requests that no human reviewed.")
	descRate = desc("agent_pull_request_merge_rate",
		"Merged over decided (merged, closed or superseded) agent pull requests; absent while none is decided.")
	descTTM = desc("agent_pull_request_time_to_merge_seconds",
		"Time from opening to merging an agent pull request.")
	descCost = desc("agent_pull_request_cost_per_merged_usd",
		"Model cost of the runs of merged agent pull requests over their number, for those whose cost is known.")
	descUp = prometheus.NewDesc("patchwright_outcomes_up",
		"1 when the outcome records were read from Redis at this scrape, else 0.", nil, nil)
	descBad = prometheus.NewDesc("patchwright_outcomes_unreadable",
		"Outcome records in Redis that did not decode and were left out.", nil, nil)
)

// Collector derives the outcome figures from the store at each scrape,
// so every serve and worker replica reports the same numbers. Register
// it with the registry /metrics serves.
type Collector struct {
	Store *Store
	// Timeout bounds the read at a scrape; default 5s.
	Timeout time.Duration
}

// Describe sends every descriptor.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descPRs, descNoCommit, descNoReview, descRate, descTTM, descCost, descUp, descBad} {
		ch <- d
	}
}

// group is one label set's figures.
type group struct {
	states             map[string]int
	noCommit, noReview int
	ttm                []float64
	costSum            float64
	costN              int
}

// Collect reads the records and sends the figures; a failed read is
// patchwright_outcomes_up 0, not a failed scrape.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	timeout := cmp.Or(c.Timeout, 5*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	recs, bad, err := c.Store.All(ctx)
	if err != nil {
		ch <- prometheus.MustNewConstMetric(descUp, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(descUp, prometheus.GaugeValue, 1)
	ch <- prometheus.MustNewConstMetric(descBad, prometheus.GaugeValue, float64(bad))
	for key, g := range groups(recs) {
		send(ch, g, key[:]...)
	}
}

// groups sums recs by bounded label set.
func groups(recs []Record) map[[3]string]*group {
	inst := keep(recs, MaxInstallations, func(r Record) string { return strconv.FormatInt(r.Installation, 10) })
	repo := keep(recs, MaxRepos, func(r Record) string { return r.Repo })
	model := keep(recs, MaxModels, func(r Record) string { return cmp.Or(r.Model, "unknown") })
	out := map[[3]string]*group{}
	for _, r := range recs {
		k := [3]string{inst(r), repo(r), model(r)}
		g := out[k]
		if g == nil {
			g = &group{states: map[string]int{}}
			out[k] = g
		}
		g.add(r)
	}
	return out
}

func (g *group) add(r Record) {
	g.states[r.State]++
	if r.State != StateMerged {
		return
	}
	if !r.HumanCommit {
		g.noCommit++
	}
	if !r.HumanReview {
		g.noReview++
	}
	if !r.OpenedAt.IsZero() && !r.ClosedAt.Before(r.OpenedAt) {
		g.ttm = append(g.ttm, r.ClosedAt.Sub(r.OpenedAt).Seconds())
	}
	if r.CostKnown {
		g.costSum += r.CostUSD
		g.costN++
	}
}

// keep returns label's value for a record when it is among the max most
// frequent, else Other.
func keep(recs []Record, max int, label func(Record) string) func(Record) string {
	n := map[string]int{}
	for _, r := range recs {
		n[label(r)]++
	}
	vals := make([]string, 0, len(n))
	for v := range n {
		vals = append(vals, v)
	}
	slices.SortFunc(vals, func(a, b string) int { return cmp.Or(n[b]-n[a], cmp.Compare(a, b)) })
	kept := map[string]bool{}
	for _, v := range vals[:min(max, len(vals))] {
		kept[v] = true
	}
	return func(r Record) string {
		if v := label(r); kept[v] {
			return v
		}
		return Other
	}
}

// send writes one group's series.
func send(ch chan<- prometheus.Metric, g *group, lv ...string) {
	for _, s := range []string{StateMerged, StateClosed, StateOpen, StateSuperseded} {
		ch <- prometheus.MustNewConstMetric(descPRs, prometheus.GaugeValue, float64(g.states[s]), append(lv, s)...)
	}
	merged := g.states[StateMerged]
	ch <- prometheus.MustNewConstMetric(descNoCommit, prometheus.GaugeValue, float64(g.noCommit), lv...)
	ch <- prometheus.MustNewConstMetric(descNoReview, prometheus.GaugeValue, float64(g.noReview), lv...)
	if decided := merged + g.states[StateClosed] + g.states[StateSuperseded]; decided > 0 {
		ch <- prometheus.MustNewConstMetric(descRate, prometheus.GaugeValue, float64(merged)/float64(decided), lv...)
	}
	if g.costN > 0 {
		ch <- prometheus.MustNewConstMetric(descCost, prometheus.GaugeValue, g.costSum/float64(g.costN), lv...)
	}
	ch <- histogramOf(g.ttm, lv)
}

// histogramOf is a constant histogram of the seconds in xs.
func histogramOf(xs []float64, lv []string) prometheus.Metric {
	buckets := make(map[float64]uint64, len(timeToMergeBuckets))
	for _, b := range timeToMergeBuckets {
		buckets[b] = 0 // a bucket not in the map is not written at all
	}
	var sum float64
	for _, x := range xs {
		sum += x
		for _, b := range timeToMergeBuckets {
			if x <= b {
				buckets[b]++
			}
		}
	}
	return prometheus.MustNewConstHistogram(descTTM, uint64(len(xs)), sum, buckets, lv...)
}
