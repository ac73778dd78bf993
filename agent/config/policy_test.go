package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func ptr[T any](v T) *T { return &v }

// TestApply is the table of every policy field: a repository that asks
// past the policy is tightened, and Applied says what was taken back.
func TestApply(t *testing.T) {
	repo := func(yml string) Config {
		t.Helper()
		c, err := Parse([]byte(yml))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	cases := map[string]struct {
		policy    Policy
		repo      string
		check     func(Config) bool
		tightened []string
	}{
		"no policy changes nothing": {
			repo:  "network: open\nimage: golang:1.23\nlimits: {max_cost_usd: 9}\n",
			check: func(c Config) bool { return c.Egress.Open && c.Image == "golang:1.23" && c.Limits.MaxCostUSD == 9 },
		},
		"open network refused": {
			policy: Policy{OpenNetwork: ptr(false)}, repo: "network: open\n",
			check:     func(c Config) bool { return !c.Egress.Open },
			tightened: []string{"`network: open` is not allowed; the allowlist applies"},
		},
		"open network allowed": {
			policy: Policy{OpenNetwork: ptr(true)}, repo: "network: open\n",
			check: func(c Config) bool { return c.Egress.Open },
		},
		"allow intersected": {
			policy: Policy{NetworkAllow: []string{"*.corp.example", "registry.example:8443"}},
			repo:   "network: {allow: [a.corp.example, \"*.b.corp.example\", registry.example:8443, registry.example, evil.example, corp.example]}\n",
			check: func(c Config) bool {
				return reflect.DeepEqual(c.Egress.Allow, []string{"a.corp.example", "*.b.corp.example", "registry.example:8443"})
			},
			tightened: []string{"network.allow: `registry.example`, `evil.example`, `corp.example` not in the policy's network_allow, dropped"},
		},
		"allow emptied by an empty list": {
			policy: Policy{NetworkAllow: []string{}}, repo: "network: {allow: [a.example]}\n",
			check:     func(c Config) bool { return len(c.Egress.Allow) == 0 },
			tightened: []string{"network.allow: `a.example` not in the policy's network_allow, dropped"},
		},
		"services refused": {
			policy:    Policy{Services: ptr(false)},
			repo:      "services: [{name: db, image: postgres:16}, {name: cache, image: redis:7}]\n",
			check:     func(c Config) bool { return len(c.Services) == 0 },
			tightened: []string{"services are not allowed; `db`, `cache` not started"},
		},
		"image not allowed": {
			policy: Policy{Images: []string{"golang:*", "registry.corp.example/**"}},
			repo:   "image: node:20\nservices: [{name: db, image: postgres:16}, {name: api, image: registry.corp.example/team/api:1}]\n",
			check: func(c Config) bool {
				return c.Image == "" && len(c.Services) == 1 && c.Services[0].Name == "api"
			},
			tightened: []string{"service `db`: image `postgres:16` is not an allowed image; not started",
				"image `node:20` is not an allowed image; the operator's default image is used"},
		},
		"image allowed": {
			policy: Policy{Images: []string{"golang:*"}}, repo: "image: golang:1.23\n",
			check: func(c Config) bool { return c.Image == "golang:1.23" },
		},
		"cost raised past the policy is lowered": {
			policy: Policy{MaxCostUSD: 2}, repo: "limits: {max_cost_usd: 5}\n",
			check:     func(c Config) bool { return c.Limits.MaxCostUSD == 2 },
			tightened: []string{"max_cost_usd lowered from 5 to 2"},
		},
		"cost below the policy stays": {
			policy: Policy{MaxCostUSD: 2}, repo: "limits: {max_cost_usd: 1.5}\n",
			check: func(c Config) bool { return c.Limits.MaxCostUSD == 1.5 },
		},
		"no repository cost takes the policy's": {
			policy: Policy{MaxCostUSD: 2}, repo: "",
			check: func(c Config) bool { return c.Limits.MaxCostUSD == 2 },
		},
		"pull requests refused": {
			policy: Policy{PullRequests: ptr(false)}, repo: "",
			check:     func(Config) bool { return true },
			tightened: []string{"pull requests are not allowed; the change is pushed to its branch and reported on the issue"},
		},
		"protected and excluded paths are a union": {
			policy: Policy{ProtectedPaths: []string{"deploy/**", "migrations/**"}, Exclude: []string{"customer-data/"}},
			repo:   "protected_paths: [\"migrations/**\"]\nexclude: [\"*.pii.csv\"]\n",
			check: func(c Config) bool {
				return reflect.DeepEqual(c.ProtectedPaths, []string{"migrations/**", "deploy/**"}) &&
					reflect.DeepEqual(c.Exclude, []string{"*.pii.csv", "customer-data/"})
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, a := Apply(tc.policy, "defaults", repo(tc.repo))
			if !tc.check(got) {
				t.Errorf("Apply gave %+v", got)
			}
			if !reflect.DeepEqual(a.Tightened, tc.tightened) {
				t.Errorf("Tightened = %q, want %q", a.Tightened, tc.tightened)
			}
			if a.Policy != "defaults" {
				t.Errorf("Policy = %q", a.Policy)
			}
		})
	}
}

func TestPolicyFor(t *testing.T) {
	f, err := ParsePolicy([]byte(`
defaults: {open_network: false, max_cost_usd: 3, exclude: [secrets/]}
organizations:
  Acme: {max_cost_usd: 2, images: ["golang:*"]}
installations:
  7: {open_network: true, pull_requests: false}
`))
	if err != nil {
		t.Fatal(err)
	}
	p, name := f.For(7, "acme")
	if name != "installation 7" || !*p.OpenNetwork || p.MaxCostUSD != 2 || len(p.Images) != 1 || p.Exclude[0] != "secrets/" || p.OpensPullRequests() {
		t.Errorf("For(7, acme) = %+v, %q", p, name)
	}
	p, name = f.For(8, "acme")
	if name != "organization Acme" || *p.OpenNetwork || p.MaxCostUSD != 2 || !p.OpensPullRequests() {
		t.Errorf("For(8, acme) = %+v, %q", p, name)
	}
	p, name = f.For(8, "other")
	if name != "defaults" || p.MaxCostUSD != 3 || p.Images != nil {
		t.Errorf("For(8, other) = %+v, %q", p, name)
	}
	if p, name := (PolicyFile{}).For(1, "x"); !reflect.DeepEqual(p, Policy{}) || name != "defaults" {
		t.Errorf("zero file: %+v %q", p, name)
	}
}

func TestBadPolicy(t *testing.T) {
	cases := map[string]struct{ yml, want string }{
		"unknown key":        {"defaults: {pull_request: false}\n", `line 1: unknown key "pull_request"`},
		"unknown top key":    {"default: {}\n", `unknown key "default"`},
		"bad host":           {"defaults: {network_allow: [\"http://x\"]}\n", "defaults.network_allow[0]"},
		"bad glob":           {"organizations: {acme: {images: [\"[\"]}}\n", `organizations.acme.images[0]: "[" is not a valid glob`},
		"negative cost":      {"defaults: {max_cost_usd: -1}\n", "defaults.max_cost_usd: -1 is negative"},
		"negated exclude":    {"defaults: {exclude: [\"!keep\"]}\n", "defaults.exclude[0]: \"!keep\" is a negation"},
		"empty protected":    {"installations: {7: {protected_paths: [\"\"]}}\n", "installations.7.protected_paths[0]: empty pattern"},
		"pull_requests type": {"defaults: {pull_requests: never}\n", "cannot unmarshal"},
		"bad installation":   {"installations: {0: {}}\n", "installations: 0 is not an installation ID"},
		"installation name":  {"installations: {acme: {}}\n", "cannot unmarshal"},
		"wrong type":         {"defaults: {services: maybe}\n", "cannot unmarshal"},
		"model no provider":  {"defaults: {models: [gpt-4.1]}\n", `defaults.models[0]: "gpt-4.1" is not a glob of PROVIDER:NAME`},
		"model bad glob":     {"organizations: {acme: {models: [\"openai:[\"]}}\n", `organizations.acme.models[0]: "openai:[" is not a glob`},
		"model empty":        {"installations: {7: {models: [\"\"]}}\n", `installations.7.models[0]: "" is not a glob`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ParsePolicy([]byte(c.yml))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("ParsePolicy = %v, want it to say %q", err, c.want)
			}
		})
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "policy.yml")
	if err := os.WriteFile(bad, []byte("defaults: {max_cost_usd: -1}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadPolicyFile(bad); err == nil || !strings.Contains(err.Error(), "policy file "+bad) {
		t.Errorf("LoadPolicyFile(bad) = %v, want it to name the file", err)
	}
	if _, err := LoadPolicyFile(filepath.Join(dir, "missing.yml")); err == nil {
		t.Error("LoadPolicyFile(missing) = nil")
	}
	if f, err := LoadPolicyFile(""); err != nil || !reflect.DeepEqual(f, PolicyFile{}) {
		t.Errorf("LoadPolicyFile(\"\") = %+v, %v", f, err)
	}
}

