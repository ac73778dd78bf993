package report

import (
	"fmt"
	"strings"

	"github.com/patchwright/patchwright/verify"
)

// A fact is one sentence the report states, kept as Patchwright's own
// words (string) and the values they quote, apart until it is rendered.
// A value from the change, the model, the configuration or a runner is
// never a string here, so it cannot reach the Markdown unescaped.
type fact []any

// The kinds of quoted value in a fact.
type (
	// value is a name, path, command, version or rule: rendered as code.
	value string
	// text is prose someone else wrote (a runner's reason, the model's
	// words): rendered as escaped text.
	text string
	// spanned is prose another package wrote around backtick code spans
	// (a finding's detail, a detection sentence): rendered by spans.
	spanned string
)

// say builds a fact; a fact among the parts is spliced in.
func say(parts ...any) fact {
	var f fact
	for _, p := range parts {
		if sub, ok := p.(fact); ok {
			f = append(f, sub...)
			continue
		}
		f = append(f, p)
	}
	return f
}

// markdown renders the fact for GitHub: each value as code or escaped.
func (f fact) markdown() string {
	var b strings.Builder
	for _, p := range f {
		switch p := p.(type) {
		case string:
			b.WriteString(p)
		case value:
			b.WriteString(code(string(p)))
		case text:
			b.WriteString(plain(string(p)))
		case spanned:
			b.WriteString(spans(string(p)))
		default:
			panic(fmt.Sprintf("report: a fact part of type %T", p))
		}
	}
	return b.String()
}

// plain renders the fact as one line of text without Markdown, for
// result.json: values in backticks, as they were.
func (f fact) plain() string {
	var b strings.Builder
	for _, p := range f {
		switch p := p.(type) {
		case string:
			b.WriteString(p)
		case value:
			b.WriteString("`" + oneLine(string(p)) + "`")
		case text:
			b.WriteString(oneLine(string(p)))
		case spanned:
			b.WriteString(oneLine(string(p)))
		default:
			panic(fmt.Sprintf("report: a fact part of type %T", p))
		}
	}
	return b.String()
}

// failFact describes a failed run: "exit 1", "timed out", and the
// failing tests when known.
func failFact(c verify.CheckResult) fact {
	var f fact
	switch {
	case c.TimedOut:
		f = say("timed out")
	case c.OOMKilled:
		f = say("out of memory")
	default:
		f = say(c.ExitText())
	}
	var names []string
	switch {
	case c.GoTests() != nil:
		names = c.GoTests().FailedTestNames()
	case c.Summary != nil:
		names = c.Summary.FailedTests
	}
	switch {
	case len(names) > 0:
		f = append(f, ": ")
		for i, n := range names[:min(3, len(names))] {
			if i > 0 {
				f = append(f, ", ")
			}
			f = append(f, value(n))
		}
		if len(names) > 3 {
			f = append(f, fmt.Sprintf(" and %d more", len(names)-3))
		}
	case c.GoTests() != nil && len(c.GoTests().PackagesBuildFailed) > 0:
		f = append(f, ": tests did not compile")
	}
	return f
}
