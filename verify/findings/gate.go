package findings

import (
	"fmt"
	"strings"
)

// ecosystems maps a Dependency's What to the GitHub advisory database's
// ecosystem name.
var ecosystems = map[string]string{
	"Go module":         "go",
	"npm package":       "npm",
	"Python package":    "pip",
	"crate":             "rust",
	"Maven artifact":    "maven",
	"Gradle dependency": "maven",
	"gem":               "rubygems",
	"Composer package":  "composer",
}

// AdvisoryQuery is what the GitHub advisory database is asked about one
// dependency: its ecosystem and "name@version" (the API's `affects`).
type AdvisoryQuery struct {
	Ecosystem, Name, Version string
}

// Affects is the query's `affects` value; the version alone when the
// dependency has none (a range or a bare name matches every version).
func (q AdvisoryQuery) Affects() string {
	if q.Version == "" {
		return q.Name
	}
	return q.Name + "@" + q.Version
}

// QueryOf is the advisory query for a dependency; ok is false when its
// ecosystem is not one the database knows, or it is not a package at all
// (a go.mod replace or tool line, whose name or version has a space).
func QueryOf(d Dependency) (AdvisoryQuery, bool) {
	eco, ok := ecosystems[d.What]
	v := strings.TrimSpace(d.Version)
	if !ok || d.Name == "" || strings.ContainsAny(d.Name+v, " \t") {
		return AdvisoryQuery{}, false
	}
	switch eco {
	case "go":
		// The database writes Go versions without the "v".
		v = strings.TrimPrefix(v, "v")
	default:
		// "=1.2.3" (npm, Cargo, Composer) and "==1.2.3" (pip) are one
		// version; the database wants it bare.
		v = strings.TrimSpace(strings.TrimLeft(v, "="))
	}
	return AdvisoryQuery{Ecosystem: eco, Name: d.Name, Version: v}, true
}

// KnownAdvisory is one advisory the database returned for a dependency.
type KnownAdvisory struct {
	ID       string
	Severity string
	Summary  string
	// URL is the advisory's page; "" when the database gave none.
	URL string
}

// AdvisoryFinding is the finding for a dependency with a known advisory:
// Advisory (blocks) for high or critical severity, AdvisoryLow otherwise.
func AdvisoryFinding(d Dependency, a KnownAdvisory) Finding {
	kind := AdvisoryLow
	sev := strings.ToLower(a.Severity)
	if sev == "high" || sev == "critical" {
		kind = Advisory
	}
	if sev == "" {
		sev = "unknown"
	}
	detail := fmt.Sprintf("The %s `%s` %s has a known %s-severity advisory, %s: %s",
		d.What, d.Name, orNone(d.Version), sev, a.ID, cut(strings.Join(strings.Fields(a.Summary), " "), 200))
	return Finding{Kind: kind, Path: d.Path, Line: d.Line, Detail: detail}
}

// ReviewDiff renders the change for a review model: each file's changed
// lines with their line numbers in the new file (old for a removed
// line), three lines of context, up to max bytes; cut says it did not
// all fit. Binary and unread files are named only.
func ReviewDiff(files []File, max int) (diff string, cut bool) {
	var b strings.Builder
	for _, f := range files {
		var part strings.Builder
		fmt.Fprintf(&part, "=== %s\n", f.Path)
		switch {
		case f.Unread || isBinary(f.Base) || isBinary(f.New):
			part.WriteString("(binary or too large; not shown)\n")
		case f.New == nil:
			part.WriteString("(deleted)\n")
		default:
			writeHunks(&part, lineDiff(string(f.Base), string(f.New)))
		}
		if b.Len()+part.Len() > max {
			return b.String(), true
		}
		b.WriteString(part.String())
	}
	return b.String(), false
}

// writeHunks writes the changed lines of ops with three lines of
// context, "@@" between hunks.
func writeHunks(b *strings.Builder, ops []lineOp) {
	const context = 3
	last := -1
	for i, op := range ops {
		if !near(ops, i, context) {
			continue
		}
		if last >= 0 && i > last+1 {
			b.WriteString("@@\n")
		}
		last = i
		line := op.NewLine
		if op.Op == '-' {
			line = op.OldLine
		}
		sign := map[byte]string{'=': " ", '-': "-", '+': "+"}[op.Op]
		fmt.Fprintf(b, "%s%5d| %s\n", sign, line, op.Text)
	}
}

// near reports whether ops[i] is a change or within n lines of one.
func near(ops []lineOp, i, n int) bool {
	for j := max(i-n, 0); j <= min(i+n, len(ops)-1); j++ {
		if ops[j].Op != '=' {
			return true
		}
	}
	return false
}
