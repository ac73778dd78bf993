// Package handler serves pages of results.
package handler

import "example.com/mono/lib/clamp"

// PageSize is the number of results per page asked for, limited to 1..100.
func PageSize(asked int) int {
	return clamp.Int(asked, 1, 100)
}
