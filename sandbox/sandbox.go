// Package sandbox runs untrusted repository commands in locked-down
// containers and gives the host escape-proof access to a job's workspace.
//
// The container is the security boundary. The command policy (Policy) is a
// courtesy that tells the model early why a command will not be run; it is
// not what keeps a hostile repository in.
package sandbox

import (
	"context"
	"errors"
	"time"
)

// WorkspaceDir is where the job's workspace is mounted inside every sandbox.
const WorkspaceDir = "/workspace"

// Runner creates sandboxes. The Docker implementation is Docker; tests of
// other packages may use their own at this seam.
type Runner interface {
	// Create starts a container for one job and returns once commands can
	// run in it. The caller must Close it.
	Create(ctx context.Context, spec Spec) (Sandbox, error)
}

// Sandbox is one job's container. It is safe for concurrent use; Exec
// calls run one at a time.
type Sandbox interface {
	// Exec runs cmd.Script with /bin/sh -c in WorkspaceDir. A command that
	// ran and exited non-zero is not an error: the error is for commands
	// that could not be run at all (policy refusal, a dead container, a
	// cancelled context).
	//
	// Nothing outlives a command: when Exec returns, every process the
	// command started is gone, background jobs and processes that left
	// its session, process group or environment (setsid, double forks,
	// env -i) included. Commands therefore run one at a time: a call made
	// while another runs waits for it to end (or for its own ctx), and
	// never sees the other's processes.
	Exec(ctx context.Context, cmd Command) (Result, error)
	// DisableNetwork ends the setup phase: no later command has a network.
	// Files and caches written before stay usable.
	DisableNetwork(ctx context.Context) error
	// ID names the container for logs and the reaper.
	ID() string
	// Close removes the container. It does so even when the caller's
	// context has already been cancelled; closing twice is harmless.
	// When Close returns nil, no process of the sandbox is left, a
	// command still running included (its Exec fails): nothing can write
	// the workspace through the sandbox any more. The pipeline closes the
	// agent's sandbox before it reads the change list.
	Close() error
}

// Spec describes the sandbox for one job. Zero values take the defaults
// documented on each field.
type Spec struct {
	// Image is the container image. Required.
	Image string
	// Workspace is the host directory bind-mounted at WorkspaceDir. It must
	// be an absolute path. Required.
	Workspace string
	// JobID labels the container so leaked ones can be traced and reaped.
	// Required.
	JobID string
	// Network gives the container a network for the setup phase (the
	// pipeline then runs the agent in another container without one;
	// DisableNetwork serves a caller that keeps one container). Default
	// false: no network at all.
	Network bool
	// Egress, with Network, confines that network to an allowlist: the
	// sandbox reaches nothing but the runner's egress proxy (HTTP_PROXY
	// and HTTPS_PROXY point at it), which lets through only the host
	// names of Egress.Allow. Nil: the network reaches the internet.
	Egress *Egress
	// ServiceNetwork is the job's service network (Services.Network):
	// the sandbox joins it, so it reaches the job's services by name,
	// and, without Network, nothing else. Empty: none.
	ServiceNetwork string
	// ServiceHosts are the services' names, which an allowlisted sandbox
	// reaches directly, not through the proxy (NO_PROXY).
	ServiceHosts []string
	// Limits bound the container's resources. Zero fields take
	// DefaultLimits.
	Limits Limits
	// Runtime is the OCI runtime, for example "runsc" for gVisor. Empty
	// means the engine's default. Create fails if the engine lacks it.
	Runtime string
	// TTL is how long the container may live before the reaper removes it.
	// Default DefaultTTL.
	TTL time.Duration
	// Env is the complete environment of every command; nothing of the
	// host's is passed. HOME and cache variables are set by the sandbox.
	Env []string
	// CacheVolume names a Docker volume mounted at HOME/.cache (the Go,
	// pip and XDG caches), shared by every sandbox that names it and kept
	// after Close: the pipeline names one per repository, so the cache's
	// trust boundary is the repository whose commands filled it. Docker
	// fills a new volume from the image, so an image can ship warm caches.
	// Empty: the caches live in HOME's tmpfs, empty at every start.
	CacheVolume string
	// CacheFrom, when set, names the volume a CacheVolume that does not
	// exist yet starts as a copy of: the pipeline gives a job whose
	// change needs new dependencies a cache of its own, seeded from the
	// repository's shared one, so that what dependency setup fetches for
	// the model's change reaches that job's checks and never a later
	// job's. Empty: a new volume starts from the image, as documented on
	// CacheVolume. Ignored when CacheVolume exists already.
	CacheFrom string
	// CacheDir, when set, is a host directory (absolute; made if missing)
	// that holds a CacheVolume this Create makes: the volume is a bind of
	// it. The pipeline puts a job's own cache on the job's bounded file
	// system this way, so that what a job's commands write into the cache
	// counts against the job's disk bound, as the work tree does. Empty:
	// the engine's volume directory, bounded only by the host's disk.
	// Ignored when CacheVolume exists already.
	CacheDir string
	// CacheReadOnly keeps this sandbox from writing CacheVolume, so that
	// nothing it does reaches a later sandbox's builds: the volume is
	// mounted read-only, and the cache directory is a copy of it made at
	// Create, on a tmpfs of Limits.TmpfsBytes that counts against
	// Limits.MemoryBytes and goes with the sandbox. Builds see the warm
	// cache and may write it. The pipeline writes the cache only from
	// trusted commands (setup from the default branch's configuration, the
	// baseline) and sets CacheReadOnly for the agent phase and the final
	// checks. Default false: writable. Without CacheVolume it changes
	// nothing: the caches are per-sandbox already.
	CacheReadOnly bool
}

