package version

import "testing"

func TestLess(t *testing.T) {
	if !Less("1.2", "1.10") {
		t.Error(`Less("1.2", "1.10") = false`)
	}
	if Less("2.0", "1.9") {
		t.Error(`Less("2.0", "1.9") = true`)
	}
}
