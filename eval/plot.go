package eval

import (
	"fmt"
	"strings"
)

// Plot layout, in SVG user units.
const (
	plotLabelW = 200 // at least; wider for long labels
	plotCharW  = 7.5 // a 13-unit sans-serif character, generously
	plotBarW   = 400
	plotTextW  = 230
	plotRowH   = 24
	plotTop    = 56
)

// plotColors tell configurations apart; each row's label is drawn in its
// configuration's colour and names it, so there is no legend to hunt for.
var plotColors = []string{"#2a6fdb", "#d9480f", "#2b8a3e", "#862e9c", "#5c5f66"}

type plotRow struct {
	label, color string
	g            Group
}

// Plot draws each configuration's resolve rate with its 95% interval,
// overall and per category and language: one row per group and
// configuration, the numbers written beside each bar.
func Plot(reps []*Report) []byte {
	rows := plotRows(reps)
	labelW := plotLabelW
	for _, r := range rows {
		labelW = max(labelW, 20+int(float64(len([]rune(r.label)))*plotCharW))
	}
	w := labelW + plotBarW + plotTextW
	h := plotTop + len(rows)*plotRowH + 30
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="13">`+"\n", w, h, w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", w, h)
	fmt.Fprintf(&b, `<text x="10" y="22" font-size="15" font-weight="bold">%s</text>`+"\n", esc(plotTitle(reps)))
	b.WriteString(`<text x="10" y="40" fill="#555">bar: share of attempts resolved · line: 95% Wilson interval · n: attempts</text>` + "\n")
	bottom := plotTop + len(rows)*plotRowH
	for _, tick := range []int{0, 25, 50, 75, 100} {
		x := labelW + tick*plotBarW/100
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#ddd"/>`+"\n", x, plotTop-4, x, bottom)
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle" fill="#555">%d%%</text>`+"\n", x, bottom+16, tick)
	}
	for i, r := range rows {
		plotRowSVG(&b, r, labelW, plotTop+i*plotRowH)
	}
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

func plotTitle(reps []*Report) string {
	if len(reps) == 1 {
		return "Resolve rate: " + reps[0].Model
	}
	return "Resolve rate by configuration"
}

// plotRows lists the groups, each followed by every configuration's row.
func plotRows(reps []*Report) []plotRow {
	var names []string
	seen := map[string]bool{}
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	add("all")
	for _, r := range reps {
		for _, k := range sortedKeys(r.Summary.ByCategory) {
			add("category: " + k)
		}
	}
	for _, r := range reps {
		for _, k := range sortedKeys(r.Summary.ByLanguage) {
			add("language: " + k)
		}
	}
	var rows []plotRow
	for _, n := range names {
		for i, r := range reps {
			g, ok := groupOf(r.Summary, n)
			if !ok {
				continue
			}
			label := n
			if len(reps) > 1 {
				label = n + " · " + configName(reps, i)
			}
			rows = append(rows, plotRow{label: label, color: plotColors[i%len(plotColors)], g: g})
		}
	}
	return rows
}

// configName is the model, made unique when two reports share it.
func configName(reps []*Report, i int) string {
	name := reps[i].Model
	for j, r := range reps {
		if j != i && r.Model == name {
			return fmt.Sprintf("%s (%c)", name, 'A'+i)
		}
	}
	return name
}

func groupOf(s Summary, name string) (Group, bool) {
	if name == "all" {
		return s.Group, true
	}
	if k, ok := strings.CutPrefix(name, "category: "); ok {
		g, ok := s.ByCategory[k]
		return g, ok
	}
	k, _ := strings.CutPrefix(name, "language: ")
	g, ok := s.ByLanguage[k]
	return g, ok
}

func plotRowSVG(b *strings.Builder, r plotRow, x0, y int) {
	xr := func(v float64) float64 { return float64(x0) + v*plotBarW }
	mid := y + plotRowH/2
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="end" fill="%s">%s</text>`+"\n", x0-8, mid+4, r.color, esc(r.label))
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s" fill-opacity="0.35"/>`+"\n", x0, y+5, xr(r.g.Rate)-float64(x0), plotRowH-10, r.color)
	lo, hi := xr(r.g.Wilson95[0]), xr(r.g.Wilson95[1])
	fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="2"/>`+"\n", lo, mid, hi, mid, r.color)
	for _, x := range []float64{lo, hi} {
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="2"/>`+"\n", x, mid-5, x, mid+5, r.color)
	}
	fmt.Fprintf(b, `<circle cx="%.1f" cy="%d" r="3.5" fill="%s"/>`+"\n", xr(r.g.Rate), mid, r.color)
	fmt.Fprintf(b, `<text x="%d" y="%d">%s (%s) n=%d</text>`+"\n", x0+plotBarW+8, mid+4, pct(r.g.Rate), interval(r.g), r.g.Attempts)
}

var svgEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")

func esc(s string) string { return svgEscaper.Replace(s) }
