package main

import (
	"context"
	"fmt"
	"math"
	"net/netip"
	"os"
	"strconv"
	"strings"

	units "github.com/docker/go-units"

	"github.com/patchwright/patchwright/agent/provider"
	"github.com/patchwright/patchwright/agent/secrets"
	"github.com/patchwright/patchwright/jobs/pipeline"
	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/docker"
	"github.com/patchwright/patchwright/sandbox/egress"
)

// sandboxSettings shape every sandbox of every command: serve's embedded
// worker, worker, run and eval read them from the one table below, and
// newExecutor is the one place they reach a pipeline.Executor, so that
// eval measures what users run.
type sandboxSettings struct {
	// image is the operator's default image, for repositories whose
	// .github/agent.yml names none; "" = pipeline.DefaultImage.
	image string
	// limits: zero fields take sandbox.DefaultLimits.
	limits sandbox.Limits
	// runtime is the OCI runtime; "" = the engine's default.
	runtime string
	// maxChangeBytes bounds a change; 0 = gitrepo.DefaultMaxChangeBytes.
	maxChangeBytes int64
	// maxRunCostUSD caps one run's estimated model cost; 0 = no cap.
	maxRunCostUSD float64
	// prices is the price table (PATCHWRIGHT_PRICES over the built-in
	// one), the same for every cost a command shows, meters or enforces.
	prices provider.Prices
	// egressAllow are host names every setup network reaches.
	egressAllow []string
	// egressOpen are the address ranges the egress proxy may reach though
	// private (PATCHWRIGHT_EGRESS_ALLOW_CIDRS); nil = none.
	egressOpen []netip.Prefix
	// allowOpenNetwork honours a repository's `network: open`.
	allowOpenNetwork bool
	// goProxyAnyOrigin lets dependency setup fetch a new Go module
	// through a module proxy whatever its host.
	goProxyAnyOrigin bool
	// setupSecrets are the setup-only secrets by repository; nil = none.
	setupSecrets secrets.SetupSecrets
	// pull says which registries images may be pulled from, with which
	// credentials; zero = nothing is pulled.
	pull docker.PullOptions
}

// rawSandbox is the sandbox settings as given.
type rawSandbox struct {
	image, memory, cpus, pids, runtime, maxChange, maxRunCost string
	egressAllow, egressCIDRs, openNetwork, setupSecrets       string
	goProxyAnyOrigin, pullRegistries, registryAuth            string
}

