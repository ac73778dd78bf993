// Package text cuts text for people and models: to one line, to a head, a
// tail or both ends of at most n bytes. Every cut falls on a rune
// boundary, so valid UTF-8 stays valid. It imports nothing of ours.
package text

import (
	"strings"
	"unicode/utf8"
)

// Line puts s on one line: every run of white space, line breaks
// included, becomes one space, and none is left at either end.
func Line(s string) string { return strings.Join(strings.Fields(s), " ") }

// Head returns the longest prefix of s of at most n bytes that ends at a
// rune boundary; "" when n <= 0.
func Head(s string, n int) string {
	if n >= len(s) {
		return s
	}
	if n <= 0 {
		return ""
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Tail returns the longest suffix of s of at most n bytes that starts at
// a rune boundary; "" when n <= 0.
func Tail(s string, n int) string {
	if n >= len(s) {
		return s
	}
	if n <= 0 {
		return ""
	}
	start := len(s) - n
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	return s[start:]
}

// Middle keeps both ends of s within n bytes, half each (the head gets
// the odd byte): the start of an output says what ran, the end how it
// ended. dropped is the number of bytes between them; 0 when s fits.
func Middle(s string, n int) (head, tail string, dropped int) {
	if n >= len(s) {
		return s, "", 0
	}
	head = Head(s, n-n/2)
	tail = Tail(s, n/2)
	return head, tail, len(s) - len(head) - len(tail)
}
