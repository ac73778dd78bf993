package report

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/patchwright/patchwright/report/marker"
	"github.com/patchwright/patchwright/verify"
)

// Size bounds of the parts of a body whose length the run controls. With
// every check output left out, a body built within them fits MaxBody.
const (
	maxSummaryBytes = 8000
	maxFileRows     = 200
	maxRows         = 40
	maxNotVerified  = 60
)

// outputBudgets are tried in turn, per output block, until the body fits.
var outputBudgets = []int{6000, 2500, 800, 0}

// bodyData is what the pr_body template sees.
type bodyData struct {
	Input
	Summary       string
	SummaryCut    bool
	Files         []FileStat
	MoreFiles     int
	Rows          []row
	Demonstrating []string
	// RanAs says, one line a check, how a final check was adapted to
	// the image (verify's CheckResult.Note): another program, a
	// virtualenv.
	RanAs          []string
	TestsPassAfter bool
	NotVerified    []string
	// Dependencies is the dependency paragraph under Changes, one
	// sentence a line; nil when no dependency setup ran.
	Dependencies []string
	Cost         string
	// ReviewLine says how the review before publishing went; "" when
	// none was recorded.
	ReviewLine     string
	OutputsOmitted bool
	// History is the rendered attempt history; "" for none.
	History string
	// Pushed is the pushed marker; "" when nothing was pushed.
	Pushed string
	// ForeignRows are the commits Patchwright did not make.
	ForeignRows []foreignRow
}

var shaRE = regexp.MustCompile(`^[0-9a-f]{40}$`)

// PRBody renders the pull-request body of docs/design.md §4.6. It is always under
// MaxBody characters: long check output is shortened, then left out, with
// a pointer to the run log.
func PRBody(in Input) (string, error) {
	d := bodyData{Input: in, Cost: cost(in.CostUSD), ReviewLine: reviewLine(in.Review)}
	if in.ReplayedFrom != "" {
		d.Cost = "no model called"
	}
	d.LogURL = safeURL(in.LogURL)
	if d.Attempt < 1 {
		d.Attempt = 1
	}
	summary, cut := truncate(strings.TrimSpace(in.Summary), maxSummaryBytes)
	d.Summary, d.SummaryCut = prose(summary), cut
	d.Files = in.Files
	d.ForeignRows = foreignRows(in.Foreign)
	if len(d.Files) > maxFileRows {
		d.Files, d.MoreFiles = d.Files[:maxFileRows], len(in.Files)-maxFileRows
	}
	for _, f := range dependencyFacts(in) {
		d.Dependencies = append(d.Dependencies, f.markdown())
	}
	for _, f := range notVerified(in) {
		d.NotVerified = append(d.NotVerified, f.markdown())
	}
	if len(d.NotVerified) > maxNotVerified {
		n := len(d.NotVerified) - maxNotVerified
		d.NotVerified = append(d.NotVerified[:maxNotVerified], fmt.Sprintf("…and %d more items, listed in the run log.", n))
	}
	if shaRE.MatchString(in.HeadCommit) {
		d.Pushed = marker.Pushed(in.HeadCommit)
	}
	d.TestsPassAfter = finalTestsPassed(in.Final)
	for _, c := range in.Final {
		if c.Note != "" {
			d.RanAs = append(d.RanAs, say(value(c.Name), ": ", spanned(c.Note), ".").markdown())
		}
	}
	for _, t := range in.NewTests {
		if t.Status == verify.FailsBefore {
			f := say(testLead(t.NewTest), " fails on the original code")
			if d.TestsPassAfter {
				f = append(f, " and passes with the change, so it demonstrates the fix")
			}
			d.Demonstrating = append(d.Demonstrating, append(f, ".").markdown())
		}
	}
	h := historyOf(in)
	for {
		body, err := fitBody(d, in, h)
		if err == nil || !h.shrink() {
			return body, err
		}
	}
}

// fitBody renders the body with history h, shortening and then leaving out
// check output until it is under MaxBody.
func fitBody(d bodyData, in Input, h History) (string, error) {
	var err error
	if d.History, err = h.section(); err != nil {
		return "", err
	}
	var body string
	for _, budget := range outputBudgets {
		d.Rows = rows(in, budget)
		if len(d.Rows) > maxRows {
			d.Rows = d.Rows[:maxRows]
		}
		d.OutputsOmitted = budget == 0 && hasFailure(in)
		body, err = execute("pr_body", d)
		if err != nil {
			return "", err
		}
		if in.Template.Usable() {
			body = applyTemplate(body, in)
		}
		if len(body) < MaxBody {
			return body, nil
		}
	}
	return "", fmt.Errorf("render pull-request body: %d bytes even without check output (limit %d)", len(body), MaxBody)
}

// whyGroup is one reason detection gave and the checks it chose by it.
type whyGroup struct {
	Why   string
	Names []string
}

// Whys says why each detected check's command was chosen, one group per
// reason in the table's order (a Go module's build, vet and test share
// theirs); configured checks have no reason and are left out.
func (d bodyData) Whys() []whyGroup {
	var out []whyGroup
	index := map[string]int{}
	for _, r := range d.Rows {
		if r.Why == "" {
			continue
		}
		i, ok := index[r.Why]
		if !ok {
			i = len(out)
			index[r.Why] = i
			out = append(out, whyGroup{Why: r.Why})
		}
		out[i].Names = append(out[i].Names, r.Name)
	}
	return out
}

func hasFailure(in Input) bool {
	for _, c := range append(append([]verify.CheckResult(nil), in.Baseline...), in.Final...) {
		if c.Failed() && c.Output != "" {
			return true
		}
	}
	return false
}

// finalTestsPassed reports whether a final test check ran and passed, the
// condition for saying a new test passes with the change.
func finalTestsPassed(final []verify.CheckResult) bool {
	for _, c := range final {
		if backs(c, claimTests) && c.Passed {
			return true
		}
	}
	return false
}

func cost(usd *float64) string {
	switch {
	case usd == nil:
		return "cost unknown"
	case *usd < 0.01:
		return "under $0.01"
	}
	return fmt.Sprintf("about $%.2f", *usd)
}