// table is the sandbox settings' part of the configuration (docs/design.md §4.2).
// serve and worker offer each as a flag too; run and eval read the
// variables only, beside their own --image, which overrides the image of
// every run.
func (r *rawSandbox) table() []setting {
	return []setting{
		{env: "PATCHWRIGHT_SANDBOX_IMAGE", flag: "sandbox-image", group: groupSandbox, kind: "image", shown: pipeline.DefaultImage, usage: "default sandbox image when .github/agent.yml names none", dst: &r.image},
		{env: "PATCHWRIGHT_SANDBOX_MEMORY", flag: "sandbox-memory", group: groupSandbox, kind: "size", shown: "2g", usage: "memory limit of each sandbox, no swap, e.g. 4g", dst: &r.memory},
		{env: "PATCHWRIGHT_SANDBOX_CPUS", flag: "sandbox-cpus", group: groupSandbox, kind: "float", shown: "1", usage: "CPUs of each sandbox, e.g. 1.5", dst: &r.cpus},
		{env: "PATCHWRIGHT_SANDBOX_PIDS", flag: "sandbox-pids", group: groupSandbox, kind: "int", shown: "512", usage: "process limit of each sandbox", dst: &r.pids},
		{env: "PATCHWRIGHT_SANDBOX_RUNTIME", flag: "sandbox-runtime", group: groupSandbox, shown: "the engine's", usage: "OCI runtime of the sandboxes, e.g. runsc for gVisor", dst: &r.runtime},
		{env: "PATCHWRIGHT_MAX_CHANGE_BYTES", flag: "max-change-bytes", group: groupSandbox, kind: "size", shown: "256m", usage: "largest change a run may make, all changed files together, e.g. 256m; past it the run stops as change_too_large", dst: &r.maxChange},
		{env: "PATCHWRIGHT_MAX_RUN_COST_USD", flag: "max-run-cost-usd", group: groupSandbox, kind: "dollars", shown: "no cap", usage: "cap on one run's estimated model cost in US dollars, checked between steps; a repository's limits.max_cost_usd may lower it; past it the run stops as budget_exceeded and its work is pushed as a draft", dst: &r.maxRunCost},
		{env: "PATCHWRIGHT_PULL_REGISTRIES", flag: "pull-registries", group: groupSandbox, kind: "list", shown: "none: nothing is pulled", usage: "registries an image named by image: or services: (or the default image) may be pulled from when the engine does not have it, comma-separated hosts, e.g. docker.io,ghcr.io,registry.example.com:5000; the image is resolved to its digest once per run and every container of the run uses that digest; an image from another registry must be on the engine already", dst: &r.pullRegistries},
		{env: "PATCHWRIGHT_REGISTRY_AUTH_FILE", flag: "registry-auth-file", group: groupSandbox, kind: "path", usage: "file of the credentials pulls use, in Docker's config.json shape ({\"auths\": {\"ghcr.io\": {\"auth\": \"base64 of user:token\"}}}); they go to the engine with the pull only, never into a container", dst: &r.registryAuth},
		{env: "PATCHWRIGHT_EGRESS_ALLOW", flag: "egress-allow", group: groupNetwork, kind: "list", usage: "host names every repository's setup reaches besides its ecosystems' registries and its network.allow, comma-separated: host, host:port or *.domain", dst: &r.egressAllow},
		{env: "PATCHWRIGHT_EGRESS_ALLOW_CIDRS", flag: "egress-allow-cidrs", group: groupNetwork, kind: "list", usage: "address ranges the setup network's proxy may reach though private, link-local, shared or a Docker network's (refused by default whatever a repository's network.allow says), comma-separated CIDRs or addresses, e.g. 10.20.0.0/16 for a registry on the LAN; a host there is still reached only when an allowlist names it; loopback and the worker's own addresses are never opened", dst: &r.egressCIDRs},
		{env: "PATCHWRIGHT_ALLOW_OPEN_NETWORK", flag: "allow-open-network", group: groupNetwork, kind: "bool", shown: "false", usage: "lets a repository's network: open give setup the whole internet instead of the allowlist", dst: &r.openNetwork},
		{env: "PATCHWRIGHT_GOPROXY_ANY_ORIGIN", flag: "goproxy-any-origin", group: groupNetwork, kind: "bool", shown: "false", usage: "lets dependency setup on a changed tree fetch a Go module the default branch does not name through a module proxy whatever its host; by default such a module is fetched only when an allowlist names its host, since the proxy fetches from any origin and would carry the module path there", dst: &r.goProxyAnyOrigin},
		{env: "PATCHWRIGHT_SETUP_SECRETS_FILE", flag: "setup-secrets-file", group: groupNetwork, kind: "path", usage: "YAML file mapping repositories (owner/name) to setup-only secrets (NAME: value), given to setup containers only", dst: &r.setupSecrets},
	}
}

// parse checks the settings; an empty one keeps its default.
func (r rawSandbox) parse() (sandboxSettings, error) {
	lim, err := sandboxLimits(r.memory, r.cpus, r.pids)
	if err != nil {
		return sandboxSettings{}, err
	}
	out := sandboxSettings{image: strings.TrimSpace(r.image), limits: lim, runtime: strings.TrimSpace(r.runtime)}
	if r.maxChange != "" {
		n, err := units.RAMInBytes(r.maxChange)
		if err != nil || n < 1<<20 {
			return sandboxSettings{}, fmt.Errorf("PATCHWRIGHT_MAX_CHANGE_BYTES: %q is not a size of at least 1m, such as 256m", r.maxChange)
		}
		out.maxChangeBytes = n
	}
	if r.maxRunCost != "" {
		f, err := strconv.ParseFloat(r.maxRunCost, 64)
		if err != nil || !(f > 0) || math.IsInf(f, 0) {
			return sandboxSettings{}, fmt.Errorf("PATCHWRIGHT_MAX_RUN_COST_USD: %q is not a positive amount of dollars, such as 2.50", r.maxRunCost)
		}
		out.maxRunCostUSD = f
	}
	if out.prices, err = provider.PricesFromEnv(nil); err != nil {
		return sandboxSettings{}, err
	}
	for _, e := range strings.FieldsFunc(r.egressAllow, func(c rune) bool { return c == ',' || c == ' ' }) {
		if err := egress.CheckEntry(e); err != nil {
			return sandboxSettings{}, fmt.Errorf("PATCHWRIGHT_EGRESS_ALLOW: %w", err)
		}
		out.egressAllow = append(out.egressAllow, e)
	}
	if out.egressOpen, err = egress.ParseRanges(r.egressCIDRs); err != nil {
		return sandboxSettings{}, fmt.Errorf("PATCHWRIGHT_EGRESS_ALLOW_CIDRS: %w", err)
	}
	if r.openNetwork != "" {
		b, err := strconv.ParseBool(r.openNetwork)
		if err != nil {
			return sandboxSettings{}, fmt.Errorf("PATCHWRIGHT_ALLOW_OPEN_NETWORK: %q is not true or false", r.openNetwork)
		}
		out.allowOpenNetwork = b
	}
	if r.goProxyAnyOrigin != "" {
		b, err := strconv.ParseBool(r.goProxyAnyOrigin)
		if err != nil {
			return sandboxSettings{}, fmt.Errorf("PATCHWRIGHT_GOPROXY_ANY_ORIGIN: %q is not true or false", r.goProxyAnyOrigin)
		}
		out.goProxyAnyOrigin = b
	}
	if f := strings.TrimSpace(r.setupSecrets); f != "" {
		s, err := secrets.LoadSetupSecrets(f)
		if err != nil {
			return sandboxSettings{}, fmt.Errorf("PATCHWRIGHT_SETUP_SECRETS_FILE: %w", err)
		}
		out.setupSecrets = s
	}
	if out.pull, err = r.parsePull(); err != nil {
		return sandboxSettings{}, err
	}
	return out, nil
}