// TestDisallowedModel: every model a job may call must match the
// policy's models; the first that does not is named.
func TestDisallowedModel(t *testing.T) {
	cases := map[string]struct {
		models []string
		asked  []string
		want   string
	}{
		"no list allows any":       {nil, []string{"openai:gpt-4.1", "anthropic:claude-opus-4-1"}, ""},
		"exact":                    {[]string{"openai:gpt-4.1"}, []string{"openai:gpt-4.1"}, ""},
		"glob":                     {[]string{"anthropic:*", "openai:gpt-4.1*"}, []string{"anthropic:claude-sonnet-4-5", "openai:gpt-4.1-mini"}, ""},
		"provider in any case":     {[]string{"openai:gpt-4.1"}, []string{" OpenAI:gpt-4.1"}, ""},
		"fallback outside":         {[]string{"openai:*"}, []string{"openai:gpt-4.1", "anthropic:claude-sonnet-4-5"}, "anthropic:claude-sonnet-4-5"},
		"name is case sensitive":   {[]string{"openai:gpt-4.1"}, []string{"openai:GPT-4.1"}, "openai:GPT-4.1"},
		"empty list allows none":   {[]string{}, []string{"openai:gpt-4.1"}, "openai:gpt-4.1"},
		"star stops at a slash":    {[]string{"openai:*"}, []string{"openai:org/model"}, "openai:org/model"},
		"a slash matched by name":  {[]string{"openai:*/*"}, []string{"openai:org/model"}, ""},
		"nothing asked is allowed": {[]string{}, nil, ""},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if got := (Policy{Models: c.models}).DisallowedModel(c.asked...); got != c.want {
				t.Errorf("DisallowedModel(%q) under %q = %q, want %q", c.asked, c.models, got, c.want)
			}
		})
	}
	f, err := ParsePolicy([]byte("defaults: {models: [\"openai:*\"]}\ninstallations: {7: {models: [\"anthropic:*\"]}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := f.For(7, "x"); p.DisallowedModel("anthropic:claude-sonnet-4-5") != "" || p.DisallowedModel("openai:gpt-4.1") == "" {
		t.Errorf("installation 7's models %q: the installation's entry does not replace the defaults'", p.Models)
	}
}

func TestExcludeKey(t *testing.T) {
	if _, err := Parse([]byte("exclude: [\"!x\"]\n")); err == nil || !strings.Contains(err.Error(), "exclude[0]") {
		t.Errorf("Parse(negated exclude) = %v", err)
	}
	c, err := Parse([]byte("exclude: [data/]\n"))
	if err != nil || len(c.Exclude) != 1 {
		t.Errorf("Parse(exclude) = %+v, %v", c, err)
	}
}
