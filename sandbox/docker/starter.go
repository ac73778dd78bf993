package docker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/docker/frame"
)

// StarterEnv names the starter binary (a static build of
// sandbox/docker/starter) when Options.Starter is empty; "off" runs
// every command as its own engine exec. Unset, the runner looks for
// StarterName beside its own executable.
const StarterEnv = "PATCHWRIGHT_SANDBOX_STARTER"

// StarterName is the starter binary's file name beside the executable.
const StarterName = "patchwright-starter"

// starterTimeout bounds starting the starter.
const starterTimeout = 30 * time.Second

// loadStarter reads the starter binary named by opts, the environment or
// the executable's directory; nil (no error) means engine execs.
func loadStarter(opts Options) ([]byte, error) {
	path := opts.Starter
	if opts.EngineExec {
		return nil, nil
	}
	if path == "" {
		path = os.Getenv(StarterEnv)
	}
	if path == "off" {
		return nil, nil
	}
	explicit := path != ""
	if !explicit {
		exe, err := os.Executable()
		if err != nil {
			return nil, nil
		}
		path = filepath.Join(filepath.Dir(exe), StarterName)
	}
	bin, err := os.ReadFile(path)
	if err != nil && !explicit && errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sandbox starter: %w", err)
	}
	return bin, nil
}

// starter is the host's end of a container's resident starter.
type starter struct {
	stream types.HijackedResponse
	conn   *frame.Conn
	pid    int // its host PID (ExecInspect), excluded from the survivors
	frames chan starterFrame
	done   chan struct{} // closed when dropped
	once   sync.Once
}

func (s *starter) close() { s.once.Do(func() { close(s.done); s.stream.Close() }) }

type starterFrame struct {
	typ byte
	p   []byte
	err error // the stream's end: no more frames
	buf *[]byte
}

// frameBufs recycles the frames' payloads: output goes through them
// without memory growing with it. A bounded free list rather than a
// sync.Pool, which drops a share of what it is given under the race
// detector and so lets allocation grow with the output there.
var frameBufs = make(chan *[]byte, 128)

func frameBuf() *[]byte {
	select {
	case b := <-frameBufs:
		return b
	default:
		b := make([]byte, 0, 64<<10)
		return &b
	}
}

// release gives f's payload back; f.p is not used after.
func (f starterFrame) release() {
	if f.buf != nil {
		*f.buf = f.p[:0]
		select {
		case frameBufs <- f.buf:
		default:
		}
	}
}

