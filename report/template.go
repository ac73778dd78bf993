package report

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/patchwright/patchwright/verify"
)

// Template is the repository's pull-request template, read from the
// default branch as trusted configuration is (never from the agent
// branch). The body then follows its headings: those that match a section
// of ours are filled from the recorded facts, checklist items are checked
// only where a recorded check backs them, and the rest are left for the
// reviewer, saying so. The contract sections the template does not name
// follow it, Not verified and Run always.
type Template struct {
	// Path is where it was found, for the note that names it.
	Path string
	Text string
}

// MaxTemplateBytes bounds a template that is followed; a larger one is
// ignored (Template.Usable).
const MaxTemplateBytes = 16 << 10

// TemplatePaths are where GitHub looks for a pull-request template, in
// the order Patchwright takes the first found: file names match without
// regard to case, and of a PULL_REQUEST_TEMPLATE folder the first .md file
// by name is taken (GitHub lets the author pick one by a query parameter;
// an app cannot).
var TemplatePaths = []string{
	".github/pull_request_template.md",
	".github/PULL_REQUEST_TEMPLATE/*.md",
	"docs/pull_request_template.md",
	"pull_request_template.md",
}

// Usable reports whether the template is followed: it has a heading and
// fits MaxTemplateBytes.
func (t Template) Usable() bool {
	if t.Text == "" || len(t.Text) > MaxTemplateBytes {
		return false
	}
	_, secs := sections(t.Text, 6)
	return len(secs) > 0
}

// section is a heading and the lines under it up to the next heading of
// the levels split on.
type section struct {
	heading string // the heading's text, without the #s
	line    string // the heading line as written
	body    []string
}

var atxHeadingRE = regexp.MustCompile(`^(#{1,6})[ \t]+(.*?)[ \t#]*$`)

// sections splits Markdown at ATX headings of level maxLevel or higher
// (fewer #s), outside fenced code blocks and HTML comments.
func sections(md string, maxLevel int) (pre []string, out []section) {
	fence, comment := "", false
	for _, line := range strings.Split(strings.ReplaceAll(md, "\r\n", "\n"), "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case fence != "":
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]) == "" {
				fence = ""
			}
		case comment:
			comment = !strings.Contains(line, "-->")
		case strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~"):
			fence = trimmed[:3]
			for _, c := range trimmed[3:] {
				if byte(c) != fence[0] {
					break
				}
				fence += string(c)
			}
		case strings.Contains(line, "<!--") && !strings.Contains(line[strings.Index(line, "<!--"):], "-->"):
			comment = true
		default:
			if m := atxHeadingRE.FindStringSubmatch(line); m != nil && len(m[1]) <= maxLevel {
				out = append(out, section{heading: m[2], line: line})
				continue
			}
		}
		if len(out) == 0 {
			pre = append(pre, line)
		} else {
			out[len(out)-1].body = append(out[len(out)-1].body, line)
		}
	}
	return pre, out
}

// Our sections, by the words of a template heading that ask for them.
var sectionWords = []struct {
	ours  string
	words *regexp.Regexp
}{
	{"Summary", regexp.MustCompile(`(?i)\b(summary|description|describe|overview|what (does|is) this|what and why|purpose)\b`)},
	{"Changes", regexp.MustCompile(`(?i)\b(changes|what changed|changed files|files changed)\b`)},
	{"Verification", regexp.MustCompile(`(?i)\b(test(s|ing|ed)?|test plan|verif\w*|how (has|was|to) (this been |it been )?test\w*|qa)\b`)},
	{"Issue", regexp.MustCompile(`(?i)\b(related issues?|issues?|fixes|closes|ticket)\b`)},
}

var (
	checkboxRE = regexp.MustCompile(`^(\s*[-*+]\s+)\[[ xX]\](\s+.*)$`)
	commentRE  = regexp.MustCompile(`(?s)<!--.*?-->`)
)

