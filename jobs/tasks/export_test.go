package tasks

import "time"

// SetNow sets the clock of HeaderEnqueuedAt for a test and returns what
// puts it back.
func SetNow(f func() time.Time) (restore func()) {
	now = f
	return func() { now = time.Now }
}
