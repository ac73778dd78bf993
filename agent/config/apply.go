package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Applied says what the operator's policy did to a repository's
// configuration, for the body's Configuration line.
type Applied struct {
	// Policy names the policy that applied ("defaults", "organization
	// acme", "installation 7"); "" when the operator has none.
	Policy string
	// Tightened says, one phrase each, what the policy changed in what
	// the repository asked for; nil when it asked for nothing past it.
	// Values from the repository are in backtick code spans.
	Tightened []string
}

// Apply is the one place the operator's policy meets a repository's
// configuration: what the repository asks past the policy is taken
// back, and Applied says what. Lists of hosts are intersected, cost caps
// take the lower, protected and excluded paths the union, and what the
// policy forbids (open network, services, images outside its list) is
// removed. name is the policy's name from PolicyFile.For; "" with the
// zero Policy for no policy.
func Apply(p Policy, name string, c Config) (Config, Applied) {
	a := Applied{Policy: name}
	say := func(format string, args ...any) { a.Tightened = append(a.Tightened, fmt.Sprintf(format, args...)) }
	if p.OpenNetwork != nil && !*p.OpenNetwork && c.Egress.Open {
		c.Egress.Open = false
		say("`network: open` is not allowed; the allowlist applies")
	}
	if p.NetworkAllow != nil {
		var kept, dropped []string
		for _, e := range c.Egress.Allow {
			if allowedBy(p.NetworkAllow, e) {
				kept = append(kept, e)
			} else {
				dropped = append(dropped, e)
			}
		}
		if len(dropped) > 0 {
			c.Egress.Allow = kept
			say("network.allow: %s not in the policy's network_allow, dropped", ticks(dropped))
		}
	}
	c.Services = applyServices(p, c.Services, say)
	if c.Image != "" && !imageAllowed(p.Images, c.Image) {
		say("image %s is not an allowed image; the operator's default image is used", ticks([]string{c.Image}))
		c.Image = ""
	}
	if p.MaxCostUSD > 0 && (c.Limits.MaxCostUSD == 0 || c.Limits.MaxCostUSD > p.MaxCostUSD) {
		if c.Limits.MaxCostUSD > p.MaxCostUSD {
			say("max_cost_usd lowered from %g to %g", c.Limits.MaxCostUSD, p.MaxCostUSD)
		}
		c.Limits.MaxCostUSD = p.MaxCostUSD
	}
	if !p.OpensPullRequests() {
		say("pull requests are not allowed; the change is pushed to its branch and reported on the issue")
	}
	c.ProtectedPaths = union(c.ProtectedPaths, p.ProtectedPaths)
	c.Exclude = union(c.Exclude, p.Exclude)
	return c, a
}

// applyServices removes the services the policy does not allow.
func applyServices(p Policy, svcs []Service, say func(string, ...any)) []Service {
	if len(svcs) == 0 {
		return svcs
	}
	if p.Services != nil && !*p.Services {
		names := make([]string, len(svcs))
		for i, s := range svcs {
			names[i] = s.Name
		}
		say("services are not allowed; %s not started", ticks(names))
		return nil
	}
	var kept []Service
	for _, s := range svcs {
		if imageAllowed(p.Images, s.Image) {
			kept = append(kept, s)
			continue
		}
		say("service %s: image %s is not an allowed image; not started", ticks([]string{s.Name}), ticks([]string{s.Image}))
	}
	return kept
}

// imageAllowed reports whether image matches one of the policy's globs;
// nil globs allow every image.
func imageAllowed(globs []string, image string) bool {
	if globs == nil {
		return true
	}
	for _, g := range globs {
		if ok, _ := doublestar.Match(g, image); ok {
			return true
		}
	}
	return false
}

// ticks shows values from the repository as code spans, comma
// separated: the report renders the phrases with its spans function,
// which escapes the text around them.
func ticks(vs []string) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = "`" + strings.ReplaceAll(v, "`", "'") + "`"
	}
	return strings.Join(out, ", ")
}

// union is a's entries then b's not already in a.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
