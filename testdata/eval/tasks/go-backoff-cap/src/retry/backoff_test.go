package retry

import "testing"

func TestBackoffDoubles(t *testing.T) {
	if Backoff(0) != Base || Backoff(1) != 2*Base || Backoff(3) != 8*Base {
		t.Fatal("Backoff does not double")
	}
	if Backoff(20) != Max {
		t.Fatalf("Backoff(20) = %v, want Max", Backoff(20))
	}
}