// Egress is a sandbox's allowlist (see Spec.Egress).
type Egress struct {
	// Allow are egress.Allowlist entries: "host", "host:port",
	// "*.domain".
	Allow []string
	// Phase is recorded with each refusal ("setup").
	Phase string
	// Refused, if not nil, is called for each connection the proxy
	// refused, and each the firewall refused because it went around the
	// proxy, with the command that was running; it may be called from
	// other goroutines, and must be safe for that.
	Refused func(Refusal)
}

// ServiceRunner starts a job's service containers; the Docker runner is
// one.
type ServiceRunner interface {
	StartServices(ctx context.Context, spec ServicesSpec) (Services, error)
}

// ServicesSpec describes a job's services.
type ServicesSpec struct {
	JobID    string
	Services []Service
	// Limits, Runtime and TTL are as in Spec, for each service container.
	Limits  Limits
	Runtime string
	TTL     time.Duration
	// Ready bounds the wait for every service's health command to pass.
	// Default DefaultServiceReady.
	Ready time.Duration
	// DiskDir, when set, is a directory on the job's bounded file system
	// (made if missing). The volumes each service's image declares (a
	// database's data directory) are kept under it, so they count against
	// that file system's size; and the services' writable layers are
	// measured while they run: once they hold more than the file system
	// has free, the services are stopped and the job's commands fail with
	// ErrDiskBound. Empty: services are bounded only by the host's disk.
	DiskDir string
}

// DefaultServiceReady is ServicesSpec.Ready's default.
const DefaultServiceReady = 2 * time.Minute

// Service is one service container.
type Service struct {
	// Name is the host name the job's sandboxes reach it by.
	Name  string
	Image string
	// Env is its environment, KEY=VALUE.
	Env []string
	// Health is a command and its arguments, run in the container until
	// it exits 0; empty: ready once started.
	Health []string
}

// Services are a job's running services, on a network of their own.
type Services interface {
	// Network is the network sandboxes join to reach them
	// (Spec.ServiceNetwork).
	Network() string
	// Logs returns the tail of each service's output, by name.
	Logs(ctx context.Context) map[string]string
	// Close removes the services and their network; twice is harmless.
	Close() error
}

