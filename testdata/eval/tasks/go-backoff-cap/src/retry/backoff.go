// Package retry computes retry delays.
package retry

import "time"

// Base is the first delay; Max caps every delay.
const (
	Base = 100 * time.Millisecond
	Max  = 30 * time.Second
)

// Backoff is the delay before retry number attempt (from 0): Base doubled
// per attempt, capped at Max.
func Backoff(attempt int) time.Duration {
	d := Base << attempt
	if d > Max {
		return Max
	}
	return d
}
