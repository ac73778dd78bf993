package clamp

import "testing"

func TestIntInside(t *testing.T) {
	if got := Int(5, 0, 10); got != 5 {
		t.Errorf("Int(5, 0, 10) = %d, want 5", got)
	}
}

func TestIntBelow(t *testing.T) {
	if got := Int(-3, 0, 10); got != 0 {
		t.Errorf("Int(-3, 0, 10) = %d, want 0", got)
	}
}
