package docker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"

	"github.com/patchwright/patchwright/internal/logkey"
	"github.com/patchwright/patchwright/sandbox"
)

// Labels put on every sandbox container.
const (
	// LabelSandbox marks a container as a Patchwright sandbox; the reaper
	// only ever touches containers carrying it.
	LabelSandbox = "org.patchwright.sandbox"
	// LabelJob holds sandbox.Spec.JobID.
	LabelJob = "org.patchwright.job"
	// LabelExpires holds the time (RFC 3339, UTC) after which the reaper
	// may remove the container.
	LabelExpires = "org.patchwright.expires"
	// LabelCache marks a cache volume (sandbox.Spec.CacheVolume) that Create made;
	// PruneCaches only ever touches volumes carrying it.
	LabelCache = "org.patchwright.cache"
)

// Defaults of Options.
const (
	DefaultUser         = "1000:1000"
	DefaultInitUser     = "65534:65534"
	DefaultHome         = "/home/agent"
	DefaultKillGrace    = 5 * time.Second
	DefaultReapInterval = 5 * time.Minute
	DefaultCacheMaxAge  = 7 * 24 * time.Hour
)

// closeTimeout bounds the calls made on a fresh context after the caller's
// was cancelled: removing a container, killing a command.
const closeTimeout = 30 * time.Second

// Options configure a Docker runner. Zero fields take the defaults
// named on each.
type Options struct {
	// User runs every command, as numeric "uid:gid" (it also owns the
	// tmpfs mounts). Default DefaultUser. The workspace must be writable by
	// it.
	User string
	// InitUser runs the container's PID 1 (docker-init and a sleep), as
	// numeric "uid:gid". It differs from User so that a command's
	// `kill -9 -1` cannot end the container. Default DefaultInitUser.
	InitUser string
	// Home is HOME inside the sandbox, a writable tmpfs that holds the
	// caches (Go, npm, pip, XDG). Default DefaultHome.
	Home string
	// sandbox.Policy is checked before every command. Nil means sandbox.DefaultPolicy();
	// use &sandbox.Policy{} to allow everything.
	Policy *sandbox.Policy
	// KillGrace is how long past a command's timeout the host waits for
	// the in-container `timeout` to end it before killing the command's
	// processes itself. Default DefaultKillGrace.
	KillGrace time.Duration
	// UnfencedSetup lets a setup sandbox fall back to Docker's default
	// bridge, from which the host's own services are reachable, when the
	// firewalled setup network cannot be made here (not root, no
	// iptables). For `patchwright run`, whose setup commands are the
	// user's own on the user's machine; the worker leaves it false and
	// fails closed. Default false.
	UnfencedSetup bool
	// CacheMaxAge is how long a cache volume lives after its creation:
	// RunReaper removes older ones that no sandbox is using, and the next
	// sandbox naming one starts again from the image's caches. Docker does
	// not record when a volume was last used, so age is the bound that
	// keeps caches of repositories no longer worked on from filling the
	// disk. Default DefaultCacheMaxAge.
	CacheMaxAge time.Duration
	// Starter is the path of the resident starter binary (a static build
	// of sandbox/docker/starter) copied into each sandbox, which then
	// starts every command without an engine exec of its own (see
	// docs/security-details.md#the-resident-starter). Default: $PATCHWRIGHT_SANDBOX_STARTER
	// ("off" for none), else patchwright-starter beside the executable;
	// with none found every command is an engine exec.
	Starter string
	// EngineExec runs every command as its own engine exec, as before the
	// starter, whatever Starter says.
	EngineExec bool
	// EgressOpen are the address ranges the operator opened to the
	// egress proxy (PATCHWRIGHT_EGRESS_ALLOW_CIDRS, egress.ParseRanges):
	// a repository's allowlisted host there is reached though the range
	// is private or one of this engine's networks. Default none.
	EgressOpen []netip.Prefix
	// Pull says which registries ResolveImage may pull an image the
	// engine does not have from, with which credentials. Zero: nothing
	// is pulled.
	Pull PullOptions
}

