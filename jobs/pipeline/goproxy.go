package pipeline

import (
	"context"
	"path"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"

	"github.com/patchwright/patchwright/report"
	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/egress"
	"github.com/patchwright/patchwright/verify/findings"
)

// The Go module proxy fetches a module from wherever its path points,
// so a setup network that reaches proxy.golang.org reaches every host
// on the internet through it: a change that requires
// evil.example.com/<data> sends <data> there, whatever network.allow
// says. So dependency setup on a changed tree fetches a module path the
// base commit's go.mod and go.sum do not name only when the setup
// network may reach its host itself (the allowlist: Registries, the
// operator's PATCHWRIGHT_EGRESS_ALLOW, the repository's network.allow),
// or, for a module that goes through a proxy, when the operator allows
// any origin (Executor.GoProxyAnyOrigin). Any other new module is held:
// the setup container's GONOPROXY routes it direct, where the egress
// proxy refuses its host, and GONOSUMDB keeps the checksum database
// (which asks the proxy, which asks the origin) from looking it up. The
// run lists it and cannot be verified (report.DependencySetup.NotFetched,
// verify.OutcomeInput.NotFetched).

// goEnv is the setup container's effective module settings, as
// `go env` prints them (GONOPROXY and GONOSUMDB default to GOPRIVATE).
type goEnv struct{ Proxy, NoProxy, NoSumDB string }

// defaultGoEnv is Go's own default, for an image whose go cannot say.
var defaultGoEnv = goEnv{Proxy: "https://proxy.golang.org,direct"}

// goEnvProbe prints goEnv's three settings, one a line, as goDownload
// sees them (goPinned).
const goEnvProbe = goPinned + " go env GOPROXY GONOPROXY GONOSUMDB"

// Where the go command fetches a module from.
const (
	routeOff    = "off"    // nowhere: GOPROXY=off
	routeDirect = "direct" // its own host (GONOPROXY, or GOPROXY=direct)
	routeProxy  = "proxy"  // a module proxy, which fetches from any origin
)

// goRoute is where go fetches module m from under env: its first
// GOPROXY entry decides (a later one is tried only when that fails),
// unless GONOPROXY matches m.
func goRoute(env goEnv, m string) string {
	if module.MatchPrefixPatterns(env.NoProxy, m) {
		return routeDirect
	}
	first, _, _ := strings.Cut(env.Proxy, ",")
	first, _, _ = strings.Cut(first, "|")
	switch strings.TrimSpace(first) {
	case "off":
		return routeOff
	case "direct":
		return routeDirect
	}
	return routeProxy
}

// goHoldInput is what goHeld judges: the new module paths, the setup
// container's settings, the setup network's allowlist and the operator's
// GoProxyAnyOrigin.
type goHoldInput struct {
	Modules   []string
	Env       goEnv
	Allow     egress.Allowlist
	AnyOrigin bool
}

// goHeld are the modules of in that dependency setup must not fetch:
// those whose host the allowlist does not name, unless they go through a
// proxy and the operator allows any origin, or go does not fetch at all.
// It is the one rule; TestGoHeld pins it.
func goHeld(in goHoldInput) []report.UnfetchedModule {
	var out []report.UnfetchedModule
	for _, m := range in.Modules {
		host := moduleHost(m)
		route := goRoute(in.Env, m)
		switch {
		case route == routeOff:
		case in.Allow.Allows(host, 443):
		case route == routeProxy && in.AnyOrigin:
		default:
			out = append(out, report.UnfetchedModule{Module: m, Host: host, Route: route})
		}
	}
	return out
}

// moduleHost is the host a module path names: its first element.
func moduleHost(m string) string {
	host, _, _ := strings.Cut(m, "/")
	return strings.ToLower(host)
}

