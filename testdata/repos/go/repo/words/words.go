// Package words counts words.
package words

import "strings"

// Count returns the number of words in s: runs of characters between
// spaces.
func Count(s string) int {
	return len(strings.Split(s, " "))
}