// Docker is the Runner on a Docker engine. It is safe for concurrent use.
type Docker struct {
	cli      *client.Client
	user     string
	uid, gid int
	initUser string
	initUID  int
	home     string
	policy   *sandbox.Policy
	grace    time.Duration
	cacheAge time.Duration
	// starterBin is the starter binary; nil runs engine execs.
	starterBin []byte
	// unfencedSetup is Options.UnfencedSetup.
	unfencedSetup bool
	// egressOpen is Options.EgressOpen.
	egressOpen []netip.Prefix
	// pull is Options.Pull.
	pull PullOptions
	// egressLookup resolves the proxy's host names; nil is the system's
	// resolver. Tests set it (export_test.go) to stand for a worker on a
	// compose network, whose resolver answers container names.
	egressLookup func(ctx context.Context, host string) ([]netip.Addr, error)

	egressMu sync.Mutex
	egress   *egressState // nil until a sandbox needs the proxy

	// stopped holds, by job ID, why a job's commands may no longer run
	// (servicedisk.go).
	stoppedMu sync.Mutex
	stopped   map[string]error
}

// New connects to the engine named by the environment (DOCKER_HOST
// and friends, default the local socket), negotiating the API version, and
// checks that it answers.
func New(ctx context.Context, opts Options) (*Docker, error) {
	d := &Docker{
		user:          cmp.Or(opts.User, DefaultUser),
		initUser:      cmp.Or(opts.InitUser, DefaultInitUser),
		home:          cmp.Or(opts.Home, DefaultHome),
		policy:        opts.Policy,
		unfencedSetup: opts.UnfencedSetup,
		grace:         opts.KillGrace,
		cacheAge:      opts.CacheMaxAge,
		egressOpen:    slices.Clone(opts.EgressOpen),
		pull:          opts.Pull,
	}
	if d.cacheAge <= 0 {
		d.cacheAge = DefaultCacheMaxAge
	}
	if d.policy == nil {
		d.policy = sandbox.DefaultPolicy()
	}
	if d.grace <= 0 {
		d.grace = DefaultKillGrace
	}
	var err error
	if d.starterBin, err = loadStarter(opts); err != nil {
		return nil, err
	}
	if d.uid, d.gid, err = parseUser(d.user); err != nil {
		return nil, fmt.Errorf("sandbox user: %w", err)
	}
	if d.initUID, _, err = parseUser(d.initUser); err != nil {
		return nil, fmt.Errorf("sandbox init user: %w", err)
	}
	if d.initUID == d.uid {
		// A command's kill -9 -1 would end PID 1, and the host could not
		// tell a command's processes from the container's own.
		return nil, fmt.Errorf("sandbox init user %s: must differ from the command user %s", d.initUser, d.user)
	}
	if !filepath.IsAbs(d.home) || d.home == "/" || d.home == sandbox.WorkspaceDir {
		return nil, fmt.Errorf("sandbox home %q: must be an absolute path other than / and %s", d.home, sandbox.WorkspaceDir)
	}
	d.cli, err = client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation(),
		client.WithTimeout(callTimeout), withBoundDials)
	if err != nil {
		return nil, fmt.Errorf("docker client: %w", err)
	}
	if _, err := d.cli.Ping(ctx); err != nil {
		d.cli.Close()
		return nil, fmt.Errorf("docker engine does not answer (is dockerd running?): %w", err)
	}
	return d, nil
}

// Close releases the client's connections. Sandboxes must be closed first.
func (d *Docker) Close() error { return errors.Join(d.closeEgress(), d.cli.Close()) }

func parseUser(s string) (uid, gid int, err error) {
	u, g, ok := strings.Cut(s, ":")
	if ok {
		uid, err = strconv.Atoi(u)
		if err == nil {
			gid, err = strconv.Atoi(g)
		}
	}
	if !ok || err != nil || uid < 0 || gid < 0 {
		return 0, 0, fmt.Errorf("%q is not a numeric uid:gid", s)
	}
	if uid == 0 {
		return 0, 0, fmt.Errorf("%q: the sandbox never runs as root", s)
	}
	return uid, gid, nil
}

