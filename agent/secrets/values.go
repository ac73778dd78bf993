package secrets

import (
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// RuleSetupSecret is the rule of a finding that is the value of one of the
// operator's setup-only secrets (WithValues).
const RuleSetupSecret = "setup-secret"

// value is a known secret: its name, shown in findings, and its text.
type value struct{ name, text string }

// WithValues returns a scanner that also finds each of values (by name)
// wherever it appears verbatim or in an encoded run: the operator's
// setup-only secrets, which no rule describes. Findings name the
// variable, never the value.
func (s *Scanner) WithValues(values map[string]string) *Scanner {
	out := &Scanner{det: s.det, values: slices.Clone(s.values)}
	for _, name := range slices.Sorted(maps.Keys(values)) {
		if values[name] != "" {
			out.values = append(out.values, value{name, values[name]})
		}
	}
	return out
}

// valueMatches finds the known values in content, each occurrence once.
func (s *Scanner) valueMatches(file, content string) []match {
	var out []match
	for _, v := range s.values {
		f := Finding{File: file, RuleID: RuleSetupSecret, Description: "the setup-only secret " + v.name}
		for from := 0; from < len(content); {
			i := strings.Index(content[from:], v.text)
			if i < 0 {
				break
			}
			start := from + i
			f.Line = strings.Count(content[:start], "\n") + 1
			out = append(out, match{f, start, start + len(v.text)})
			from = start + len(v.text)
		}
	}
	return out
}

// SetupSecrets maps a repository to its setup-only secrets, variable name
// to value: the operator's PATCHWRIGHT_SETUP_SECRETS_FILE, never a file of
// the repository.
type SetupSecrets map[string]map[string]string

// MinSetupSecret is the shortest value a setup-only secret may have:
// every output is searched for it, and a short one would withhold
// ordinary text.
const MinSetupSecret = 8

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// reservedNames are variables the sandbox sets itself.
var reservedNames = []string{"HOME", "USER", "TMPDIR", "PATH", "XDG_CACHE_HOME", "GOPATH", "GOMODCACHE", "GOCACHE", "npm_config_cache", "PIP_CACHE_DIR", "CARGO_HOME",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy", "JAVA_TOOL_OPTIONS"}

// LoadSetupSecrets reads a setup-secrets file: YAML, a mapping from
// repository ("owner/name", or the URL or path as cloned) to a mapping of
// variable names to values.
//
//	acme/widgets:
//	  NPM_TOKEN: "npm_…"
func LoadSetupSecrets(path string) (SetupSecrets, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("setup secrets: %w", err)
	}
	var s SetupSecrets
	if err := yaml.Unmarshal(data, &s); err != nil {
		// yaml's message may quote the file: say only where.
		return nil, fmt.Errorf("setup secrets %s: not a mapping of repositories to mappings of names to values", path)
	}
	for repo, vars := range s {
		if strings.TrimSpace(repo) == "" {
			return nil, fmt.Errorf("setup secrets %s: an empty repository name", path)
		}
		for name, v := range vars {
			switch {
			case !envNameRE.MatchString(name):
				return nil, fmt.Errorf("setup secrets %s: %s: %q is not a variable name", path, repo, name)
			case slices.Contains(reservedNames, name):
				return nil, fmt.Errorf("setup secrets %s: %s: %s is set by the sandbox itself", path, repo, name)
			case len(v) < MinSetupSecret:
				return nil, fmt.Errorf("setup secrets %s: %s: the value of %s is shorter than %d characters", path, repo, name, MinSetupSecret)
			}
		}
	}
	return s, nil
}

// For returns the secrets of the repository cloned from repoURL: the
// entry whose key is the URL, or whose "owner/name" ends its path (a
// ".git" suffix aside). Nil when there is none.
func (s SetupSecrets) For(repoURL string) map[string]string {
	url := strings.TrimSuffix(strings.TrimSuffix(repoURL, "/"), ".git")
	var out map[string]string
	for key, vars := range s {
		k := strings.TrimSuffix(strings.Trim(key, "/"), ".git")
		if k == url || strings.HasSuffix(url, "/"+k) {
			out = vars
			if k == url {
				break
			}
		}
	}
	return out
}
