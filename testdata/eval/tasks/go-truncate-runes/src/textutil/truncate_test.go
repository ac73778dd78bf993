package textutil

import "testing"

func TestTruncateASCII(t *testing.T) {
	if got := Truncate("hello", 3); got != "hel" {
		t.Fatalf("Truncate = %q", got)
	}
	if got := Truncate("hi", 5); got != "hi" {
		t.Fatalf("Truncate = %q", got)
	}
}
