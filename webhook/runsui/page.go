package runsui

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/patchwright/patchwright/internal/logkey"
	"github.com/patchwright/patchwright/jobs/outcomes"
	"github.com/patchwright/patchwright/jobs/runstore"
)

//go:embed page.html.tmpl
var pageText string

var pageTmpl = template.Must(template.New("runs").Funcs(template.FuncMap{
	"usd":     usd,
	"percent": func(x float64) string { return strconv.FormatFloat(100*x, 'f', 0, 64) + "%" },
	"span":    span,
	"when":    func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04") },
}).Parse(pageText))

// row is one listed run.
type row struct {
	runstore.Summary
	Link string
	// PRState is the pull request's outcome, FilterUnchecked when it has
	// none yet, FilterNoPR without a pull request.
	PRState string
}

// view is what the template renders.
type view struct {
	Filter   filter
	Outcomes []string
	Figures  outcomes.Figures
	// FiguresOK is false when the outcome records could not be read.
	FiguresOK bool
	Rows      []row
	// Next is the next page's query; "" on the last page. Scanned says a
	// page stopped at MaxScan entries before it was full.
	Next    string
	Scanned bool
}

// page answers one GET.
func (h *Handler) page(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "the runs dashboard is read-only: GET only", http.StatusMethodNotAllowed)
		return
	}
	f, err := parseFilter(r.URL.Query())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	v := view{Filter: f, Outcomes: outcomeSet}
	rows, next, full, err := h.rows(r.Context(), f)
	if err != nil {
		h.cfg.Logger.ErrorContext(r.Context(), "runs dashboard", logkey.Err, err)
		http.Error(w, "could not read the runs from Redis", http.StatusServiceUnavailable)
		return
	}
	v.Rows, v.Scanned = rows, !full && next >= 0
	if next >= 0 {
		v.Next = "?" + f.query(next)
	}
	v.Figures, v.FiguresOK = h.figures(r.Context(), f)
	var buf bytes.Buffer
	if err := pageTmpl.Execute(&buf, v); err != nil {
		h.cfg.Logger.ErrorContext(r.Context(), "render the runs dashboard", logkey.Err, err)
		http.Error(w, "could not render the page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	// No script, no plugin, no frame: the page is text and a form.
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Write(buf.Bytes())
}

// rows reads windows of f's index from f.Offset until a page is full,
// the index ends, or MaxScan entries were read. next is the offset of
// the next page (-1 when the index ended); full says the page filled.
func (h *Handler) rows(ctx context.Context, f filter) (rows []row, next int, full bool, err error) {
	offset := f.Offset
	for scanned := 0; scanned < MaxScan; {
		runs, read, err := h.cfg.Runs.Scan(ctx, runstore.Query{Key: f.key(), From: f.from, To: f.to, Offset: offset, Count: scanWindow})
		if err != nil {
			return nil, 0, false, err
		}
		kept, err := h.keep(ctx, f, runs)
		if err != nil {
			return nil, 0, false, err
		}
		for i, rw := range kept {
			if len(rows) == PageSize {
				if i == 0 { // the page filled with the window before
					return rows, offset, true, nil
				}
				// Resume after the last run shown.
				return rows, offset + positionOf(runs, kept[i-1].ID) + 1, true, nil
			}
			rows = append(rows, rw)
		}
		scanned += read
		offset += read
		if read < scanWindow {
			return rows, -1, false, nil
		}
	}
	return rows, offset, len(rows) == PageSize, nil
}

// positionOf is id's index in runs' window. Runs whose summary expired
// are not in runs, so the position is a lower bound: at worst a run is
// shown again on the next page, never skipped.
func positionOf(runs []runstore.Summary, id string) int {
	for i, r := range runs {
		if r.ID == id {
			return i
		}
	}
	return 0
}

// keep adds each run's pull request outcome and keeps those f selects.
func (h *Handler) keep(ctx context.Context, f filter, runs []runstore.Summary) ([]row, error) {
	var prs []outcomes.Record
	for _, r := range runs {
		if r.PR != 0 {
			prs = append(prs, outcomes.Record{Installation: r.Installation, Repo: r.Repo, PR: r.PR})
		}
	}
	recs, err := h.cfg.Outcomes.Lookup(ctx, prs)
	if err != nil {
		return nil, err
	}
	var out []row
	for _, r := range runs {
		rw := row{Summary: r, Link: h.cfg.Link(r.ID), PRState: FilterNoPR}
		if r.PR != 0 {
			rw.PRState = FilterUnchecked
			if st := recs[0].State; st != "" {
				rw.PRState = st
			}
			recs = recs[1:]
		}
		if f.Installation != 0 && r.Installation != f.Installation {
			continue // a repository's index, filtered by installation too
		}
		if f.Outcome == "" || f.Outcome == rw.PRState {
			out = append(out, rw)
		}
	}
	return out, nil
}

// figures summarises the outcome records f selects (its installation,
// repository and the days the pull requests were opened); false when
// they could not be read.
func (h *Handler) figures(ctx context.Context, f filter) (outcomes.Figures, bool) {
	recs, _, err := h.cfg.Outcomes.All(ctx)
	if err != nil {
		h.cfg.Logger.ErrorContext(ctx, "runs dashboard: read the outcomes", logkey.Err, err)
		return outcomes.Figures{}, false
	}
	kept := recs[:0]
	for _, r := range recs {
		switch {
		case f.Installation != 0 && r.Installation != f.Installation:
		case f.Repo != "" && !strings.EqualFold(r.Repo, f.Repo):
		case !f.from.IsZero() && r.OpenedAt.Before(f.from):
		case !f.to.IsZero() && !r.OpenedAt.Before(f.to):
		default:
			kept = append(kept, r)
		}
	}
	return outcomes.Summarize(kept), true
}

func usd(c *float64) string {
	if c == nil {
		return "unknown"
	}
	return fmt.Sprintf("$%.2f", *c)
}

// span is a duration in the largest whole units worth reading.
func span(d time.Duration) string {
	switch {
	case d <= 0:
		return "none yet"
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%.1fh", d.Hours())
	}
	return fmt.Sprintf("%.1f days", d.Hours()/24)
}
