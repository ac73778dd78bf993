package retry

import "testing"

func TestHiddenBackoffNeverOverflows(t *testing.T) {
	for _, attempt := range []int{8, 9, 35, 40, 63, 64, 100, 1 << 20} {
		d := Backoff(attempt)
		if d <= 0 || d > Max {
			t.Errorf("Backoff(%d) = %v, want within (0, %v]", attempt, d, Max)
		}
	}
	if Backoff(64) != Max {
		t.Errorf("Backoff(64) = %v, want Max", Backoff(64))
	}
}
