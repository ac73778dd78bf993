package words

import "testing"

func TestCountSimple(t *testing.T) {
	if got := Count("the quick fox"); got != 3 {
		t.Errorf("Count(%q) = %d, want 3", "the quick fox", got)
	}
}
