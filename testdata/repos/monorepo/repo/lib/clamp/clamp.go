// Package clamp limits numbers to a range.
package clamp

// Int returns v limited to [lo, hi].
func Int(v, lo, hi int) int {
	if v < lo {
		return lo
	}
	if v > hi {
		return lo
	}
	return v
}
