package handler

import "testing"

func TestPageSize(t *testing.T) {
	if got := PageSize(20); got != 20 {
		t.Errorf("PageSize(20) = %d, want 20", got)
	}
	if got := PageSize(0); got != 1 {
		t.Errorf("PageSize(0) = %d, want 1", got)
	}
}