// Refusal is one connection the proxy refused.
type Refusal struct {
	Host string `json:"host"`
	Port int    `json:"port"`
	// Phase is the pipeline phase the sandbox was created for ("setup").
	Phase string `json:"phase"`
	// Command is the script the sandbox was running; "" between commands.
	Command string `json:"command,omitempty"`
	// Reason says why: "not on the allowlist", that the name resolved
	// to an address no sandbox may reach, or, for a connection that went
	// around the proxy and was refused by the firewall, "bypassed the
	// proxy: " and what it was (a direct TCP connection, UDP, a DNS query
	// for a name). Host is then the address it went to.
	Reason string `json:"reason"`
}

// Limits bound a sandbox's resources.
type Limits struct {
	MemoryBytes int64   // hard limit, no swap; default 2 GiB
	CPUs        float64 // default 1.0
	PIDs        int64   // default 512
	OpenFiles   int64   // RLIMIT_NOFILE; default 4096
	TmpfsBytes  int64   // size of each writable tmpfs; default 1 GiB
}

// DefaultLimits are used for every zero field of Spec.Limits.
var DefaultLimits = Limits{
	MemoryBytes: 2 << 30,
	CPUs:        1.0,
	PIDs:        512,
	OpenFiles:   4096,
	TmpfsBytes:  1 << 30,
}

// DefaultTTL is the lifetime of a sandbox container when Spec.TTL is zero.
const DefaultTTL = 2 * time.Hour

// Command is one shell command to run in a sandbox.
type Command struct {
	// Script is passed to /bin/sh -c.
	Script string
	// Timeout is enforced inside the container with SIGKILL, whatever the
	// command does. Default DefaultTimeout.
	Timeout time.Duration
	// OutputLimit caps the bytes kept of each stream (head plus tail).
	// Default DefaultOutputLimit.
	OutputLimit int
}

// DefaultTimeout applies to a Command with no Timeout.
const DefaultTimeout = 10 * time.Minute

// DefaultOutputLimit applies to a Command with no OutputLimit.
const DefaultOutputLimit = 64 << 10

// Result is what a command did.
type Result struct {
	ExitCode int
	Duration time.Duration
	Stdout   Output
	Stderr   Output
	// TimedOut is set when the command was killed at its time limit.
	TimedOut bool
	// OOMKilled is set when the command failed (non-zero exit) and the
	// kernel killed one of its processes, while it ran, for exceeding the
	// sandbox's memory limit. An OOM kill during an earlier command is
	// never reported for a later one.
	OOMKilled bool
}

// Output is one stream of a command, capped to a head and a tail.
type Output struct {
	Head []byte
	Tail []byte
	// Total is the number of bytes the command wrote to the stream.
	Total int64
	// SHA256 is the hex digest of every byte written, kept or not.
	SHA256 string
}

// Truncated reports whether bytes were dropped between Head and Tail.
func (o Output) Truncated() bool { return int64(len(o.Head)+len(o.Tail)) < o.Total }

// ErrWedged is wrapped by Exec's error when a command's processes could
// not be stopped after it returned and the sandbox was killed for it:
// the command's doing (one fighting its cleanup, freezing every process
// it can reach), so the run it belongs to ends, and is not run again as
// if the engine had failed.
var ErrWedged = errors.New("sandbox_wedged")

// ErrDiskBound is wrapped by Exec's error once the job's services wrote
// more than the job's disk bound leaves them (ServicesSpec.DiskDir): the
// services were stopped, and every later command of the job fails with
// it, so the run ends saying why instead of its checks failing against
// dead services.
var ErrDiskBound = errors.New("disk_bound_exceeded")

// ErrClosed is returned by Exec on a sandbox that was closed.
var ErrClosed = errors.New("sandbox: closed")
