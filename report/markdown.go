package report

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	textcut "github.com/patchwright/patchwright/internal/text"
)

// Everything in this file makes untrusted text (model output, tool
// output, file and check names from the repository) safe to place in
// GitHub Markdown: it cannot open a heading, close a <details>, forge a
// Patchwright marker, ping people or close other issues.

// longestRun returns the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	best, cur := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			cur++
			best = max(best, cur)
		} else {
			cur = 0
		}
	}
	return best
}

// clean drops carriage returns, NULs and other control characters but
// newlines and tabs, and invalid UTF-8.
func clean(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return -1
		case r == '\u202e' || r == '\u202d' || r == '\u2066' || r == '\u2067' || r == '\u2068' || r == '\u2069':
			return -1 // bidi overrides could disguise text
		}
		return r
	}, s)
}

// code renders s as an inline code span on one line, with a backtick
// fence longer than any run inside it.
func code(s string) string {
	s = strings.Join(strings.Fields(clean(s)), " ")
	if s == "" {
		return "` `"
	}
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// cell renders s as a code span fit for a table cell: GitHub splits cells
// on every unescaped pipe, even inside code spans.
func cell(s string) string {
	return strings.ReplaceAll(code(s), "|", `\|`)
}

// fenced renders s as a fenced code block whose fence is longer than any
// backtick run inside, so nothing in s can end it early.
func fenced(s string) string {
	s = strings.TrimRight(clean(s), "\n")
	fence := strings.Repeat("`", max(3, longestRun(s, '`')+1))
	return fence + "text\n" + s + "\n" + fence
}

var headingRE = regexp.MustCompile(`^(\s{0,3})(#|=+\s*$|-{2,}\s*$|_{3,}\s*$|\*{3,}\s*$|>)`)

// urlRE finds what GitHub would turn into a link.
var urlRE = regexp.MustCompile(`(?i)\b(?:https?://|ftp://|www\.)[^\s<>()\[\]` + "`" + `]+`)

// zwsp is a zero-width space. After "@" or "#" it keeps GitHub from
// reading a mention, a team, an e-mail address or an issue reference (and
// so a closing keyword) in rendered text. Backslash escapes and entities
// do not: GitHub looks for mentions and references in the HTML that the
// Markdown became, where both are plain "@" and "#" again.
const zwsp = "\u200b"

var (
	atRE  = regexp.MustCompile(`@([A-Za-z0-9])`)
	refRE = regexp.MustCompile(`(#|(?i:\bgh-))([0-9])`)
)

// defuse breaks every mention and issue reference in rendered text.
func defuse(s string) string {
	s = atRE.ReplaceAllString(s, "@"+zwsp+"$1")
	return refRE.ReplaceAllString(s, "$1"+zwsp+"$2")
}

// prose renders untrusted Markdown prose (the model's summary) so it keeps
// emphasis, lists and code spans but cannot produce HTML, headings,
// rules, quotes that look like ours, mentions, issue references, images
// or links: GitHub fetches the images of a rendered body, which would
// carry data out of a sandbox that has no network, so square brackets are
// escaped and every URL is broken. A URL is not made a code span: the
// model's own backticks could pair with its fence and free the URL.
func prose(s string) string {
	s = clean(s)
	s = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "[", `\[`, "]", `\]`).Replace(s)
	s = defuse(urlRE.ReplaceAllStringFunc(s, breakURL))
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if m := headingRE.FindStringSubmatchIndex(l); m != nil {
			lines[i] = l[:m[3]] + `\` + l[m[3]:]
		}
	}
	return strings.Join(lines, "\n")
}

// oneLine is s cleaned, with every run of white space made one space.
func oneLine(s string) string { return textcut.Line(clean(s)) }

// plain renders untrusted text as one line of inert text, for a sentence
// or a table cell: HTML and Markdown punctuation are escaped, URLs are
// code, mentions and references are broken.
func plain(s string) string { return escapeLine(oneLine(s)) }

// escapeLine is plain without the white-space folding, so that the parts
// of a line can be escaped one by one.
func escapeLine(s string) string {
	var b strings.Builder
	last := 0
	for _, m := range urlRE.FindAllStringIndex(s, -1) {
		b.WriteString(escapeText(s[last:m[0]]))
		b.WriteString(code(s[m[0]:m[1]]))
		last = m[1]
	}
	b.WriteString(escapeText(s[last:]))
	return b.String()
}

func escapeText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '\\', '`', '*', '_', '[', ']', '#', '|', '~', '!':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return defuse(b.String())
}

// spans renders one line of prose that another package wrote around
// backtick code spans (a finding's detail, a detection sentence, a
// reason): each code span through code, the rest through plain. The text
// is untrusted as a whole, and whatever the split, every byte of it goes
// through one of the two; a backtick without its pair is text.
func spans(s string) string {
	s = oneLine(s)
	var b strings.Builder
	for s != "" {
		i := strings.IndexByte(s, '`')
		if i < 0 {
			b.WriteString(escapeLine(s))
			break
		}
		n := runAt(s, i)
		j := closing(s[i+n:], n)
		if j < 0 {
			b.WriteString(escapeLine(s[:i+n]))
			s = s[i+n:]
			continue
		}
		b.WriteString(escapeLine(s[:i]))
		b.WriteString(code(s[i+n : i+n+j]))
		s = s[i+n+j+n:]
	}
	return b.String()
}

// runAt is the length of the run of backticks starting at s[i].
func runAt(s string, i int) int {
	n := 0
	for i+n < len(s) && s[i+n] == '`' {
		n++
	}
	return n
}

// closing finds a run of exactly n backticks in s, as CommonMark closes a
// code span; -1 when there is none.
func closing(s string, n int) int {
	for i := 0; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		m := runAt(s, i)
		if m == n {
			return i
		}
		i += m
	}
	return -1
}

// html escapes text for an HTML element such as <summary>, where
// Markdown escapes would show literally.
func html(s string) string {
	s = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(oneLine(s))
	// Markdown is not read inside an HTML block, but a URL is broken
	// too, so no renderer's linker finds one.
	return defuse(urlRE.ReplaceAllStringFunc(s, breakURL))
}

// breakURL puts a zero-width space into a URL's scheme separator (or
// after "www"), so that no linker finds it, in code or out of it.
func breakURL(u string) string {
	if i := strings.Index(u, "://"); i >= 0 {
		return u[:i+1] + zwsp + u[i+1:]
	}
	return u[:3] + zwsp + u[3:]
}

// truncate keeps at most n bytes of s, cut at a rune boundary, and says how
// much was dropped.
func truncate(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	return textcut.Head(s, n), true
}

// tail keeps the last n bytes of s, starting at a line when one is near.
func tail(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	s = textcut.Tail(s, n)
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < 200 {
		s = s[i+1:]
	}
	return s, true
}

// safeURL returns u if it is an absolute http(s) URL that cannot break a
// Markdown link, else "".
func safeURL(u string) string {
	p, err := url.Parse(strings.TrimSpace(u))
	if err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" {
		return ""
	}
	s := p.String()
	if strings.ContainsAny(s, " ()<>\"'`\n") {
		return ""
	}
	return s
}

// duration renders a time span the way people read it: "850 ms",
// "2.1 s", "3 min 12 s".
func duration(d time.Duration) string {
	switch {
	case d <= 0:
		return "—"
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1f s", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%d min %d s", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%d h %d min", int(d.Hours()), int(d.Minutes())%60)
}

// thousands renders n with comma separators: 41,200.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
