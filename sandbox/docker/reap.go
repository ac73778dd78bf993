package docker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"

	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/docker/frame"
)

// killScript, run as the command user from a fresh exec, SIGKILLs every
// process that user has in the container and waits until they are gone
// (a process exits a moment after SIGKILL, and a zombie keeps its /proc
// entry until PID 1 reaps it). It exits 1 if some remained after the last
// round. Only shell builtins run, so the script starts no process of its
// own that it would then have to tell from the survivors.
const killScript = `kill -9 -1 2>/dev/null
n=0
while [ $n -lt 10000 ]; do
  left=
  for d in /proc/[0-9]*; do
    if [ "$d" != "/proc/$$" ] && [ -O "$d" ]; then left=1; break; fi
  done
  [ -z "$left" ] && exit 0
  kill -9 -1 2>/dev/null
  n=$((n+1))
done
exit 1`

// reapRounds is how many times reap kills and checks again before it
// kills the container.
const reapRounds = 3

// killTimeout bounds one run of killScript. It takes milliseconds; one
// that has not ended after this was stopped by a process it was to kill
// (kill -STOP -1), and trying again would only spend more time.
const killTimeout = 10 * time.Second

// wedgeCheck is how often, while a command or helper runs, the host looks
// for its exec's processes stopped (see execStopped), and wedgeWindow how
// long they must stay stopped for the sandbox to be taken as wedged: a
// stop that a CONT undoes at once is let be.
const (
	wedgeCheck  = 250 * time.Millisecond
	wedgeWindow = time.Second
)

// errFrozen is the cause of a command's or helper's end when its exec's
// processes stayed stopped for wedgeWindow.
var errFrozen = errors.New("its processes were stopped (kill -STOP) by a process of the command")

// oomScript prints the container cgroup's count of OOM kills: cgroup v2
// memory.events or cgroup v1 memory.oom_control (kernel 4.13 and later).
const oomScript = `cat /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control 2>/dev/null | grep '^oom_kill '`

// oomKilledSince reports whether the cgroup's OOM kill count rose above
// before, the count the wrapper read as the command started. Commands run
// one at a time and reap ended the last one's processes first, so a rise
// is this command's. Where the count cannot be read (an engine or runtime
// without it), a SIGKILL before the time limit is taken as the OOM
// killer's.
func (c *dockerSandbox) oomKilledSince(before string, exitCode int, early bool) bool {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	b, berr := strconv.ParseInt(before, 10, 64)
	n, err := c.oomCount(ctx)
	if err != nil || berr != nil {
		return exitCode == 137 && early
	}
	return n > b
}

// oomRose is oomKilledSince from the starter's record, which read the
// count after the command too.
func oomRose(rec frame.Record, exitCode int, early bool) bool {
	b, berr := strconv.ParseInt(rec.OOMBefore, 10, 64)
	n, err := strconv.ParseInt(rec.OOMAfter, 10, 64)
	if err != nil || berr != nil {
		return exitCode == 137 && early
	}
	return n > b
}

