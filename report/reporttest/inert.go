// Package reporttest checks rendered GitHub Markdown for anything live: a
// test of any package that renders or posts a body can hold it to the
// rule report keeps.
package reporttest

import (
	"fmt"
	htmlpkg "html"
	"regexp"
	"strings"
)

// Inert checks rendered Markdown by a rule stricter than GitHub's
// renderer: outside code (fenced blocks, and code spans found as
// CommonMark finds them), there is no image, link, link definition or raw
// HTML, and in the text a reader sees (backslash escapes and entities
// resolved, as GitHub's mention and reference filters see the HTML) no
// URL, mention, e-mail address or issue reference. allowed are exact
// pieces of the Markdown our templates write (the log link, a marker, the
// Closes line); each is cut out first, so nothing a value holds can pass
// as one of them unless it is that exact text.
func Inert(md string, allowed ...string) error {
	for _, a := range allowed {
		md = strings.ReplaceAll(md, a, " ")
	}
	var markup, seen string
	for _, block := range blocks(withoutFences(md)) {
		m, s := inline(block)
		if strings.HasPrefix(strings.TrimSpace(block), "<details>") {
			// An HTML block: no Markdown is read in it, only tags
			// and text, which GitHub's filters still see.
			m, s = "", htmlpkg.UnescapeString(block)
			if strings.Contains(stripTags(block), "<") {
				return fmt.Errorf("HTML is live in %q", block)
			}
		}
		markup, seen = markup+m+"\n", seen+s+"\n"
	}
	markup = stripTags(markup)
	for _, bad := range []string{"![", "](", "]:", "<"} {
		if i := strings.Index(markup, bad); i >= 0 {
			return fmt.Errorf("markup %q is live at %q", bad, excerpt(markup, i))
		}
	}
	for _, re := range []*regexp.Regexp{seenURL, seenMention, seenRef} {
		if loc := re.FindStringIndex(seen); loc != nil {
			return fmt.Errorf("%q is live at %q", seen[loc[0]:loc[1]], excerpt(seen, loc[0]))
		}
	}
	return nil
}

// stripTags cuts out the tags our templates write.
func stripTags(s string) string {
	for _, tag := range []string{"<details>", "</details>", "<summary>", "</summary>", "<sub>", "</sub>"} {
		s = strings.ReplaceAll(s, tag, " ")
	}
	return s
}

var (
	seenURL     = regexp.MustCompile(`(?i)(?:https?://|ftp://|www\.)`)
	seenMention = regexp.MustCompile(`@[A-Za-z0-9]`)
	seenRef     = regexp.MustCompile(`(?i)(?:#|\bgh-)[0-9]`)
	fenceRE     = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})")
)

func excerpt(s string, i int) string {
	return s[max(0, i-40):min(len(s), i+40)]
}

// withoutFences blanks the contents of fenced code blocks.
func withoutFences(md string) string {
	var out []string
	open := ""
	for _, line := range strings.Split(md, "\n") {
		m := fenceRE.FindStringSubmatch(line)
		switch {
		case open == "" && m != nil:
			open = m[1]
			out = append(out, "")
		case open != "":
			if m != nil && m[1][0] == open[0] && len(m[1]) >= len(open) && strings.TrimSpace(line) == m[1] {
				open = ""
			}
			out = append(out, "")
		default:
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// blocks splits Markdown where CommonMark ends an inline context (a code
// span cannot run past it): blank lines, and lines that start a table
// row, list item, quote or heading.
func blocks(md string) []string {
	var out []string
	cur := ""
	for _, line := range strings.Split(md, "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "|") || strings.HasPrefix(t, "- ") || strings.HasPrefix(t, ">") || strings.HasPrefix(t, "#") {
			out = append(out, cur)
			cur = ""
		}
		cur += line + "\n"
	}
	return append(out, cur)
}

// inline drops code spans and returns the Markdown that remains as
// markup (escaped characters and entities removed: they are literal)
// and as the text a reader sees (both resolved).
func inline(md string) (markup, seen string) {
	var m, s strings.Builder
	for i := 0; i < len(md); {
		c := md[i]
		switch {
		case c == '\\' && i+1 < len(md) && strings.IndexByte("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", md[i+1]) >= 0:
			m.WriteByte(' ')
			s.WriteByte(md[i+1])
			i += 2
		case c == '`':
			n := runAt(md, i)
			if j := closing(md[i+n:], n); j >= 0 {
				m.WriteByte(' ')
				s.WriteByte(' ')
				i += n + j + n
				continue
			}
			m.WriteString(md[i : i+n])
			s.WriteString(md[i : i+n])
			i += n
		case c == '&':
			if e := entityRE.FindString(md[i:]); e != "" {
				m.WriteByte(' ')
				s.WriteString(htmlpkg.UnescapeString(e))
				i += len(e)
				continue
			}
			fallthrough
		default:
			m.WriteByte(c)
			s.WriteByte(c)
			i++
		}
	}
	return m.String(), s.String()
}

var entityRE = regexp.MustCompile(`^&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});`)

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
