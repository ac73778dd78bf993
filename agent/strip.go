package agent

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Output the model reads is data (issue 40): a test suite, a build or a
// CI log can carry instructions hidden from people by terminal escapes
// (concealed, overwritten, put in a window title) or by characters that
// render as nothing. Strip is the one rule for what of such text
// reaches the model; Sanitize (prompt text) and every tool result
// (callTool) go through it.

// Strip returns s with what a person reading it would not see removed:
//   - terminal escape sequences (ECMA-48: CSI such as colours and cursor
//     moves, two- and three-byte ESC sequences), and whole control
//     strings (OSC such as window titles and hyperlink targets, DCS, SOS,
//     PM, APC), whose text a terminal never shows; from an unterminated
//     control string only its introducer goes, so nothing is hidden;
//   - every other C0 and C1 control character but newline and tab; a
//     carriage return becomes a newline (a bare one would let later text
//     overwrite earlier text on a terminal);
//   - invisible and bidirectional format characters (invisible), and
//     bytes that are not UTF-8.
//
// Text concealed by a colour code stays: once the code is gone it is
// plain text, shown to people on the run page as to the model. Strip is
// idempotent and never makes its input longer.
func Strip(s string) string {
	if plain(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	unterminated := len(s) + 1 // where a control string was found to have no end
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			i += n // not UTF-8
		case r == '\r':
			b.WriteByte('\n')
			i += n
			if i < len(s) && s[i] == '\n' {
				i++
			}
		case r == 0x1b || (r >= 0x80 && r <= 0x9f):
			i = skipEscape(s, i, n, &unterminated)
		case invisible(r):
			i += n
		default:
			b.WriteString(s[i : i+n])
			i += n
		}
	}
	return b.String()
}

// plain reports whether s is printable ASCII, newlines and tabs only:
// most output is, and is returned as it is.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\n' && c != '\t') || c >= 0x7f {
			return false
		}
	}
	return true
}

// skipEscape returns where the escape sequence or C1 control starting
// at s[i] (n bytes long) ends. unterminated is the least position from
// which no string terminator follows, so that many unterminated control
// strings cost one search, not one each.
func skipEscape(s string, i, n int, unterminated *int) int {
	kind := rune(0)
	if s[i] == 0x1b {
		if i+1 >= len(s) {
			return i + 1
		}
		c := s[i+1]
		switch {
		case c == '[':
			kind = 0x9b
		case c == ']', c == 'P', c == 'X', c == '^', c == '_':
			kind = 0x9d // a control string; which one does not matter
		case c >= 0x20 && c <= 0x2f:
			// Intermediate bytes, then a final byte (ESC ( B).
			j := i + 1
			for j < len(s) && s[j] >= 0x20 && s[j] <= 0x2f {
				j++
			}
			if j < len(s) && s[j] >= 0x30 && s[j] <= 0x7e {
				j++
			}
			return j
		case c >= 0x30 && c <= 0x7e:
			return i + 2 // ESC 7, ESC c, ESC M …
		default:
			return i + 1
		}
		n = 2
	} else {
		kind, _ = utf8.DecodeRuneInString(s[i:])
	}
	switch kind {
	case 0x9b: // CSI: parameter and intermediate bytes, then a final byte
		j := i + n
		for j < len(s) && s[j] >= 0x20 && s[j] <= 0x3f {
			j++
		}
		if j < len(s) && s[j] >= 0x40 && s[j] <= 0x7e {
			j++
		}
		return j
	case 0x90, 0x98, 0x9d, 0x9e, 0x9f: // DCS, SOS, OSC, PM, APC
		if end := stringEnd(s, i+n, unterminated); end >= 0 {
			return end
		}
	}
	return i + n
}

// stringEnd returns the position after the terminator (BEL, ESC \ or ST)
// of a control string whose text starts at from, or -1 when none follows.
func stringEnd(s string, from int, unterminated *int) int {
	if from >= *unterminated {
		return -1
	}
	for j := from; j < len(s); j++ {
		switch {
		case s[j] == 0x07:
			return j + 1
		case s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\':
			return j + 2
		case s[j] == 0xc2 && j+1 < len(s) && s[j+1] == 0x9c: // U+009C ST
			return j + 2
		}
	}
	*unterminated = from
	return -1
}

// invisible matches what renders as nothing but still reaches the model:
// zero-width and bidi controls, the tag characters and other format
// characters (Unicode Cf), the line and paragraph separators, variation
// selectors, control characters other than tab and newline, and the
// replacement character.
func invisible(r rune) bool {
	if r == '\n' || r == '\t' {
		return false
	}
	return unicode.Is(unicode.Cf, r) || unicode.IsControl(r) || r == '\u2028' || r == '\u2029' ||
		(r >= 0xE0000 && r <= 0xE007F) || unicode.Is(unicode.Variation_Selector, r) || r == unicode.ReplacementChar
}
