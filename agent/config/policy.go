package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"go.yaml.in/yaml/v3"

	"github.com/patchwright/patchwright/agent/ignore"
	"github.com/patchwright/patchwright/sandbox/egress"
)

// Policy is the operator's limits over repositories (docs/policy.md): a
// repository's .github/agent.yml can only tighten them. A field left out
// sets no limit; Apply is the one place they meet a repository's file.
type Policy struct {
	// NetworkAllow are the only hosts a repository's network.allow may
	// name (egress entries); nil: any. The operator's own list
	// (PATCHWRIGHT_EGRESS_ALLOW) and the detected registries are not
	// limited by it.
	NetworkAllow []string `yaml:"network_allow"`
	// OpenNetwork false refuses `network: open`; nil leaves it to
	// PATCHWRIGHT_ALLOW_OPEN_NETWORK.
	OpenNetwork *bool `yaml:"open_network"`
	// Services false removes a repository's services:; nil allows them.
	Services *bool `yaml:"services"`
	// Images are doublestar globs a repository's image: and its services'
	// images must match; nil: any. The operator's default image is
	// always allowed.
	Images []string `yaml:"images"`
	// Models are doublestar globs every model a job may call (its model,
	// fallbacks, summary and review models, as PROVIDER:NAME) must match;
	// nil: any. An installation's own models are held to them too.
	Models []string `yaml:"models"`
	// MaxCostUSD caps a run's cost; a repository's max_cost_usd may only
	// lower it. Zero: no cap from the policy.
	MaxCostUSD float64 `yaml:"max_cost_usd"`
	// ProtectedPaths and Exclude are added to the repository's own.
	ProtectedPaths []string `yaml:"protected_paths"`
	Exclude        []string `yaml:"exclude"`
	// PullRequests false: a run's change is pushed to its branch and its
	// report posted on the issue, and no pull request is opened; nil or
	// true: pull requests are opened.
	PullRequests *bool `yaml:"pull_requests"`
}

// DisallowedModel returns the first of models (PROVIDER:NAME each) that
// p's Models do not allow, "" when they allow all: the one check of a
// model against the policy. The provider's name is matched in lower
// case, as provider.New reads it.
func (p Policy) DisallowedModel(models ...string) string {
	if p.Models == nil {
		return ""
	}
	for _, m := range models {
		m = strings.TrimSpace(m)
		if name, model, ok := strings.Cut(m, ":"); ok {
			m = strings.ToLower(name) + ":" + model
		}
		if !slices.ContainsFunc(p.Models, func(g string) bool { ok, _ := doublestar.Match(g, m); return ok }) {
			return m
		}
	}
	return ""
}

// OpensPullRequests reports whether runs under p may open pull requests.
func (p Policy) OpensPullRequests() bool { return p.PullRequests == nil || *p.PullRequests }

// PolicyFile is the file PATCHWRIGHT_POLICY_FILE names: defaults, and
// entries per organisation (by login) and per installation (by ID). The
// most specific entry that sets a field wins: installation, then
// organisation, then defaults.
type PolicyFile struct {
	Defaults      Policy            `yaml:"defaults"`
	Organizations map[string]Policy `yaml:"organizations"`
	Installations map[int64]Policy  `yaml:"installations"`
}

// For returns the policy of one installation and its account's login,
// and a name for it ("defaults", "organization acme", "installation 7")
// that the body's Configuration line shows. The zero PolicyFile gives
// the zero Policy, which limits nothing.
func (f PolicyFile) For(installation int64, owner string) (Policy, string) {
	p, name := f.Defaults, "defaults"
	for login, o := range f.Organizations {
		if strings.EqualFold(login, owner) {
			p, name = o.over(p), "organization "+login
		}
	}
	if i, ok := f.Installations[installation]; ok {
		p, name = i.over(p), "installation "+strconv.FormatInt(installation, 10)
	}
	return p, name
}

// over returns p with each field it sets replacing base's.
func (p Policy) over(base Policy) Policy {
	if p.NetworkAllow != nil {
		base.NetworkAllow = p.NetworkAllow
	}
	if p.OpenNetwork != nil {
		base.OpenNetwork = p.OpenNetwork
	}
	if p.Services != nil {
		base.Services = p.Services
	}
	if p.Images != nil {
		base.Images = p.Images
	}
	if p.Models != nil {
		base.Models = p.Models
	}
	if p.MaxCostUSD != 0 {
		base.MaxCostUSD = p.MaxCostUSD
	}
	if p.ProtectedPaths != nil {
		base.ProtectedPaths = p.ProtectedPaths
	}
	if p.Exclude != nil {
		base.Exclude = p.Exclude
	}
	if p.PullRequests != nil {
		base.PullRequests = p.PullRequests
	}
	return base
}

