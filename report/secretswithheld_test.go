package report

import (
	"slices"
	"strings"
	"testing"
)

// TestSecretsWithheldInNotVerified: setup that ran without the setup-only
// secrets is said to, with their names; nothing is said when it had them.
func TestSecretsWithheldInNotVerified(t *testing.T) {
	says := func(s string) bool { return strings.HasPrefix(s, "Setup ran without the setup-only secrets") }
	if got := NotVerified(Input{}); slices.ContainsFunc(got, says) {
		t.Errorf("no secret was withheld, yet: %q", got)
	}
	got := NotVerified(Input{SetupSecretsWithheld: []string{"NPM_TOKEN", "PIP_INDEX_TOKEN"}})
	i := slices.IndexFunc(got, says)
	if i < 0 {
		t.Fatalf("not_verified %q does not say setup ran without the secrets", got)
	}
	if want := "Setup ran without the setup-only secrets (`NPM_TOKEN`, `PIP_INDEX_TOKEN`): the tree is the agent branch"; !strings.HasPrefix(got[i], want) {
		t.Errorf("%q, want it to start %q", got[i], want)
	}
}