func (c *dockerSandbox) oomCount(ctx context.Context) (int64, error) {
	out, code, err := c.run(ctx, killTimeout, oomScript)
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

// reap ends every process the last command left in the container, on a
// fresh context since the caller's may be cancelled.
//
// Why this is complete: every process a command starts runs as the command
// user (Options.User) and stays so: no capabilities, no-new-privileges and
// nosuid mounts rule out setuid and setgid, and Docker's seccomp profile
// refuses new user namespaces. PID 1 and its sleep run as InitUser, and
// commands run one at a time, so every process of the command user in the
// container is the last command's. kill(-1, SIGKILL) from a process of
// that user reaches every process it may signal in its PID namespace
// (all of them, PID 1 and itself excepted), and it is atomic against fork:
// the kernel walks the task list under the lock fork takes to add a child,
// and a fork racing the signal is undone. killScript then waits until
// they are gone.
//
// A survivor could kill or stop that helper before it acts, or forge its
// output, so its word is not taken where the host can say otherwise: reap
// is done only when the container's processes, as listed from the host,
// are all InitUser's. The list comes from the container's cgroup where
// this process sees it (hostCgroup: microseconds), else from the engine
// (ContainerTop, which runs ps on the engine's host). If processes are
// left after reapRounds, or a helper does not end, the container is
// killed: the last resort, after which the sandbox is dead. Under a
// runtime whose processes neither shows (gVisor), killScript's exit status
// is all there is.
//
// trusted says that the starter's authenticated record reported every
// other process of the command user gone: where the host cannot list
// the container's processes, that is taken as killScript's word would
// be (and running killScript would kill the starter).
func (c *dockerSandbox) reap(trusted bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	var cause string
	for range reapRounds {
		left, err := c.survivors(ctx)
		if err == nil && left == 0 {
			return nil
		}
		if err != nil && !errors.Is(err, errTopBlind) {
			cause = err.Error()
		}
		if trusted && errors.Is(err, errTopBlind) {
			return nil
		}
		// killScript's kill -9 -1 ends the starter too.
		c.dropStarter()
		out, code, rerr := c.run(ctx, killTimeout, killScript)
		switch {
		case rerr != nil:
			cause = rerr.Error()
		case code != 0:
			cause = fmt.Sprintf("exit %d: %s", code, bytes.TrimSpace(out))
		case errors.Is(err, errTopBlind):
			return nil
		case err == nil:
			cause = fmt.Sprintf("%d processes left", left)
		}
		if errors.Is(rerr, context.DeadlineExceeded) || errors.Is(rerr, errFrozen) {
			break // it was stopped, and the next helper would be too
		}
	}
	// The last round's kill is checked too.
	if left, err := c.survivors(ctx); err == nil && left == 0 {
		return nil
	}
	c.markDead()
	return c.killWedged(cause)
}

// killWedged kills the container whose command's processes reap could not
// end, from the host where it sees the container's cgroup (no engine call
// needed, so an engine that stopped answering does not hold it), else
// through the engine. The error wraps ErrDead and sandbox.ErrWedged.
func (c *dockerSandbox) killWedged(cause string) error {
	// A fresh deadline: the rounds may have spent reap's on a helper that
	// a survivor stopped.
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	var herr error
	if c.host != nil {
		if herr = c.host.kill(closeTimeout); herr == nil {
			c.mu.Lock()
			c.hostKilled = true
			c.mu.Unlock()
			// Every process is gone already; the engine records the stop
			// as it notices, and Close removes the container. Wait a
			// little for that record, not on it.
			wctx, wcancel := context.WithTimeout(ctx, deadRemoveTimeout)
			_ = c.stopContainer(wctx)
			wcancel()
			return fmt.Errorf("killed sandbox %.12s from the host: the runaway command could not be stopped (%s): %w (%w)", c.id, cause, ErrDead, sandbox.ErrWedged)
		}
	}
	if kerr := c.stopContainer(ctx); kerr != nil {
		return fmt.Errorf("kill runaway command in sandbox %.12s (%s), then the container: %w (%w)", c.id, cause, errors.Join(herr, kerr), sandbox.ErrWedged)
	}
	return fmt.Errorf("killed sandbox %.12s: the runaway command could not be stopped (%s): %w (%w)", c.id, cause, ErrDead, sandbox.ErrWedged)
}

// stopContainer SIGKILLs the container and waits until the engine reports
// it stopped: every process of it gone (see Close).
func (c *dockerSandbox) stopContainer(ctx context.Context) error {
	waitC, errC := c.d.cli.ContainerWait(ctx, c.id, container.WaitConditionNotRunning)
	if err := c.d.cli.ContainerKill(ctx, c.id, "KILL"); err != nil {
		if cerrdefs.IsNotFound(err) {
			return nil
		}
		// Not running already is as good.
		if info, ierr := c.d.cli.ContainerInspect(ctx, c.id); ierr == nil && info.State != nil && !info.State.Running {
			return nil
		}
		return err
	}
	select {
	case <-waitC:
		return nil
	case err := <-errC:
		if cerrdefs.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("wait for the container to stop: %w", err)
	}
}

// hostRuntimes are the OCI runtimes whose container processes are host
// processes, so that the host's cgroup lists them. Under others (gVisor's
// runsc, Kata) the cgroup holds the runtime's own processes, which would
// hide a survivor: reap asks the engine there.
var hostRuntimes = map[string]bool{"runc": true, "io.containerd.runc.v2": true, "crun": true}

// errTopBlind says that ContainerTop does not list the container's
// processes, so that reap cannot check from the host.
var errTopBlind = errors.New("the engine does not list the sandbox's processes")

// survivors counts the container's processes that do not run as PID 1's
// user, as the host lists them: from the container's cgroup where this
// process sees it, else through the engine.
func (c *dockerSandbox) survivors(ctx context.Context) (int, error) {
	if err := c.locate(ctx); err != nil {
		return 0, err
	}
	except := 0
	if c.st != nil {
		// Only a starter that wrote an authenticated record since its
		// last command is kept (see finish): its PID is its own.
		except = c.st.pid
	}
	if c.host != nil {
		return c.host.survivors(except)
	}
	if c.topBlind {
		return 0, errTopBlind
	}
	top, err := c.top(ctx)
	if err != nil {
		return 0, err
	}
	pidCol := slices.Index(top.Titles, "PID")
	uidCol := slices.IndexFunc(top.Titles, func(t string) bool { return t == "UID" || t == "USER" })
	if pidCol < 0 || uidCol < 0 {
		return 0, fmt.Errorf("list the processes of sandbox %.12s: columns %q", c.id, top.Titles)
	}
	initUID := ""
	for _, p := range top.Processes {
		if len(p) > max(pidCol, uidCol) && p[pidCol] == strconv.Itoa(c.initPID) {
			initUID = p[uidCol]
		}
	}
	if initUID == "" {
		c.topBlind = true
		return 0, errTopBlind
	}
	left := 0
	for _, p := range top.Processes {
		if len(p) <= uidCol || (p[uidCol] != initUID && p[pidCol] != strconv.Itoa(except)) {
			left++
		}
	}
	return left, nil
}

// locate finds, once, the host's PID of the container's PID 1 and, where
// this process sees it, the container's cgroup on the host.
func (c *dockerSandbox) locate(ctx context.Context) error {
	if c.checkedPS {
		return nil
	}
	info, err := c.d.cli.ContainerInspect(ctx, c.id)
	if err != nil {
		return fmt.Errorf("inspect sandbox %.12s: %w", c.id, err)
	}
	if info.State == nil || info.State.Pid <= 0 {
		c.markDead()
		return fmt.Errorf("sandbox %.12s: %w", c.id, ErrDead)
	}
	c.initPID, c.checkedPS = info.State.Pid, true
	if hc := info.HostConfig; hc != nil && hostRuntimes[hc.Runtime] {
		c.host, c.hostErr = findHostCgroup(c.id, c.initPID, c.d.initUID)
	} else {
		c.hostErr = errors.New("the runtime's processes may not be the host's")
	}
	return nil
}

// watchStops returns ctx, ended with the cause errFrozen once the host
// has seen an exec's processes in the container stopped (execStopped)
// for wedgeWindow; nothing is watched where the host does not see the
// container's cgroup. Call the function it returns when the exec is over.
func (c *dockerSandbox) watchStops(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	h := c.host
	if h == nil {
		return ctx, func() { cancel(nil) }
	}
	go func() {
		tick := time.NewTicker(wedgeCheck)
		defer tick.Stop()
		var since time.Time
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if stopped, err := h.execStopped(); err != nil || !stopped {
				since = time.Time{}
			} else if since.IsZero() {
				since = time.Now()
			} else if time.Since(since) >= wedgeWindow {
				cancel(errFrozen)
				return
			}
		}
	}()
	return ctx, func() { cancel(nil) }
}

// psFormats are the ps arguments ContainerTop is tried with: procps's
// numeric uid, else the user (busybox's ps, as in docker:dind, knows no
// uid; names differ as the uids do).
var psFormats = [][]string{{"-o", "pid,uid"}, {"-o", "pid,user"}}

// top lists the container's processes with the first ps arguments the
// engine's host accepts. If it accepts none (no ps there), the engine
// cannot check for survivors and reap relies on killScript alone.
func (c *dockerSandbox) top(ctx context.Context) (container.TopResponse, error) {
	if c.psArgs != nil {
		top, err := c.d.cli.ContainerTop(ctx, c.id, c.psArgs)
		if err != nil {
			return top, fmt.Errorf("list the processes of sandbox %.12s: %w", c.id, err)
		}
		return top, nil
	}
	var errs []error
	for _, args := range psFormats {
		top, err := c.d.cli.ContainerTop(ctx, c.id, args)
		if err == nil {
			c.psArgs = args
			return top, nil
		}
		errs = append(errs, err)
	}
	c.topBlind = true
	return container.TopResponse{}, fmt.Errorf("%w: %w", errTopBlind, errors.Join(errs...))
}