// Create starts a container for spec and returns once commands can run in
// it. See sandbox.Spec for the defaults.
func (d *Docker) Create(ctx context.Context, spec sandbox.Spec) (sandbox.Sandbox, error) {
	lim, err := d.check(ctx, &spec)
	if err != nil {
		return nil, err
	}
	ttl := spec.TTL
	if ttl <= 0 {
		ttl = sandbox.DefaultTTL
	}
	config := &container.Config{
		Image: spec.Image,
		User:  d.initUser,
		Env:   d.env(spec.Env),
		// The image's ENTRYPOINT is cleared: a public image's (a
		// database's start script, a CLI) would wrap or replace the
		// sleep that keeps the sandbox alive for its commands. [""] is
		// the engine's way to say none (`docker run --entrypoint ""`);
		// an empty list would be taken as unset.
		Entrypoint:  []string{""},
		Cmd:         []string{"sleep", "infinity"},
		WorkingDir:  sandbox.WorkspaceDir,
		Healthcheck: noHealthcheck,
		Labels: map[string]string{
			LabelSandbox: "1",
			LabelJob:     spec.JobID,
			LabelExpires: time.Now().Add(ttl).UTC().Format(time.RFC3339),
		},
	}
	if spec.CacheVolume != "" {
		if err := d.prepareCache(ctx, spec); err != nil {
			return nil, err
		}
	}
	host := d.hostConfig(spec, lim)
	if spec.Network && spec.Egress != nil {
		url, err := d.ensureEgress(ctx)
		if err != nil && !d.unfencedSetup {
			return nil, err
		}
		if err != nil {
			// `patchwright run` without root: Docker's default bridge, open.
			host.NetworkMode, host.Sysctls = "bridge", nil
			spec.Egress = nil
		} else {
			host.NetworkMode = EgressNetwork
			config.Env = d.env(append(slices.Clone(spec.Env), proxyEnv(url, spec.ServiceHosts)...))
		}
	} else if spec.Network {
		if err := d.ensureSetupNetwork(ctx); err != nil {
			if !d.unfencedSetup {
				return nil, err
			}
			// Docker's default bridge, as before the setup network.
			host.NetworkMode, host.Sysctls = "bridge", nil
		}
	}
	if spec.ServiceNetwork != "" {
		if !spec.Network {
			// The services and nothing else.
			host.NetworkMode, host.Sysctls = container.NetworkMode(spec.ServiceNetwork), setupSysctls()
		}
	}
	cacheLayer := ""
	if spec.CacheReadOnly && spec.CacheVolume != "" {
		cacheLayer = d.readOnlyCache(host, spec.CacheVolume, lim.TmpfsBytes)
	}
	if err := d.maskImageVolumes(ctx, spec.Image, host, d.tmpfsOptions(lim, "1777")); err != nil {
		return nil, err
	}
	created, err := d.createContainer(ctx, config, host)
	if err != nil {
		return nil, fmt.Errorf("create sandbox for job %s from %s: %w", spec.JobID, spec.Image, err)
	}
	c := &dockerSandbox{d: d, id: created.ID, jobID: spec.JobID}
	if spec.ServiceNetwork != "" && spec.Network {
		// A second network is joined before the start, so the first
		// command sees both.
		if err := d.cli.NetworkConnect(ctx, spec.ServiceNetwork, created.ID, nil); err != nil {
			return nil, errors.Join(fmt.Errorf("connect sandbox %.12s to the job's services: %w", created.ID, err), c.Close())
		}
	}
	if err := d.cli.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		err = fmt.Errorf("start sandbox %.12s for job %s: %w", created.ID, spec.JobID, err)
		return nil, errors.Join(err, c.Close())
	}
	if spec.Egress != nil {
		if err := c.registerEgress(ctx, spec.Egress); err != nil {
			return nil, errors.Join(err, c.Close())
		}
	}
	if cacheLayer != "" {
		if err := c.fillCacheLayer(ctx, cacheLayer); err != nil {
			return nil, errors.Join(err, c.Close())
		}
	}
	if d.starterBin != nil {
		if c.starterErr = c.startStarter(ctx); c.starterErr != nil {
			// Engine execs then; what the failed start left of the
			// command user must not pass for the first command's.
			c.dropStarter()
			if err := c.reap(false); err != nil {
				return nil, errors.Join(err, c.Close())
			}
		}
	}
	return c, nil
}