// LoadPolicyFile reads and checks the operator's policy file; "" is no
// policy. Errors name the file, the key and its line.
func LoadPolicyFile(name string) (PolicyFile, error) {
	if name == "" {
		return PolicyFile{}, nil
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return PolicyFile{}, fmt.Errorf("read the policy file: %w", err)
	}
	f, err := ParsePolicy(data)
	if err != nil {
		return PolicyFile{}, fmt.Errorf("policy file %s: %w", name, err)
	}
	return f, nil
}

var policyFieldRE = regexp.MustCompile(`line (\d+): field (.+) not found in type \S+`)

const policyKeys = "defaults, organizations, installations; in each: network_allow, open_network, services, images, models, max_cost_usd, protected_paths, exclude, pull_requests"

// ParsePolicy decodes and checks a policy file's text.
func ParsePolicy(data []byte) (PolicyFile, error) {
	var f PolicyFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			msgs := make([]string, 0, len(te.Errors))
			for _, e := range te.Errors {
				if m := policyFieldRE.FindStringSubmatch(e); m != nil {
					e = fmt.Sprintf("line %s: unknown key %q (known keys: %s)", m[1], m[2], policyKeys)
				}
				msgs = append(msgs, e)
			}
			return PolicyFile{}, errors.New(strings.Join(msgs, "; "))
		}
		return PolicyFile{}, err
	}
	var errs []string
	errs = append(errs, f.Defaults.errors("defaults")...)
	for login, p := range f.Organizations {
		errs = append(errs, p.errors("organizations."+login)...)
	}
	for id, p := range f.Installations {
		if id <= 0 {
			errs = append(errs, fmt.Sprintf("installations: %d is not an installation ID", id))
		}
		errs = append(errs, p.errors(fmt.Sprintf("installations.%d", id))...)
	}
	if len(errs) > 0 {
		slices.Sort(errs)
		return PolicyFile{}, errors.New(strings.Join(errs, "; "))
	}
	return f, nil
}

// errors checks one entry; where names it.
func (p Policy) errors(where string) []string {
	var errs []string
	for i, a := range p.NetworkAllow {
		if err := egress.CheckEntry(a); err != nil {
			errs = append(errs, fmt.Sprintf("%s.network_allow[%d]: %v", where, i, err))
		}
	}
	for i, g := range p.Images {
		if strings.TrimSpace(g) == "" || !doublestar.ValidatePattern(g) {
			errs = append(errs, fmt.Sprintf("%s.images[%d]: %q is not a valid glob", where, i, g))
		}
	}
	for i, g := range p.Models {
		if name, _, ok := strings.Cut(g, ":"); !ok || strings.TrimSpace(name) == "" || !doublestar.ValidatePattern(g) {
			errs = append(errs, fmt.Sprintf("%s.models[%d]: %q is not a glob of PROVIDER:NAME, such as openai:gpt-4.1 or anthropic:*", where, i, g))
		}
	}
	if p.MaxCostUSD < 0 {
		errs = append(errs, fmt.Sprintf("%s.max_cost_usd: %v is negative", where, p.MaxCostUSD))
	}
	errs = append(errs, globErrors(where+".protected_paths", p.ProtectedPaths)...)
	return append(errs, excludeErrors(where+".exclude", p.Exclude)...)
}

func globErrors(key string, globs []string) []string {
	var errs []string
	for i, g := range globs {
		switch {
		case strings.TrimSpace(g) == "":
			errs = append(errs, fmt.Sprintf("%s[%d]: empty pattern", key, i))
		case !doublestar.ValidatePattern(g):
			errs = append(errs, fmt.Sprintf("%s[%d]: %q is not a valid glob", key, i, g))
		}
	}
	return errs
}

func excludeErrors(key string, pats []string) []string {
	var errs []string
	for i, p := range pats {
		if why := ignore.CheckPattern(p); why != "" {
			errs = append(errs, fmt.Sprintf("%s[%d]: %q is %s", key, i, p, why))
		}
	}
	return errs
}

// hostPorts splits a checked egress entry into its host and ports
// (no port: 80 and 443).
func hostPorts(e string) (string, []int) {
	e = strings.ToLower(strings.TrimSpace(e))
	if h, p, err := net.SplitHostPort(e); err == nil {
		n, _ := strconv.Atoi(p)
		return h, []int{n}
	}
	return e, []int{80, 443}
}

// allowedBy reports whether the policy's entries cover every host and
// port the entry e reaches: the same host, or a wildcard of the policy
// ("*.example.com") that covers e's host or e's own narrower wildcard.
func allowedBy(policy []string, e string) bool {
	host, ports := hostPorts(e)
	for _, port := range ports {
		covered := false
		for _, pe := range policy {
			ph, pports := hostPorts(pe)
			if slices.Contains(pports, port) && (ph == host || strings.HasPrefix(ph, "*.") && strings.HasSuffix(host, ph[1:])) {
				covered = true
				break
			}
		}
		if !covered {
			return false
		}
	}
	return true
}
