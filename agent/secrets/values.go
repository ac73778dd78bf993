package secrets

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// RuleSetupSecret is the rule of a finding that is the value of one of the
// operator's setup-only secrets (WithValues).
const RuleSetupSecret = "setup-secret"

// RuleModelKey is the rule of a finding that is one of the model API keys
// the operator gave an installation (WithKeys).
const RuleModelKey = "model-key"

// value is a known secret: its name, shown in findings, its text, and
// the rule and description its findings carry.
type value struct{ name, text, rule, desc string }

// WithValues returns a scanner that also finds each of values (by name)
// wherever it appears verbatim or in an encoded run: the operator's
// setup-only secrets, which no rule describes. Findings name the
// variable, never the value.
func (s *Scanner) WithValues(values map[string]string) *Scanner {
	return s.with(values, RuleSetupSecret, "the setup-only secret ")
}

// WithKeys is WithValues for the model API keys an installation brings
// (bring your own key): each is found wherever it appears, like the
// setup-only secrets, and its findings name the key (values' key, such
// as "installation 7's openai key"), never its text.
func (s *Scanner) WithKeys(values map[string]string) *Scanner {
	return s.with(values, RuleModelKey, "")
}

func (s *Scanner) with(values map[string]string, rule, descPrefix string) *Scanner {
	out := &Scanner{det: s.det, values: slices.Clone(s.values)}
	for _, name := range slices.Sorted(maps.Keys(values)) {
		if values[name] != "" {
			out.values = append(out.values, value{name: name, text: values[name], rule: rule, desc: descPrefix + name})
		}
	}
	return out
}

// valueMatches finds the known values in content, each occurrence once.
func (s *Scanner) valueMatches(file, content string) []match {
	var out []match
	for _, v := range s.values {
		f := Finding{File: file, RuleID: v.rule, Description: v.desc}
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

// valuesInBlocks finds the known values in decoded blocks, each match
// covering the encoded run it was decoded from.
func (s *Scanner) valuesInBlocks(file string, blocks []block) []match {
	var out []match
	for _, bl := range blocks {
		for _, m := range s.valueMatches(file, bl.text) {
			out = append(out, match{Finding{File: file, Line: bl.line, RuleID: m.RuleID, Description: m.Description}, bl.start, bl.end})
		}
	}
	return out
}

// ValuesIn finds the known values (WithValues) in r, verbatim or in an
// encoded run, and nothing else: gitleaks' rules are not applied, so a
// test fixture's key in a dependency is not reported. r is read in
// windows, never whole, so a file of any size costs one window of
// memory. Nil, without reading r, when the scanner knows no value.
func (s *Scanner) ValuesIn(ctx context.Context, file string, r io.Reader) ([]Finding, error) {
	if len(s.values) == 0 {
		return nil, nil
	}
	var out []Finding
	err := windows(r, func(w string, line int, _ int64) {
		found := append(s.valueMatches(file, w), s.valuesInBlocks(file, decodedSegments(w))...)
		out = addWindowMatches(out, found, line, nil)
	})
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out, nil
}

// ValueNeedles are fixed strings whose presence in a text means it holds
// a known value (WithValues) in a form ValuesIn finds on one line: the
// value itself, its hex (both cases), and its base64 (standard and
// URL-safe) at each of the three alignments it can have inside a longer
// encoded run, each cut to the characters the value alone decides. They
// are for a search that cannot run this package, such as grep -F inside
// a container over a volume the worker cannot read; a hit there is then
// treated as a finding. Nil when the scanner knows no value.
func (s *Scanner) ValueNeedles() []string {
	var out []string
	add := func(n string) {
		if len(n) >= MinSetupSecret/2 && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	for _, v := range s.values {
		add(v.text)
		add(hex.EncodeToString([]byte(v.text)))
		add(strings.ToUpper(hex.EncodeToString([]byte(v.text))))
		for skip := range 3 {
			// The value starts `skip` bytes into a group of three once
			// its first bytes are dropped: what follows is whole groups.
			core := v.text[min(skip, len(v.text)):]
			core = core[:len(core)-len(core)%3]
			add(base64.StdEncoding.EncodeToString([]byte(core)))
			add(base64.URLEncoding.EncodeToString([]byte(core)))
		}
	}
	return out
}

// addWindowMatches adds the matches found in a window whose first line is
// line to out, each moved to the file's line and added once; skip, when
// set, leaves some out.
func addWindowMatches(out []Finding, found []match, line int, skip func(match) bool) []Finding {
	for _, m := range found {
		m.Line += line - 1
		if (skip == nil || !skip(m)) && !slices.Contains(out, m.Finding) {
			out = append(out, m.Finding)
		}
	}
	return out
}