// volumeNameRE is Docker's rule for volume names.
var volumeNameRE = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]+$`)

// check validates spec, fills its defaults and returns the limits to apply.
func (d *Docker) check(ctx context.Context, spec *sandbox.Spec) (sandbox.Limits, error) {
	switch {
	case spec.Image == "":
		return sandbox.Limits{}, errors.New("sandbox spec: Image is required")
	case spec.JobID == "":
		return sandbox.Limits{}, errors.New("sandbox spec: JobID is required")
	case !filepath.IsAbs(spec.Workspace):
		return sandbox.Limits{}, fmt.Errorf("sandbox spec: Workspace %q must be an absolute path", spec.Workspace)
	}
	if info, err := os.Stat(spec.Workspace); err != nil {
		return sandbox.Limits{}, fmt.Errorf("sandbox spec: workspace: %w", err)
	} else if !info.IsDir() {
		return sandbox.Limits{}, fmt.Errorf("sandbox spec: workspace %s is not a directory", spec.Workspace)
	}
	if spec.CacheDir != "" && !filepath.IsAbs(spec.CacheDir) {
		return sandbox.Limits{}, fmt.Errorf("sandbox spec: CacheDir %q is not an absolute path", spec.CacheDir)
	}
	if spec.CacheVolume != "" && !volumeNameRE.MatchString(spec.CacheVolume) {
		return sandbox.Limits{}, fmt.Errorf("sandbox spec: CacheVolume %q is not a volume name", spec.CacheVolume)
	}
	for _, kv := range spec.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return sandbox.Limits{}, fmt.Errorf("sandbox spec: Env entry %q is not KEY=VALUE", kv)
		}
	}
	lim, err := limitsOf(spec.Limits)
	if err != nil {
		return lim, err
	}
	if spec.Runtime != "" {
		info, err := d.cli.Info(ctx)
		if err != nil {
			return sandbox.Limits{}, fmt.Errorf("list the engine's runtimes: %w", err)
		}
		if _, ok := info.Runtimes[spec.Runtime]; !ok {
			have := make([]string, 0, len(info.Runtimes))
			for name := range info.Runtimes {
				have = append(have, name)
			}
			slices.Sort(have)
			return sandbox.Limits{}, fmt.Errorf("sandbox runtime %q is not configured on the Docker engine (it has: %s)", spec.Runtime, strings.Join(have, ", "))
		}
	}
	return lim, nil
}

// limitsOf is l with DefaultLimits in its zero fields.
func limitsOf(l sandbox.Limits) (sandbox.Limits, error) {
	lim := l
	def := sandbox.DefaultLimits
	if lim.MemoryBytes < 0 || lim.CPUs < 0 || lim.PIDs < 0 || lim.OpenFiles < 0 || lim.TmpfsBytes < 0 {
		return sandbox.Limits{}, fmt.Errorf("sandbox spec: negative limit in %+v", lim)
	}
	if lim.MemoryBytes == 0 {
		lim.MemoryBytes = def.MemoryBytes
	}
	if lim.CPUs == 0 {
		lim.CPUs = def.CPUs
	}
	if lim.PIDs == 0 {
		lim.PIDs = def.PIDs
	}
	if lim.OpenFiles == 0 {
		lim.OpenFiles = def.OpenFiles
	}
	if lim.TmpfsBytes == 0 {
		lim.TmpfsBytes = def.TmpfsBytes
	}
	return lim, nil
}

// env is the complete container environment: the spec's, then HOME and
// the cache variables, which always win. Nothing comes from the host.
// Every download cache lives under HOME/.cache, the cache volume, because
// a job's phases run in separate containers: modules that setup fetched
// must still be there for the checks, which have no network.
func (d *Docker) env(specEnv []string) []string {
	cache := d.home + "/.cache"
	ours := []string{
		"HOME=" + d.home,
		"USER=agent",
		"TMPDIR=/tmp",
		"XDG_CACHE_HOME=" + cache,
		"GOPATH=" + d.home + "/go",
		"GOMODCACHE=" + cache + "/go-mod",
		"GOCACHE=" + cache + "/go-build",
		"npm_config_cache=" + cache + "/npm",
		"PIP_CACHE_DIR=" + cache + "/pip",
		"CARGO_HOME=" + cache + "/cargo",
	}
	env := make([]string, 0, len(specEnv)+len(ours))
	for _, kv := range specEnv {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.ContainsFunc(ours, func(o string) bool { return strings.HasPrefix(o, k+"=") }) {
			env = append(env, kv)
		}
	}
	return append(env, ours...)
}

// tmpfsOptions are the mount options of a sandbox's tmpfs of mode.
func (d *Docker) tmpfsOptions(lim sandbox.Limits, mode string) string {
	return fmt.Sprintf("rw,exec,nosuid,nodev,size=%d,mode=%s,uid=%d,gid=%d", lim.TmpfsBytes, mode, d.uid, d.gid)
}

func (d *Docker) hostConfig(spec sandbox.Spec, lim sandbox.Limits) *container.HostConfig {
	// Docker mounts tmpfs noexec by default; builds run test binaries from
	// /tmp and tools from HOME, so both allow exec (but never setuid or
	// devices). They belong to the command user, not root.
	tmpfs := func(mode string) string { return d.tmpfsOptions(lim, mode) }
	network := container.NetworkMode("none")
	var sysctls map[string]string
	if spec.Network {
		network = SetupNetwork // see SetupNetwork
		sysctls = setupSysctls()
	}
	init := true
	hc := &container.HostConfig{
		Mounts: []mount.Mount{{
			Type:   mount.TypeBind,
			Source: spec.Workspace,
			Target: sandbox.WorkspaceDir,
		}},
		NetworkMode:    network,
		Sysctls:        sysctls,
		CapDrop:        []string{"ALL"},
		SecurityOpt:    []string{"no-new-privileges"},
		ReadonlyRootfs: true,
		Tmpfs: map[string]string{
			"/tmp":     tmpfs("1777"),
			d.home:     tmpfs("0755"),
			"/run":     tmpfs("0755"),
			"/var/tmp": tmpfs("1777"),
		},
		Init:    &init,
		Runtime: spec.Runtime,
		Resources: container.Resources{
			Memory:     lim.MemoryBytes,
			MemorySwap: lim.MemoryBytes, // equal to Memory: no swap
			NanoCPUs:   int64(lim.CPUs * 1e9),
			PidsLimit:  &lim.PIDs,
			Ulimits: []*container.Ulimit{
				{Name: "nofile", Soft: lim.OpenFiles, Hard: lim.OpenFiles},
			},
		},
	}
	if spec.CacheVolume != "" {
		// On a volume the caches do not count against the memory limit,
		// and they outlive the container.
		hc.Mounts = append(hc.Mounts, mount.Mount{
			Type:   mount.TypeVolume,
			Source: spec.CacheVolume,
			Target: d.home + "/.cache",
		})
	}
	return hc
}

// Reap removes every sandbox container whose expiry has passed (or whose
// expiry label cannot be read) and returns how many it removed, and the
// egress firewall rules whose owner is gone (reapEgressRules). Run it at
// start-up: containers and rules of a crashed worker are left behind.
func (d *Docker) Reap(ctx context.Context) (int, error) {
	list, err := d.cli.ContainerList(ctx, container.ListOptions{
		All:     true,
		Filters: filters.NewArgs(filters.Arg("label", LabelSandbox)),
	})
	if err != nil {
		return 0, fmt.Errorf("list sandbox containers: %w", err)
	}
	now := time.Now()
	removed := 0
	var errs []error
	for _, c := range list {
		expires, err := time.Parse(time.RFC3339, c.Labels[LabelExpires])
		if err == nil && now.Before(expires) && !d.stoppedLongAgo(ctx, c) {
			continue
		}
		err = d.cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true, RemoveVolumes: true})
		switch {
		case err == nil:
			removed++
		case cerrdefs.IsNotFound(err):
			// Closed by its owner meanwhile.
		default:
			errs = append(errs, fmt.Errorf("reap sandbox %.12s of job %s: %w", c.ID, c.Labels[LabelJob], err))
		}
	}
	if _, err := d.reapServiceNetworks(ctx); err != nil {
		errs = append(errs, err)
	}
	if canFirewall() {
		if err := d.reapEgressRules(ctx); err != nil {
			errs = append(errs, fmt.Errorf("reap egress firewall rules: %w", err))
		}
	}
	return removed, errors.Join(errs...)
}

// deadAge is how long a sandbox container must have been stopped for Reap
// to remove it before its expiry. A stopped sandbox is dead for good (its
// Exec answers ErrDead); it is left a while for its owner's Close, which
// may also still want to inspect it.
var deadAge = time.Minute

// stoppedLongAgo reports whether container c stopped over deadAge ago: one
// killed from the host whose removal the engine did not answer in time.
// A container created but not started yet is not stopped.
func (d *Docker) stoppedLongAgo(ctx context.Context, c container.Summary) bool {
	if c.State != container.StateExited && c.State != container.StateDead {
		return false
	}
	info, err := d.cli.ContainerInspect(ctx, c.ID)
	if err != nil || info.State == nil {
		return false
	}
	finished, err := time.Parse(time.RFC3339Nano, info.State.FinishedAt)
	return err == nil && time.Since(finished) >= deadAge
}

// PruneCaches removes the cache volumes Create made that are older than
// maxAge and that no container uses, and returns how many it removed.
func (d *Docker) PruneCaches(ctx context.Context, maxAge time.Duration) (int, error) {
	list, err := d.cli.VolumeList(ctx, volume.ListOptions{Filters: filters.NewArgs(filters.Arg("label", LabelCache))})
	if err != nil {
		return 0, fmt.Errorf("list cache volumes: %w", err)
	}
	removed := 0
	var errs []error
	for _, v := range list.Volumes {
		created, err := time.Parse(time.RFC3339, v.CreatedAt)
		if err == nil && time.Since(created) < maxAge {
			continue
		}
		err = d.cli.VolumeRemove(ctx, v.Name, false)
		switch {
		case err == nil:
			removed++
		case cerrdefs.IsNotFound(err) || cerrdefs.IsConflict(err):
			// Removed meanwhile, or in use: a later round takes it.
		default:
			errs = append(errs, fmt.Errorf("remove cache volume %s: %w", v.Name, err))
		}
	}
	return removed, errors.Join(errs...)
}

// RunReaper calls Reap and PruneCaches (with Options.CacheMaxAge) now
// and then every interval (DefaultReapInterval when zero) until ctx ends,
// logging what it removed and what failed to log (slog.Default() when nil).
func (d *Docker) RunReaper(ctx context.Context, every time.Duration, log *slog.Logger) {
	if every <= 0 {
		every = DefaultReapInterval
	}
	if log == nil {
		log = slog.Default()
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		n, err := d.Reap(ctx)
		if n > 0 {
			log.InfoContext(ctx, "reaped expired sandbox containers", "count", n)
		}
		if err != nil && ctx.Err() == nil {
			log.ErrorContext(ctx, "reap sandbox containers", logkey.Err, err)
		}
		n, err = d.PruneCaches(ctx, d.cacheAge)
		if n > 0 {
			log.InfoContext(ctx, "removed old cache volumes", "count", n, "max_age", d.cacheAge)
		}
		if err != nil && ctx.Err() == nil {
			log.ErrorContext(ctx, "remove old cache volumes", logkey.Err, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
