package docker

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/patchwright/patchwright/sandbox"
)

// WrapScript is wrapScript, for benchmarks that run it bare.
const WrapScript = wrapScript

// ExecSteps is the time of each engine call of one exec of argv in sb's
// container, as the command user, with nothing of Exec around it: the
// create, the start with its attach (the hijack), reading the stream to
// its end, and the inspect for the exit status. Benchmarks use it to show
// where an Exec's time goes.
func ExecSteps(ctx context.Context, sb sandbox.Sandbox, argv []string) (steps [4]time.Duration, err error) {
	c := sb.(*dockerSandbox)
	t := time.Now()
	lap := func(i int) { now := time.Now(); steps[i] = now.Sub(t); t = now }
	created, err := c.d.cli.ContainerExecCreate(ctx, c.id, container.ExecOptions{
		User: c.d.user, Cmd: argv, AttachStdout: true, AttachStderr: true,
	})
	if err != nil {
		return steps, err
	}
	lap(0)
	stream, err := c.attach(ctx, created.ID)
	if err != nil {
		return steps, err
	}
	lap(1)
	_, err = stdcopy.StdCopy(io.Discard, io.Discard, stream.Reader)
	stream.Close()
	if err != nil {
		return steps, err
	}
	lap(2)
	info, err := c.d.cli.ContainerExecInspect(ctx, created.ID)
	if err != nil {
		return steps, err
	}
	lap(3)
	if info.Running || info.ExitCode != 0 {
		return steps, fmt.Errorf("exec %v: running %v, exit %d", argv, info.Running, info.ExitCode)
	}
	return steps, nil
}

// StarterPID is the host PID of sb's resident starter, 0 when commands
// run as engine execs.
func StarterPID(sb sandbox.Sandbox) int {
	c := sb.(*dockerSandbox)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.st == nil {
		return 0
	}
	return c.st.pid
}

// StarterErr is why sb's starter did not start.
func StarterErr(sb sandbox.Sandbox) error { return sb.(*dockerSandbox).starterErr }

// SetEgressLookup makes f the egress proxy's resolver, before d's first
// allowlisted sandbox starts the proxy.
func SetEgressLookup(d *Docker, f func(ctx context.Context, host string) ([]netip.Addr, error)) {
	d.egressLookup = f
}