// parsePull reads the registries images may be pulled from and the
// credentials for them.
func (r rawSandbox) parsePull() (docker.PullOptions, error) {
	var p docker.PullOptions
	var err error
	if p.Registries, err = docker.ParseRegistries(r.pullRegistries); err != nil {
		return p, fmt.Errorf("PATCHWRIGHT_PULL_REGISTRIES: %w", err)
	}
	if f := strings.TrimSpace(r.registryAuth); f != "" {
		if p.Auth, err = docker.LoadRegistryAuth(f); err != nil {
			return p, fmt.Errorf("PATCHWRIGHT_REGISTRY_AUTH_FILE: %w", err)
		}
	}
	return p, nil
}

// engineOptions are the container engine's options that come from the
// sandbox settings; unfenced is docker.Options.UnfencedSetup (run's and
// eval's).
func (s sandboxSettings) engineOptions(unfenced bool) docker.Options {
	return docker.Options{UnfencedSetup: unfenced, EgressOpen: s.egressOpen, Pull: s.pull}
}

// sandboxFromEnv reads the sandbox settings from the environment, as run
// and eval do.
func sandboxFromEnv() (sandboxSettings, error) {
	var raw rawSandbox
	for _, s := range raw.table() {
		*s.dst = s.def
		if v, ok := os.LookupEnv(s.env); ok {
			*s.dst = v
		}
	}
	return raw.parse()
}

// engine is what an executor needs of the container engine
// (sandbox/docker.Docker is one).
type engine interface {
	sandbox.Runner
	pipeline.ImageResolver
	// ImageExists is eval's check of its tasks' images.
	ImageExists(ctx context.Context, image string) (bool, error)
}

// newExecutor is the executor every command starts from: the engine, the
// sandbox settings, the bounded work tree and the per-repository caches.
// The commands then set only what is theirs (the model, their flags, a
// metering wrapper), never a sandbox setting.
func newExecutor(s sandboxSettings, e engine) pipeline.Executor {
	image := s.image
	if image == "" {
		image = pipeline.DefaultImage
	}
	exec := pipeline.Executor{
		Sandboxes:        e,
		Images:           e,
		DefaultImage:     image,
		SandboxLimits:    s.limits,
		SandboxRuntime:   s.runtime,
		BoundWorkspace:   boundWorkspace(),
		CacheVolume:      pipeline.RepoCacheVolume,
		MaxChangeBytes:   s.maxChangeBytes,
		MaxRunCostUSD:    s.maxRunCostUSD,
		Prices:           s.prices,
		EgressAllow:      s.egressAllow,
		AllowOpenNetwork: s.allowOpenNetwork,
		GoProxyAnyOrigin: s.goProxyAnyOrigin,
		SetupSecrets:     s.setupSecrets,
		Version:          currentBuild().String(),
	}
	if rc, ok := e.(interface {
		RemoveCache(ctx context.Context, volume string) error
	}); ok {
		exec.RemoveCache = rc.RemoveCache
	}
	return exec
}

// sandboxLimits parses the sandbox settings; an empty one keeps its
// default.
func sandboxLimits(memory, cpus, pids string) (sandbox.Limits, error) {
	var lim sandbox.Limits
	if memory != "" {
		n, err := units.RAMInBytes(memory)
		if err != nil || n < 64<<20 {
			return lim, fmt.Errorf("PATCHWRIGHT_SANDBOX_MEMORY: %q is not a size of at least 64m, such as 4g", memory)
		}
		lim.MemoryBytes = n
	}
	if cpus != "" {
		f, err := strconv.ParseFloat(cpus, 64)
		if err != nil || f <= 0 || f > 1024 {
			return lim, fmt.Errorf("PATCHWRIGHT_SANDBOX_CPUS: %q is not a positive number of CPUs", cpus)
		}
		lim.CPUs = f
	}
	if pids != "" {
		n, err := strconv.ParseInt(pids, 10, 64)
		if err != nil || n < 16 {
			return lim, fmt.Errorf("PATCHWRIGHT_SANDBOX_PIDS: %q is not a number of at least 16", pids)
		}
		lim.PIDs = n
	}
	return lim, nil
}
