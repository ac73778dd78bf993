package report

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
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

var (
	closingRE = regexp.MustCompile(`(?i)\b(close[sd]?|fix(?:e[sd])?|resolve[sd]?)(\s*:?\s+)((?:[\w.-]+/[\w.-]+)?)#`)
	mentionRE = regexp.MustCompile(`(^|[^\w&])@([A-Za-z0-9])`)
	headingRE = regexp.MustCompile(`^(\s{0,3})(#|=+\s*$|-{2,}\s*$|_{3,}\s*$|\*{3,}\s*$|>)`)
)

// urlRE finds what GitHub would turn into a link.
var urlRE = regexp.MustCompile(`(?i)\b(?:https?://|www\.)[^\s<>()\[\]` + "`" + `]+`)

// prose renders untrusted Markdown prose (the model's summary) so it keeps
// emphasis, lists and code spans but cannot produce HTML, headings,
// rules, quotes that look like ours, mentions, closing keywords, images or
// links: GitHub fetches the images of a rendered body, which would carry
// data out of a sandbox that has no network, so square brackets are
// escaped and every URL is shown as code.
func prose(s string) string {
	s = clean(s)
	// NULs cannot survive clean, so they mark where each URL goes back.
	var urls []string
	s = urlRE.ReplaceAllStringFunc(s, func(u string) string {
		urls = append(urls, u)
		return "\x00"
	})
	s = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "[", `\[`, "]", `\]`).Replace(s)
	for _, u := range urls {
		s = strings.Replace(s, "\x00", code(u), 1)
	}
	s = closingRE.ReplaceAllString(s, "$1$2$3&#35;")
	s = mentionRE.ReplaceAllString(s, "$1&#64;$2")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if m := headingRE.FindStringSubmatchIndex(l); m != nil {
			lines[i] = l[:m[3]] + `\` + l[m[3]:]
		}
	}
	return strings.Join(lines, "\n")
}

// item renders one list item that the pipeline wrote but that may quote
// repository text (a path, a test name): it keeps code spans and emphasis
// but stays on one line and cannot produce HTML, mentions or closing
// keywords.
func item(s string) string {
	s = strings.Join(strings.Fields(clean(s)), " ")
	s = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
	s = closingRE.ReplaceAllString(s, "$1$2$3&#35;")
	return mentionRE.ReplaceAllString(s, "$1&#64;$2")
}

// plain renders untrusted text for a place where Markdown is not wanted
// (a <summary>, a sentence): HTML and Markdown punctuation are escaped.
func plain(s string) string {
	s = strings.Join(strings.Fields(clean(s)), " ")
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '\\', '`', '*', '_', '[', ']', '#', '|', '~', '!', '@':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// html escapes text for an HTML element such as <summary>, where
// Markdown escapes would show literally.
func html(s string) string {
	s = strings.Join(strings.Fields(clean(s)), " ")
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

// truncate keeps at most n bytes of s, cut at a rune boundary, and says how
// much was dropped.
func truncate(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}

// tail keeps the last n bytes of s, starting at a line when one is near.
func tail(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	s = s[len(s)-n:]
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < 200 {
		s = s[i+1:]
	}
	for len(s) > 0 && !utf8.RuneStart(s[0]) {
		s = s[1:]
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

var markerRE = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

// markerValue keeps a value fit for a hidden marker comment: it cannot
// end the comment or smuggle in another marker.
func markerValue(s string) string {
	s = markerRE.ReplaceAllString(s, "_")
	if s == "" {
		return "unknown"
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
