package docker

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/patchwright/patchwright/sandbox"
)

// ErrDead is returned by Exec once the sandbox's container has stopped:
// killed as the last resort against a command that could not be stopped
// otherwise, or gone for a reason outside the sandbox.
var ErrDead = errors.New("sandbox: container is not running")

// execTokenVar is set in the environment of every command, with a value
// unique to the command, so that its processes can be found and killed
// even after they left its process group (setsid, double fork).
const execTokenVar = "PATCHWRIGHT_EXEC"

// wrapScript runs the command $2 under GNU timeout with the limit $1.
// timeout puts itself in a new process group and, at the limit, SIGKILLs
// that whole group. Once the command ends, whatever it left in the group
// (background jobs, a fork bomb's children) is killed too, so that it can
// neither hold the output open nor use the sandbox's pids: one kill of a
// process group needs no new process and reaches every member. Processes
// that left the group (setsid) are the host's to kill: see killScript.
const wrapScript = `timeout -s KILL "$1" /bin/sh -c "$2" & p=$!
wait $p; rc=$?
kill -9 -$p 2>/dev/null
exit $rc`

// killScript kills, as the command user, every process whose environment
// holds the token $1, repeating while it finds some (a fork loop creates
// new ones while the first are being killed). It exits 1 if processes
// remained after the last round.
const killScript = `t="` + execTokenVar + `=$1"; n=0
while [ $n -lt 50 ]; do
  found=
  for d in /proc/[0-9]*; do
    if grep -qsxzF "$t" "$d/environ"; then kill -9 "${d#/proc/}" 2>/dev/null; found=1; fi
  done
  [ -z "$found" ] && exit 0
  n=$((n+1))
done
exit 1`

// oomScript prints the container cgroup's count of OOM kills: cgroup v2
// memory.events or cgroup v1 memory.oom_control (kernel 4.13 and later).
const oomScript = `cat /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control 2>/dev/null | grep '^oom_kill '`

type dockerSandbox struct {
	d  *Docker
	id string

	mu      sync.Mutex
	closed  bool
	dead    bool
	oomSeen int64 // the highest OOM kill count read so far
}

func (c *dockerSandbox) ID() string { return c.id }

// Close removes the container with a fresh context, so that it also works
// after the job's context was cancelled. Later calls return nil.
func (c *dockerSandbox) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	err := c.d.cli.ContainerRemove(ctx, c.id, container.RemoveOptions{Force: true, RemoveVolumes: true})
	if err != nil && !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("remove sandbox %.12s: %w", c.id, err)
	}
	return nil
}

func (c *dockerSandbox) usable() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.closed:
		return sandbox.ErrClosed
	case c.dead:
		return fmt.Errorf("sandbox %.12s: %w", c.id, ErrDead)
	}
	return nil
}

// DisableNetwork disconnects the container from every network. Its tmpfs
// mounts (HOME with the caches, /tmp) stay: it is the same container.
func (c *dockerSandbox) DisableNetwork(ctx context.Context) error {
	if err := c.usable(); err != nil {
		return err
	}
	info, err := c.d.cli.ContainerInspect(ctx, c.id)
	if err != nil {
		return fmt.Errorf("inspect sandbox %.12s to disable its network: %w", c.id, err)
	}
	if info.NetworkSettings == nil {
		return nil
	}
	for name := range info.NetworkSettings.Networks {
		if name == "none" {
			continue
		}
		if err := c.d.cli.NetworkDisconnect(ctx, name, c.id, true); err != nil {
			return fmt.Errorf("disconnect sandbox %.12s from network %s: %w", c.id, name, err)
		}
	}
	return nil
}

