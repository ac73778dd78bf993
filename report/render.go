package report

import (
	"bytes"
	"embed"
	"fmt"
	"strings"
	"text/template"

	"github.com/patchwright/patchwright/report/marker"
	"github.com/patchwright/patchwright/verify"
)

//go:embed templates/*.tmpl
var templateFS embed.FS

var templates = template.Must(template.New("").Funcs(template.FuncMap{
	"code":      code,
	"cell":      cell,
	"fenced":    fenced,
	"prose":     prose,
	"plain":     plain,
	"spans":     spans,
	"html":      html,
	"duration":  duration,
	"thousands": thousands,
	"runMarker": marker.Run,
	"result":    resultText,
	"phase":     phaseText,
}).ParseFS(templateFS, "templates/*.tmpl"))

// failText describes a failed run for a table cell or a sentence.
func failText(c verify.CheckResult) string { return failFact(c).markdown() }

// resultText is one cell of the verification table.
func resultText(c *verify.CheckResult) string {
	switch {
	case c == nil:
		return "—"
	case c.CouldNotRun:
		return "⛔ could not run (" + plain(c.NotRunReason) + ")"
	case !c.Ran:
		return "⏭ not run (" + plain(c.NotRunReason) + ")"
	case c.Flaky:
		return "⚠️ flaky: " + c.RunsText()
	case c.ZeroTests:
		return "⚠️ no tests ran (" + plain(c.ZeroTestsDetail) + ")"
	case c.Passed && c.Summary != nil && c.Summary.Counted:
		return "✅ passed (" + plain(c.Summary.Text()) + ")"
	case c.Passed:
		if c.GoTests() != nil && len(c.GoTests().PackagesOK) > 0 {
			if n := len(c.GoTests().PackagesOK); n == 1 {
				return "✅ passed (1 package with tests)"
			} else {
				return fmt.Sprintf("✅ passed (%d packages with tests)", n)
			}
		}
		return "✅ passed"
	}
	return "❌ failed (" + failText(*c) + ")"
}

// row is one check in the verification table.
type row struct {
	Name, Command    string
	Why              string // why detection chose the command; "" for a configured check
	Before, After    *verify.CheckResult
	Time, Reruns     string
	BeforeOut        string
	AfterOut         string
	BeforeOutDropped bool
	AfterOutDropped  bool
}

func rows(in Input, outputBudget int) []row {
	var out []row
	index := map[string]int{}
	add := func(c verify.CheckResult) {
		i, ok := index[c.Name]
		if !ok {
			i = len(out)
			index[c.Name] = i
			out = append(out, row{Name: c.Name, Command: c.Command})
		}
		c2 := c
		r := &out[i]
		if c.Why != "" {
			r.Why = c.Why
		}
		text, dropped := "", false
		if c.Failed() && outputBudget > 0 {
			text, dropped = tail(c.Output, outputBudget)
		}
		if c.Phase == verify.Baseline {
			r.Before, r.BeforeOut, r.BeforeOutDropped = &c2, text, dropped
		} else {
			r.After, r.AfterOut, r.AfterOutDropped = &c2, text, dropped
			r.Command = c.Command
		}
	}
	for _, c := range in.Baseline {
		add(c)
	}
	for _, c := range in.Final {
		add(c)
	}
	for i := range out {
		r := &out[i]
		last := r.After
		if last == nil {
			last = r.Before
		}
		r.Time = duration(last.Duration)
		var runs []string
		if r.Before != nil && r.Before.RunsText() != "" {
			runs = append(runs, "before: "+r.Before.RunsText())
		}
		if r.After != nil && r.After.RunsText() != "" {
			runs = append(runs, "after: "+r.After.RunsText())
		}
		r.Reruns = strings.Join(runs, "; ")
		if r.Reruns == "" {
			r.Reruns = "—"
		}
	}
	return out
}

// execute renders one template.
func execute(name string, data any) (string, error) {
	var b bytes.Buffer
	if err := templates.ExecuteTemplate(&b, name, data); err != nil {
		return "", fmt.Errorf("render %s: %w", name, err)
	}
	return b.String(), nil
}
