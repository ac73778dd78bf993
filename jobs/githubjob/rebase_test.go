package githubjob

import (
	"slices"
	"testing"
)

// Reviewers: the requester first, each login once whatever its case, no
// bots, nobody for an empty list.
func TestReviewers(t *testing.T) {
	got := reviewers("Alice", []string{"bob", "alice", "patchwright[bot]", "Bob", "carol"})
	if want := []string{"Alice", "bob", "carol"}; !slices.Equal(got, want) {
		t.Errorf("reviewers = %v, want %v", got, want)
	}
	if got := reviewers("", nil); len(got) != 0 {
		t.Errorf("no requester, no reviewers: %v", got)
	}
}
