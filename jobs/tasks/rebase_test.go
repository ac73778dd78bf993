package tasks

import (
	"strings"
	"testing"
)

// An update's base is a commit or a branch name, never anything a merge
// request could read otherwise; it is never a CI fix too.
func TestRebaseValidation(t *testing.T) {
	issue := Issue{InstallationID: 1, Owner: "o", Repo: "r", Number: 2}
	sha := strings.Repeat("a", 40)
	for base, ok := range map[string]bool{sha: true, "main": true, "release/1.2": true, "-main": false, "a..b": false, "main branch": false, "": true} {
		_, err := NewRetryPRTask(RetryPR{Issue: issue, PR: 3, DeliveryID: RebaseID(issue, 3, "x"), Rebase: base})
		if (err == nil) != ok {
			t.Errorf("rebase %q: %v, want ok=%v", base, err, ok)
		}
	}
	if _, err := NewRetryPRTask(RetryPR{Issue: issue, PR: 3, DeliveryID: "d", Rebase: sha, CIHead: sha}); err == nil {
		t.Error("a task that is both a CI fix and an update was accepted")
	}
	if a, b := RebaseID(issue, 3, sha), RebaseID(issue, 4, sha); a == b {
		t.Errorf("two pull requests share the update ID %s", a)
	}
}
