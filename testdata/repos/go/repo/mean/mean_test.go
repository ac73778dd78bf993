package mean

import "testing"

func TestOf(t *testing.T) {
	if got := Of([]float64{1, 2, 3, 6}); got != 3 {
		t.Errorf("Of(1, 2, 3, 6) = %v, want 3", got)
	}
}

func TestOfNone(t *testing.T) {
	if got := Of(nil); got != 0 {
		t.Errorf("Of(nil) = %v, want 0", got)
	}
}