// startStarter copies the starter binary into the container's /tmp and
// runs it as the command user on an exec whose stream stays open. The
// binary goes on the exec's stdin ahead of everything (the root file
// system is read-only, so CopyToContainer cannot place it); `head -c`
// takes exactly its bytes, and the key follows only once the starter,
// started from the copy, said hello, so nothing of the key can be left
// to a file or a program but the starter. The copy deletes itself.
func (c *dockerSandbox) startStarter(ctx context.Context) (err error) {
	ctx, cancel := context.WithTimeout(ctx, starterTimeout)
	defer cancel()
	bin := c.d.starterBin
	name := make([]byte, 8)
	rand.Read(name)
	path := "/tmp/.patchwright-starter-" + hex.EncodeToString(name)
	created, err := c.d.cli.ContainerExecCreate(ctx, c.id, container.ExecOptions{
		User:       c.d.user,
		WorkingDir: sandbox.WorkspaceDir,
		Cmd: []string{"/bin/sh", "-c", `umask 077 && set -C && head -c "$1" >"$2" && chmod 700 "$2" && exec "$2" "$2"`,
			"sh", strconv.Itoa(len(bin)), path},
		AttachStdin: true, AttachStdout: true, AttachStderr: true,
	})
	if err != nil {
		return fmt.Errorf("create the starter: %w", err)
	}
	stream, err := c.attach(ctx, created.ID)
	if err != nil {
		return fmt.Errorf("start the starter: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { stream.Close() })
	defer func() {
		stop()
		if err != nil {
			stream.Close()
		}
	}()
	pr, pw := io.Pipe()
	diag := newCapture(4 << 10)
	go func() {
		_, err := stdcopy.StdCopy(pw, diag, stream.Reader)
		pw.CloseWithError(cmpErr(err, io.EOF))
	}()
	if _, err := stream.Conn.Write(bin); err != nil {
		return fmt.Errorf("copy the starter: %w", err)
	}
	hello := make([]byte, len(frame.Hello))
	if _, err := io.ReadFull(pr, hello); err != nil || string(hello) != frame.Hello {
		o := diag.output()
		return fmt.Errorf("the starter did not start (%q, %v): %s", hello, err, o.Head)
	}
	key := make([]byte, frame.KeySize)
	rand.Read(key)
	if _, err := stream.Conn.Write(key); err != nil {
		return fmt.Errorf("key the starter: %w", err)
	}
	conn := frame.New(pr, stream.Conn, key)
	if typ, _, err := conn.Read(); err != nil || typ != frame.Ready {
		return fmt.Errorf("the starter's first frame: %q, %v", typ, err)
	}
	info, err := c.d.cli.ContainerExecInspect(ctx, created.ID)
	if err != nil || !info.Running || info.Pid <= 0 {
		return fmt.Errorf("inspect the starter: %+v, %v", info, err)
	}
	s := &starter{stream: stream, conn: conn, pid: info.Pid, frames: make(chan starterFrame, 64), done: make(chan struct{})}
	go s.read()
	c.mu.Lock()
	c.st = s
	c.mu.Unlock()
	return nil
}

func cmpErr(err, def error) error {
	if err == nil {
		return def
	}
	return err
}

// read passes the frames on until the stream ends or a frame fails
// authentication, which ends it too.
func (s *starter) read() {
	for {
		typ, p, err := s.conn.Read()
		f := starterFrame{typ: typ, err: err}
		if err == nil {
			b := frameBuf()
			f.p, f.buf = append((*b)[:0], p...), b
		}
		select {
		case s.frames <- f:
		case <-s.done:
			return
		}
		if err != nil {
			return
		}
	}
}

// dropStarter ends the starter's stream: later commands are engine
// execs. The starter, reading its end, kills what is left and exits; a
// starter that cannot (stopped) is the survivor reap ends.
func (c *dockerSandbox) dropStarter() {
	if c.st != nil {
		c.st.close()
		c.mu.Lock()
		c.st = nil
		c.mu.Unlock()
	}
}

// errStarterAuth is a frame on the starter's stream that was not the
// starter's.
var errStarterAuth = errors.New("a frame on the starter's stream failed authentication")

// errTampered: the starter found its limits changed and exited before the
// command started; the command runs as an engine exec instead.
var errTampered = errors.New("the starter's limits were changed")

// executeStarter is execute on the starter. It returns the record's
// OOM counts and whether the record said the command user's processes
// were all gone. When the starter dies, is stopped past the host's limit,
// or its stream fails authentication, the starter is dropped and the
// command's result is a failure, never a success: 137 (its end is not
// known), or the authentication error.
func (c *dockerSandbox) executeStarter(ctx context.Context, cmd sandbox.Command) (res sandbox.Result, rec *frame.Record, err error) {
	start := time.Now()
	s := c.st
	// The stop watch needs the container's cgroup: without it a first
	// command that stops the starter (kill -STOP -1) held the sandbox
	// until the host's limit.
	if err := c.locate(ctx); err != nil {
		return sandbox.Result{}, rec, err
	}
	req, _ := json.Marshal(frame.Req{Script: cmd.Script, TimeoutNS: int64(cmd.Timeout)})
	if err := s.conn.Write(frame.Request, req); err != nil {
		c.dropStarter()
		return sandbox.Result{}, rec, fmt.Errorf("%w: %v", errTampered, err)
	}
	ctx, unwatch := c.watchStops(ctx)
	defer unwatch()
	stdout, stderr := newCapture(cmd.OutputLimit), newCapture(cmd.OutputLimit)
	result := func(code int, timedOut bool) sandbox.Result {
		return sandbox.Result{Duration: time.Since(start), Stdout: stdout.output(), Stderr: stderr.output(), ExitCode: code, TimedOut: timedOut}
	}
	hostLimit := time.NewTimer(cmd.Timeout + c.d.grace)
	defer hostLimit.Stop()
	first := true
	for {
		select {
		case f := <-s.frames:
			switch {
			case f.err != nil && errors.Is(f.err, frame.ErrAuth):
				c.dropStarter()
				return result(-1, false), rec, fmt.Errorf("command in sandbox %.12s: %w", c.id, errStarterAuth)
			case f.err != nil:
				// The starter died (a command's kill -9 -1 reaches it).
				c.dropStarter()
				return result(137, false), rec, nil
			case f.typ == frame.Tampered && first:
				c.dropStarter()
				return sandbox.Result{}, rec, fmt.Errorf("%w: %s", errTampered, f.p)
			case f.typ == frame.Stdout:
				stdout.Write(f.p)
				f.release()
			case f.typ == frame.Stderr:
				stderr.Write(f.p)
				f.release()
			case f.typ == frame.Exit:
				var r frame.Record
				if json.Unmarshal(f.p, &r) != nil {
					c.dropStarter()
					return result(-1, false), nil, fmt.Errorf("command in sandbox %.12s: bad exit record %q", c.id, f.p)
				}
				return result(r.Code, false), &r, nil
			}
			first = false
		case <-ctx.Done():
			c.dropStarter()
			if errors.Is(context.Cause(ctx), errFrozen) {
				c.markDead()
				return result(-1, false), rec, c.killWedged("the command: " + errFrozen.Error())
			}
			return result(-1, false), rec, fmt.Errorf("command in sandbox %.12s: %w", c.id, ctx.Err())
		case <-s.done:
			// Close dropped the starter under the command. read may have
			// returned without passing on the stream's end, so waiting for
			// frames would hold the caller until the host's limit. finish
			// reports the close.
			return result(-1, false), rec, nil
		case <-hostLimit.C:
			// The starter's watchdog did not end it: the starter was
			// stopped. reap ends what is left, the starter included.
			c.dropStarter()
			return result(137, true), rec, nil
		}
	}
}
