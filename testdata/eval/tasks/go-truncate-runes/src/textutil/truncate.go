// Package textutil holds small string helpers.
package textutil

// Truncate returns the first n characters of s, or s when it is shorter.
func Truncate(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	return s[:n]
}