// Exec runs cmd. See sandbox.Sandbox.Exec.
//
// The time limit is enforced inside the container by `timeout -s KILL`,
// which kills the command's whole process group (see wrapScript);
// background processes of the command end with it. Processes that left the
// group and still hold the output open are killed from the host KillGrace
// after the limit, by the token in their environment; a cancelled ctx does
// the same at once. Only when that cannot run either (no process can be started in
// the container) is the container killed, and the sandbox is then dead.
func (c *dockerSandbox) Exec(ctx context.Context, cmd sandbox.Command) (sandbox.Result, error) {
	if err := c.d.policy.Check(cmd.Script); err != nil {
		return sandbox.Result{}, err
	}
	if err := c.usable(); err != nil {
		return sandbox.Result{}, err
	}
	if cmd.Timeout <= 0 {
		cmd.Timeout = sandbox.DefaultTimeout
	}
	if cmd.OutputLimit <= 0 {
		cmd.OutputLimit = sandbox.DefaultOutputLimit
	}
	token := newToken()
	c.mu.Lock()
	oomBefore := c.oomSeen
	c.mu.Unlock()

	start := time.Now()
	execID, stream, err := c.start(ctx, cmd, token)
	if err != nil {
		return sandbox.Result{}, err
	}
	stdout, stderr := newCapture(cmd.OutputLimit), newCapture(cmd.OutputLimit)
	copied := make(chan error, 1)
	go func() {
		_, err := stdcopy.StdCopy(stdout, stderr, stream.Reader)
		copied <- err
	}()
	hostLimit := time.NewTimer(cmd.Timeout + c.d.grace)
	defer hostLimit.Stop()

	var res sandbox.Result
	select {
	case err = <-copied:
		stream.Close()
		if err != nil {
			return sandbox.Result{}, fmt.Errorf("read output of command in sandbox %.12s: %w", c.id, err)
		}
	case <-ctx.Done():
		stream.Close()
		<-copied
		res = sandbox.Result{Duration: time.Since(start), Stdout: stdout.output(), Stderr: stderr.output(), ExitCode: -1}
		return res, errors.Join(fmt.Errorf("command in sandbox %.12s: %w", c.id, ctx.Err()), c.kill(token))
	case <-hostLimit.C:
		// The in-container timeout did not end the output: processes
		// outside its process group hold it open.
		stream.Close()
		<-copied
		res = sandbox.Result{Duration: time.Since(start), Stdout: stdout.output(), Stderr: stderr.output(), ExitCode: 137, TimedOut: true}
		return res, c.kill(token)
	}

	res = sandbox.Result{Duration: time.Since(start), Stdout: stdout.output(), Stderr: stderr.output()}
	if res.ExitCode, err = c.exitCode(ctx, execID); err != nil {
		return res, err
	}
	if res.ExitCode != 0 {
		res.OOMKilled = c.oomKilledSince(ctx, oomBefore, res.ExitCode, res.Duration < cmd.Timeout)
	}
	// GNU timeout kills its own process group, itself included, so a
	// command killed at its limit ends with 128+SIGKILL.
	res.TimedOut = res.ExitCode == 137 && !res.OOMKilled && res.Duration >= cmd.Timeout
	if res.TimedOut {
		// Processes that left the process group and closed their output
		// outlive timeout's kill: find them by their token.
		return res, c.kill(token)
	}
	return res, nil
}

// start creates and attaches to the exec of cmd.
func (c *dockerSandbox) start(ctx context.Context, cmd sandbox.Command, token string) (string, types.HijackedResponse, error) {
	seconds := strconv.FormatFloat(cmd.Timeout.Seconds(), 'f', 3, 64)
	created, err := c.d.cli.ContainerExecCreate(ctx, c.id, container.ExecOptions{
		User:         c.d.user,
		WorkingDir:   sandbox.WorkspaceDir,
		Env:          []string{execTokenVar + "=" + token},
		Cmd:          []string{"/bin/sh", "-c", wrapScript, "sh", seconds, cmd.Script},
		AttachStdout: true,
		AttachStderr: true,
	})
	if err != nil {
		return "", types.HijackedResponse{}, c.execError(ctx, "create", err)
	}
	stream, err := c.d.cli.ContainerExecAttach(ctx, created.ID, container.ExecAttachOptions{})
	if err != nil {
		return "", types.HijackedResponse{}, c.execError(ctx, "start", err)
	}
	return created.ID, stream, nil
}

// execError explains a failure to start a command, telling a stopped
// container (ErrDead) from other causes.
func (c *dockerSandbox) execError(ctx context.Context, what string, err error) error {
	err = fmt.Errorf("%s command in sandbox %.12s: %w", what, c.id, err)
	if ctx.Err() != nil {
		return err
	}
	info, ierr := c.d.cli.ContainerInspect(ctx, c.id)
	if cerrdefs.IsNotFound(ierr) || (ierr == nil && info.State != nil && !info.State.Running) {
		c.mu.Lock()
		c.dead = true
		c.mu.Unlock()
		return fmt.Errorf("%w: %w", ErrDead, err)
	}
	return err
}

