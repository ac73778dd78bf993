// Package names formats people's names.
package names

// Title formats a name for a badge.
func Title(name string) string {
	return name
}