// applyTemplate lays the rendered body out by the template's headings.
func applyTemplate(body string, in Input) string {
	pre, ours := sections(body, 2)
	own := map[string]section{}
	for _, s := range ours {
		own[s.heading] = s
	}
	used := map[string]bool{}
	var b strings.Builder
	for _, l := range pre {
		b.WriteString(l + "\n")
	}
	fmt.Fprintf(&b, "> This body follows the repository's pull-request template (%s). Sections and checklist items that Patchwright has no recorded fact for are left for the reviewer.\n\n", code(in.Template.Path))
	_, tmpl := sections(in.Template.Text, 6)
	for _, t := range tmpl {
		heading := strings.TrimSpace(commentRE.ReplaceAllString(t.line, ""))
		if strings.Contains(heading, "patchwright:") {
			continue // nothing may forge a marker
		}
		b.WriteString(heading + "\n")
		b.WriteString(fillSection(t, in, own, used))
	}
	for _, s := range ours {
		if used[s.heading] {
			continue
		}
		b.WriteString(s.line + "\n")
		for _, l := range s.body {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// fillSection is the content under one of the template's headings.
func fillSection(t section, in Input, own map[string]section, used map[string]bool) string {
	boxes := checklist(t.body, in)
	for _, w := range sectionWords {
		if !w.words.MatchString(t.heading) {
			continue
		}
		if w.ours == "Issue" {
			if in.Issue > 0 {
				return fmt.Sprintf("\nCloses #%d\n%s\n", in.Issue, boxes)
			}
			break
		}
		if s, ok := own[w.ours]; ok && !used[w.ours] {
			used[w.ours] = true
			return strings.TrimRight(strings.Join(s.body, "\n"), "\n") + "\n" + boxes + "\n"
		}
	}
	if boxes != "" {
		return boxes + "\n"
	}
	return "\n*Left for the reviewer: Patchwright recorded nothing that answers this section.*\n\n"
}

// checklist renders the template's checklist items of a section: checked
// only where a recorded check backs the item, unchecked otherwise (a box
// the template had checked included), then a line that says so. "" when
// the section has no checklist.
func checklist(lines []string, in Input) string {
	var items []string
	for _, l := range lines {
		m := checkboxRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		mark := " "
		if backedItem(m[2], in) {
			mark = "x"
		}
		items = append(items, m[1]+"["+mark+"]"+m[2])
	}
	if len(items) == 0 {
		return ""
	}
	return "\n" + strings.Join(items, "\n") + "\n\n*Checked only where a check Patchwright ran shows it; the unchecked items are for the reviewer.*\n"
}

var (
	itemNewTest = regexp.MustCompile(`(?i)\b(added|adds|add|wrote|written)\b.*\btests?\b|\btests?\b.*\b(added|written)\b`)
	itemTests   = regexp.MustCompile(`(?i)\btests?\b.*\b(pass(es|ed|ing)?|green|succeed\w*)\b|\b(pass(es)?|run)\b.*\btests?\b`)
	itemLint    = regexp.MustCompile(`(?i)\blint\w*\b`)
	itemBuild   = regexp.MustCompile(`(?i)\b(builds?|compiles?)\b`)
)

// backedItem reports whether a checklist item states only what the
// recorded final checks show. Anything else (docs updated, self-review,
// changelog, breaking changes) is for a person.
func backedItem(item string, in Input) bool {
	switch {
	case itemNewTest.MatchString(item):
		return slices.ContainsFunc(in.NewTests, func(t verify.NewTestResult) bool { return t.Status == verify.FailsBefore }) && finalTestsPassed(in.Final)
	case itemLint.MatchString(item):
		return allPassed(in.Final, func(c verify.CheckResult) bool { return c.Role() == verify.RoleLint })
	case itemTests.MatchString(item):
		return allPassed(in.Final, func(c verify.CheckResult) bool { return backs(c, claimTests) })
	case itemBuild.MatchString(item):
		return allPassed(in.Final, func(c verify.CheckResult) bool { return backs(c, claimBuild) })
	}
	return false
}

// allPassed: at least one final check of the kind ran, and every one
// passed.
func allPassed(final []verify.CheckResult, kind func(verify.CheckResult) bool) bool {
	n := 0
	for _, c := range final {
		if !kind(c) {
			continue
		}
		if !c.Passed {
			return false
		}
		n++
	}
	return n > 0
}
