package report

import (
	"slices"
	"strings"
	"testing"
)

// TestSecretFilesInNotVerified: each file setup left a secret in is named
// with its secrets (a cache file without, and said to be the cache's),
// and the operator is told where credentials belong; nothing is said
// when there were none.
func TestSecretFilesInNotVerified(t *testing.T) {
	says := func(s string) bool {
		return strings.HasPrefix(s, "Setup wrote") || strings.HasPrefix(s, "Setup-only secrets must")
	}
	if got := NotVerified(Input{}); slices.ContainsFunc(got, says) {
		t.Errorf("no file was removed, yet: %q", got)
	}
	got := NotVerified(Input{SetupSecretFiles: []SecretFile{
		{Path: ".npmrc", Names: []string{"NPM_TOKEN", "REG"}},
		{Path: "cargo/credentials.toml", Cache: true},
	}})
	for _, want := range []string{
		"Setup wrote the value of `NPM_TOKEN`, `REG` into `.npmrc`, so it was removed before the agent started",
		"Setup wrote a setup-only secret into the build cache's `cargo/credentials.toml`, so it was removed",
		"Setup-only secrets must be written outside the work tree and the build cache, for example to `$HOME/.npmrc`",
	} {
		if !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, want) }) {
			t.Errorf("not_verified %q has nothing starting %q", got, want)
		}
	}
}