// exitCode waits for the exec to be reported finished: its output can end
// a moment before the engine records the exit.
func (c *dockerSandbox) exitCode(ctx context.Context, execID string) (int, error) {
	for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		info, err := c.d.cli.ContainerExecInspect(ctx, execID)
		if err != nil {
			return -1, fmt.Errorf("inspect command in sandbox %.12s: %w", c.id, err)
		}
		if !info.Running {
			return info.ExitCode, nil
		}
		select {
		case <-ctx.Done():
			return -1, fmt.Errorf("wait for command in sandbox %.12s: %w", c.id, ctx.Err())
		case <-time.After(wait):
		}
	}
}

// oomKilledSince reports whether the cgroup's OOM kill count rose above
// before. Where the count cannot be read (an engine or runtime without
// it), a SIGKILL before the time limit is taken as the OOM killer's.
func (c *dockerSandbox) oomKilledSince(ctx context.Context, before int64, exitCode int, early bool) bool {
	n, err := c.oomCount(ctx)
	if err != nil {
		return exitCode == 137 && early
	}
	c.mu.Lock()
	c.oomSeen = max(c.oomSeen, n)
	c.mu.Unlock()
	return n > before
}

func (c *dockerSandbox) oomCount(ctx context.Context) (int64, error) {
	out, code, err := c.run(ctx, oomScript)
	if err != nil {
		return 0, err
	}
	_, v, ok := strings.Cut(strings.TrimSpace(string(out)), " ")
	n, perr := strconv.ParseInt(v, 10, 64)
	if code != 0 || !ok || perr != nil {
		return 0, fmt.Errorf("read the OOM kill count: exit %d, %q", code, out)
	}
	return n, nil
}

// kill stops the processes of one command, on a fresh context since the
// caller's may be cancelled. If no process can be started in the container
// to do it, the container itself is killed: the last resort.
func (c *dockerSandbox) kill(token string) error {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	out, code, err := c.run(ctx, killScript, token)
	if err == nil && code == 0 {
		return nil
	}
	cause := fmt.Sprintf("exit %d: %s", code, bytes.TrimSpace(out))
	if err != nil {
		cause = err.Error()
	}
	c.mu.Lock()
	c.dead = true
	c.mu.Unlock()
	if kerr := c.d.cli.ContainerKill(ctx, c.id, "KILL"); kerr != nil && !cerrdefs.IsNotFound(kerr) {
		return fmt.Errorf("kill runaway command in sandbox %.12s (%s), then the container: %w", c.id, cause, kerr)
	}
	return fmt.Errorf("killed sandbox %.12s: the runaway command could not be stopped (%s): %w", c.id, cause, ErrDead)
}

// run is a small internal exec as the command user, outside the policy,
// with combined output capped at 4 KiB.
func (c *dockerSandbox) run(ctx context.Context, script string, args ...string) ([]byte, int, error) {
	created, err := c.d.cli.ContainerExecCreate(ctx, c.id, container.ExecOptions{
		User:         c.d.user,
		Cmd:          append([]string{"/bin/sh", "-c", script, "sh"}, args...),
		AttachStdout: true,
		AttachStderr: true,
	})
	if err != nil {
		return nil, -1, fmt.Errorf("create helper command: %w", err)
	}
	stream, err := c.d.cli.ContainerExecAttach(ctx, created.ID, container.ExecAttachOptions{})
	if err != nil {
		return nil, -1, fmt.Errorf("start helper command: %w", err)
	}
	out := newCapture(4 << 10)
	_, err = stdcopy.StdCopy(out, out, stream.Reader)
	stream.Close()
	if err != nil {
		return nil, -1, fmt.Errorf("read helper command output: %w", err)
	}
	code, err := c.exitCode(ctx, created.ID)
	o := out.output()
	return append(o.Head, o.Tail...), code, err
}

func newToken() string {
	b := make([]byte, 16)
	rand.Read(b) // never fails (crypto/rand documents it)
	return hex.EncodeToString(b)
}
