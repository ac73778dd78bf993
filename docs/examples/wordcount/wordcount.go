// Package wordcount counts words in text.
package wordcount

import "strings"

// Count returns the number of words in s. Words are separated by runs of
// white space, so leading, trailing and repeated spaces do not count.
func Count(s string) int {
	if s == "" {
		return 0
	}
	return len(strings.Split(s, " "))
}
