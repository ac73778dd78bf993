package docker

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/docker/frame"
	"github.com/patchwright/patchwright/sandbox/egress"
)

// ErrDead is returned by Exec once the sandbox's container has stopped:
// killed as the last resort against a command that could not be stopped
// otherwise, or gone for a reason outside the sandbox.
var ErrDead = errors.New("sandbox: container is not running")

// wrapScript runs the command $2 with the time limit $1 (seconds).
//
// A watchdog (sleep, then kill -9 -1) enforces the limit: kill(-1) from a
// process of the command user SIGKILLs every process that user has in the
// container but the caller, the wrapper and whatever the command started
// included, however it left the process group (setsid, double forks), and
// it is atomic against fork (see reap). When the command ends first, the
// wrapper does the same kill itself, so that nothing the command started
// can hold the output open or use the sandbox's pids, and waits until
// they are gone (a zombie keeps its /proc entry until PID 1 reaps it).
// The watchdog runs beside the command, not in front of it as GNU timeout
// did, and holds none of the output, so that a command that kills the
// wrapper does not keep the stream open through it.
//
// Every program started costs milliseconds (tens on a loaded host with a
// FUSE storage driver): the command's own /bin/sh is now the only one
// started before the command. It stays a new /bin/sh rather than a
// subshell of the wrapper (one program fewer) so that the command sees
// what `sh -c` gives it: its own $$, and errors in the form verify reads
// ("/bin/sh: 1: python: not found", where eval would add "eval: ").
//
// Before the command starts, the wrapper writes the cgroup's OOM kill count
// (see oomScript; empty when it cannot be read) as the first line of
// stderr. No process of the command exists yet, so the command cannot
// forge that line; Exec strips it from the output and compares it with the
// count after the command.
//
// Last, once every other process of the command user is gone, it writes
// the command's exit status as a record "\n<status>\n" at the end of
// stderr (see exitRecord), which saves the engine's inspect of the exec.
// A command could write such bytes itself and then kill the wrapper; the
// status it forges so is one it could have exited with, and a status read
// from the record is taken only within the time limit (see execute).
const wrapScript = `o=
for f in /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control; do
  [ -r "$f" ] && while read -r k v; do [ "$k" = oom_kill ] && o=$v; done < "$f"
done
echo "$o" >&2
{ sleep "$1" && kill -9 -1; } </dev/null >/dev/null 2>&1 &
/bin/sh -c "$2" & p=$!
wait $p; rc=$?
kill -9 -1 2>/dev/null
wait
n=0
while [ $n -lt 1000 ]; do
  left=
  for d in /proc/[0-9]*; do
    if [ "$d" != "/proc/$$" ] && [ -O "$d" ]; then left=1; break; fi
  done
  [ -z "$left" ] && break
  n=$((n+1))
done
printf '\n%d\n' "$rc" >&2
exit $rc`

type dockerSandbox struct {
	d     *Docker
	id    string
	jobID string

	// turn is held by Exec from the start of a command until its
	// processes are gone: commands run one at a time (see Exec).
	turn turn

	// Read and written only while holding turn.
	initPID   int      // the host's PID of the container's PID 1, once known
	topBlind  bool     // ContainerTop does not show the container's processes
	checkedPS bool     // initPID is known
	psArgs    []string // the ps arguments that worked, once known
	// host is the container's cgroup as seen from the host, nil where
	// this process cannot see it (hostErr says why); found with initPID.
	host    *hostCgroup
	hostErr error

	// egress is the sandbox's registration with the egress proxy, at
	// egressIP; nil without Spec.Egress.
	egress   *egress.Client
	egressIP string
	// egressLog and bypassRules log what goes around the proxy
	// (bypass.go); nil without Spec.Egress.
	egressLog   *egressState
	bypassRules [][]string

	// st is the resident starter, nil for engine execs (none configured,
	// it failed to start, or it was dropped); written holding both turn
	// and mu. starterErr is why it failed to start.
	st         *starter
	starterErr error

	mu     sync.Mutex
	closed bool
	dead   bool
	// hostKilled: every process of the container was killed from the
	// host, so removing it no longer guards anything (see Close).
	hostKilled bool
}

// turn is a mutex whose Lock gives up when a context ends. Its zero value
// is unlocked.
type turn struct {
	once sync.Once
	ch   chan struct{}
}

