// Package csvline splits single lines of the export format.
package csvline

import "strings"

// Split returns the comma-separated fields of line.
func Split(line string) []string {
	return strings.Split(line, ",")
}