// newGoModules are the module paths that the changed go.mod and go.sum
// files name and their versions on the base commit do not, sorted: what
// a Go download would fetch for the first time. A go.mod's requirements
// and the modules its replacements point to count; a replacement by a
// directory fetches nothing.
func newGoModules(files []findings.File) []string {
	var out []string
	for _, f := range files {
		base := path.Base(f.Path)
		if (base != "go.mod" && base != "go.sum") || f.New == nil {
			continue
		}
		was := goModulePaths(base, f.Base)
		for m := range goModulePaths(base, f.New) {
			if !was[m] && !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	slices.Sort(out)
	return out
}

// goModulePaths are the valid module paths a go.mod or go.sum (name)
// names. A go.mod go cannot parse names none: go will not download for
// it either.
func goModulePaths(name string, b []byte) map[string]bool {
	out := map[string]bool{}
	add := func(m string) {
		if module.CheckPath(m) == nil {
			out[m] = true
		}
	}
	if name == "go.sum" {
		for _, line := range strings.Split(string(b), "\n") {
			if fields := strings.Fields(line); len(fields) == 3 {
				add(fields[0])
			}
		}
		return out
	}
	// ParseLax would skip the replacements, which a main module's go.mod
	// applies.
	f, err := modfile.Parse("go.mod", b, nil)
	if err != nil {
		return out
	}
	for _, r := range f.Require {
		add(r.Mod.Path)
	}
	for _, r := range f.Replace {
		if !modfile.IsDirectoryPath(r.New.Path) {
			add(r.New.Path)
		}
	}
	return out
}

// holdGoModules decides which of modules the dependency setup in sb may
// not fetch (goHeld), asking sb for its module settings, and returns the
// line to put before each of its commands that holds them; "" and none
// when the setup network is not an allowlist (none at all, or `network:
// open` that the operator allows).
func (r *run) holdGoModules(ctx context.Context, sb sandbox.Sandbox, modules []string) (string, []report.UnfetchedModule) {
	eg := r.egressSpec()
	if len(modules) == 0 || !r.clone.cfg.Network() || eg == nil {
		return "", nil
	}
	env := r.probeGoEnv(ctx, sb)
	held := goHeld(goHoldInput{Modules: modules, Env: env, Allow: eg.Allow, AnyOrigin: r.e.GoProxyAnyOrigin})
	if len(held) == 0 {
		return "", nil
	}
	noProxy, noSumDB := []string{env.NoProxy}, []string{env.NoSumDB}
	for _, h := range held {
		noProxy, noSumDB = append(noProxy, h.Module), append(noSumDB, h.Module)
	}
	join := func(s []string) string {
		return shellQuote(strings.Join(slices.DeleteFunc(s, func(v string) bool { return v == "" }), ","))
	}
	return "export GONOPROXY=" + join(noProxy) + " GONOSUMDB=" + join(noSumDB) + "\n", held
}

// probeGoEnv asks sb for its module settings; Go's defaults when its go
// cannot say.
func (r *run) probeGoEnv(ctx context.Context, sb sandbox.Sandbox) goEnv {
	res, err := sb.Exec(ctx, sandbox.Command{Script: goEnvProbe, Timeout: callTimeout, OutputLimit: 16 << 10})
	if err != nil || res.ExitCode != 0 {
		return defaultGoEnv
	}
	lines := strings.Split(strings.TrimRight(string(res.Stdout.Head), "\n"), "\n")
	if len(lines) != 3 {
		return defaultGoEnv
	}
	env := goEnv{Proxy: strings.TrimSpace(lines[0]), NoProxy: strings.TrimSpace(lines[1]), NoSumDB: strings.TrimSpace(lines[2])}
	if env.Proxy == "" {
		env.Proxy = defaultGoEnv.Proxy
	}
	return env
}

// notFetched are the modules the last dependency setup after the change
// held back: the final checks ran without them.
func (r *run) notFetched() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.fin.deps) - 1; i >= 0; i-- {
		if d := r.fin.deps[i]; !d.ByModel {
			var out []string
			for _, m := range d.NotFetched {
				out = append(out, "Go module "+m.Module)
			}
			return out
		}
	}
	return nil
}