func (t *turn) lock(ctx context.Context) error {
	t.once.Do(func() { t.ch = make(chan struct{}, 1) })
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case t.ch <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (t *turn) unlock() { <-t.ch }

func (c *dockerSandbox) ID() string { return c.id }

// Close removes the container with a fresh context, so that it also works
// after the job's context was cancelled. Later calls return nil.
//
// Removing a running container SIGKILLs its PID 1; the kernel then kills
// every other process of its PID namespace (exec'd commands and whatever
// they started included), and the engine reports the container stopped
// only once they are all gone. So when Close returns nil no process of the
// sandbox is left to write the workspace. Close does not wait for a
// running Exec: that Exec fails.
func (c *dockerSandbox) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	hostKilled := c.hostKilled
	st := c.st
	c.mu.Unlock()
	if st != nil {
		st.close()
	}
	c.unregisterEgress()
	timeout := closeTimeout
	if hostKilled {
		// Its processes are gone already: an engine that does not answer
		// (the container may have wedged it) must not hold the job, and
		// the reaper removes the stopped container once it answers again.
		timeout = deadRemoveTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err := c.d.cli.ContainerRemove(ctx, c.id, container.RemoveOptions{Force: true, RemoveVolumes: true})
	if err != nil && !cerrdefs.IsNotFound(err) {
		if hostKilled {
			return fmt.Errorf("remove sandbox %.12s, whose processes were killed from the host (the reaper removes it later): %w", c.id, err)
		}
		return fmt.Errorf("remove sandbox %.12s: %w", c.id, err)
	}
	return nil
}

// deadRemoveTimeout bounds Close's removal of a container killed from the
// host, and killWedged's wait for the engine to record its stop.
const deadRemoveTimeout = 5 * time.Second

func (c *dockerSandbox) usable() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.closed:
		return sandbox.ErrClosed
	case c.dead:
		return fmt.Errorf("sandbox %.12s: %w", c.id, ErrDead)
	}
	return c.d.jobStopped(c.jobID)
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
// Commands run one at a time: a call waits for the running command, and
// its cleanup, to end first (or for its own ctx). That is what makes the
// cleanup below exact: every process of the command user in the container
// then belongs to this command.
//
// The time limit is enforced inside the container by the wrapper's
// watchdog, which kills every process of the command user (see
// wrapScript); when the command ends first, the wrapper kills what it
// left, background jobs and processes that left its process group
// (setsid, double forks, `env -i`) included. reap then checks from the
// host that none is left, and ends them itself where some are (the
// wrapper killed, the output held past the time limit, ctx ended); Exec
// returns only after that. If reap cannot end them, the container is
// killed and the sandbox is dead (ErrDead).
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
	if err := c.turn.lock(ctx); err != nil {
		return sandbox.Result{}, fmt.Errorf("wait for the running command in sandbox %.12s: %w", c.id, err)
	}
	defer c.turn.unlock()
	if err := c.usable(); err != nil {
		return sandbox.Result{}, err
	}
	if c.egress != nil {
		c.egress.SetCommand(cmd.Script)
		defer func() {
			c.flushBypasses()
			c.egress.SetCommand("")
		}()
	}
	oomUnknown := false
	if c.st != nil {
		res, rec, err := c.executeStarter(ctx, cmd)
		if !errors.Is(err, errTampered) {
			if rec == nil {
				// The starter died: no OOM count to compare, and a
				// SIGKILL before the limit is most often the command's
				// own kill -9 -1, not the OOM killer's.
				oomUnknown = true
			}
			return c.finish(cmd, res, err, "", rec, oomUnknown)
		}
		// Nothing ran: the command goes to an engine exec.
	}
	res, oomBefore, started, err := c.execute(ctx, cmd)
	if !started {
		return res, err
	}
	return c.finish(cmd, res, err, oomBefore, nil, false)
}

// finish checks that nothing of the command is left and fills in
// OOMKilled and TimedOut. rec is the starter's record, nil for an engine
// exec or when the starter gave none.
func (c *dockerSandbox) finish(cmd sandbox.Command, res sandbox.Result, err error, oomBefore string, rec *frame.Record, oomUnknown bool) (sandbox.Result, error) {
	if errors.Is(err, sandbox.ErrWedged) {
		return res, err
	}
	if uerr := c.usable(); uerr != nil {
		// Closed while the command ran: it ended with the container, and
		// its exit status (a SIGKILL) is not its own.
		return res, errors.Join(err, uerr)
	}
	if rerr := c.reap(rec != nil && rec.Clean); rerr != nil {
		return res, errors.Join(err, rerr)
	}
	if err != nil {
		return res, err
	}
	if res.ExitCode != 0 && !oomUnknown {
		if rec != nil {
			res.OOMKilled = oomRose(*rec, res.ExitCode, res.Duration < cmd.Timeout)
		} else {
			res.OOMKilled = c.oomKilledSince(oomBefore, res.ExitCode, res.Duration < cmd.Timeout)
		}
	}
	// The watchdog kills the wrapper too, so a command killed at its
	// limit ends with 128+SIGKILL.
	res.TimedOut = res.TimedOut || (res.ExitCode == 137 && !res.OOMKilled && res.Duration >= cmd.Timeout)
	return res, nil
}

