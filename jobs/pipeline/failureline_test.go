package pipeline

import (
	"strings"
	"testing"
)

// TestFailureLine: the line a download tool says why it failed in is
// found at the end of its output, whatever precedes it; output that says
// no such thing gives "".
func TestFailureLine(t *testing.T) {
	for name, tc := range map[string]struct{ output, want string }{
		"pip offline": {"--- stderr (1269 bytes) ---\nWARNING: Retrying (Retry(total=0)) after connection broken by 'ProxyError('Cannot connect to proxy.')': /simple/build/\n" +
			"ERROR: Could not find a version that satisfies the requirement build (from versions: none)\nERROR: No matching distribution found for build\n",
			"ERROR: No matching distribution found for build"},
		"npm": {"npm error code E403\nnpm error 403 Forbidden - GET https://registry.npmjs.org/left-pad\nnpm error A complete log of this run can be found in: /x.log\n",
			"npm error 403 Forbidden - GET https://registry.npmjs.org/left-pad"},
		"bundler": {"Fetching gem metadata from https://rubygems.org/\nCould not fetch specs from https://rubygems.org/ due to underlying error <timeout>\n", "Could not fetch specs from https://rubygems.org/ due to underlying error <timeout>"},
		"cargo":   {"    Updating crates.io index\nerror: failed to get `serde` as a dependency of package `x v0.1.0`\n\nCaused by:\n  network\n", "error: failed to get `serde` as a dependency of package `x v0.1.0`"},
		"composer": {"Loading composer repositories with package information\n\nIn RemoteFilesystem.php line 476:\n                    \n  The \"https://repo.packagist.org/packages.json\" file could not be downloaded  \n  : Failed to open stream: Cannot connect to HTTPS server through proxy   \n                    \n\ninstall [--prefer-source] [--dry-run]\n",
			"The \"https://repo.packagist.org/packages.json\" file could not be downloaded : Failed to open stream: Cannot connect to HTTPS server through proxy"},
		// The public-shaped image has no Python: the venv cannot be made.
		"no python3": {"--- stderr (33 bytes) ---\n/bin/sh: 1: python3: not found\n", "/bin/sh: 1: python3: not found"},
		"bash":       {"bash: line 1: npm: command not found\n", "bash: line 1: npm: command not found"},
		"none":       {"Killed\n", ""},
		"bounded":    {"ERROR: " + strings.Repeat("é", 300) + "\n", "ERROR: " + strings.Repeat("é", 96)},
		"one line":   {"ERROR:   two\tspaces  \n", "ERROR: two spaces"},
	} {
		if got := failureLine(tc.output); got != tc.want {
			t.Errorf("%s: failureLine = %q, want %q", name, got, tc.want)
		}
	}
}