// execute runs cmd and reads its output until it ends, its time limit (with
// KillGrace) passes or ctx ends. It returns the OOM kill count the wrapper
// read before the command ("" when unknown) and whether the command was
// started at all.
func (c *dockerSandbox) execute(ctx context.Context, cmd sandbox.Command) (res sandbox.Result, oomBefore string, started bool, err error) {
	start := time.Now()
	if err := c.locate(ctx); err != nil {
		return sandbox.Result{}, "", false, err
	}
	ctx, unwatch := c.watchStops(ctx)
	defer unwatch()
	execID, stream, err := c.start(ctx, cmd)
	if err != nil {
		return sandbox.Result{}, "", false, err
	}
	stdout, stderr := newCapture(cmd.OutputLimit), newCapture(cmd.OutputLimit)
	record := &exitRecord{w: stderr}
	first := &firstLine{w: record}
	copied := make(chan error, 1)
	go func() {
		_, err := stdcopy.StdCopy(stdout, first, stream.Reader)
		copied <- err
	}()
	hostLimit := time.NewTimer(cmd.Timeout + c.d.grace)
	defer hostLimit.Stop()

	result := func(code int, timedOut bool) sandbox.Result {
		return sandbox.Result{Duration: time.Since(start), Stdout: stdout.output(), Stderr: stderr.output(), ExitCode: code, TimedOut: timedOut}
	}
	select {
	case err = <-copied:
		stream.Close()
		if err != nil {
			return sandbox.Result{}, "", true, fmt.Errorf("read output of command in sandbox %.12s: %w", c.id, err)
		}
	case <-ctx.Done():
		stream.Close()
		<-copied
		record.end()
		if errors.Is(context.Cause(ctx), errFrozen) {
			// Its time limit cannot act on a stopped timeout: end it now,
			// from the host, rather than at the host's limit.
			c.markDead()
			return result(-1, false), "", true, c.killWedged("the command: " + errFrozen.Error())
		}
		return result(-1, false), "", true, fmt.Errorf("command in sandbox %.12s: %w", c.id, ctx.Err())
	case <-hostLimit.C:
		// The in-container timeout did not end the output: processes
		// outside its process group hold it open. reap kills them.
		stream.Close()
		<-copied
		record.end()
		return result(137, true), "", true, nil
	}
	code, recorded := record.end()
	res = result(code, false)
	if !recorded || res.Duration >= cmd.Timeout {
		// No record: the wrapper did not end on its own (killed by its
		// watchdog, or by the command). Past the limit a record is not
		// taken either, so that a command cannot hide its timing out.
		res.ExitCode, err = c.exitCode(ctx, execID)
	}
	return res, first.text(), true, err
}

// start creates and attaches to the exec of cmd.
func (c *dockerSandbox) start(ctx context.Context, cmd sandbox.Command) (string, types.HijackedResponse, error) {
	seconds := strconv.FormatFloat(cmd.Timeout.Seconds(), 'f', 3, 64)
	created, err := c.d.cli.ContainerExecCreate(ctx, c.id, container.ExecOptions{
		User:         c.d.user,
		WorkingDir:   sandbox.WorkspaceDir,
		Cmd:          []string{"/bin/sh", "-c", wrapScript, "sh", seconds, cmd.Script},
		AttachStdout: true,
		AttachStderr: true,
	})
	if err != nil {
		return "", types.HijackedResponse{}, c.execError(ctx, "create", err)
	}
	stream, err := c.attach(ctx, created.ID)
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
		c.markDead()
		return fmt.Errorf("%w: %w", ErrDead, err)
	}
	return err
}

func (c *dockerSandbox) markDead() {
	c.mu.Lock()
	c.dead = true
	c.mu.Unlock()
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

// run is a small internal exec as the command user, outside the policy,
// with combined output capped at 4 KiB, bounded by limit and ctx.
func (c *dockerSandbox) run(ctx context.Context, limit time.Duration, script string, args ...string) ([]byte, int, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	ctx, unwatch := c.watchStops(ctx)
	defer unwatch()
	out, code, err := c.runWatched(ctx, script, args...)
	if err != nil && errors.Is(context.Cause(ctx), errFrozen) {
		// The helper's processes (its runtime's init included) were
		// stopped: waiting out its limit would change nothing.
		return nil, -1, fmt.Errorf("helper command: %w (%v)", errFrozen, err)
	}
	return out, code, err
}

func (c *dockerSandbox) runWatched(ctx context.Context, script string, args ...string) ([]byte, int, error) {
	created, err := c.d.cli.ContainerExecCreate(ctx, c.id, container.ExecOptions{
		User:         c.d.user,
		Cmd:          append([]string{"/bin/sh", "-c", script, "sh"}, args...),
		AttachStdout: true,
		AttachStderr: true,
	})
	if err != nil {
		return nil, -1, fmt.Errorf("create helper command: %w", err)
	}
	stream, err := c.attach(ctx, created.ID)
	if err != nil {
		return nil, -1, fmt.Errorf("start helper command: %w", err)
	}
	// The client bounds only the dial by ctx: a process of a command that
	// stops the helper (kill -STOP -1) must not hold this read for ever.
	stop := context.AfterFunc(ctx, func() { stream.Close() })
	out := newCapture(4 << 10)
	_, err = stdcopy.StdCopy(out, out, stream.Reader)
	stop()
	stream.Close()
	if ctx.Err() != nil {
		return nil, -1, fmt.Errorf("helper command: %w", context.Cause(ctx))
	}
	if err != nil {
		return nil, -1, fmt.Errorf("read helper command output: %w", err)
	}
	code, err := c.exitCode(ctx, created.ID)
	o := out.output()
	return append(o.Head, o.Tail...), code, err
}
