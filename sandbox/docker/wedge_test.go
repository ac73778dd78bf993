package docker_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"

	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/docker"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// stopLoop freezes every process of the command user it can reach (all
// but itself), over and over: the command's timeout, the wrapper, and any
// helper the cleanup starts.
const stopLoop = `while :; do kill -STOP -1; done & sleep 1`

// wedged runs stopLoop with a limit of 5 minutes and returns Exec's error,
// failing the test if Exec has not returned after 90 seconds: it must end
// the command once the host sees it stopped, not at its limit.
func wedged(t *testing.T, sb sandbox.Sandbox) error {
	t.Helper()
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := sb.Exec(context.Background(), sandbox.Command{Script: stopLoop, Timeout: 5 * time.Minute})
		done <- err
	}()
	select {
	case err := <-done:
		t.Logf("Exec returned after %v: %v", time.Since(start).Round(time.Millisecond), err)
		return err
	case <-time.After(90 * time.Second):
		t.Fatalf("Exec of a command that stops its own timeout still runs after 90 s (its limit is 5 minutes):\n%s", goroutines())
		return nil
	}
}

// fromHost skips the test where the worker does not see the sandbox's
// cgroup: only the host can tell a stopped command early.
func fromHost(t *testing.T, sb sandbox.Sandbox) {
	t.Helper()
	if _, fromCgroup, err := docker.HostSurvivors(sb); err != nil {
		t.Fatal(err)
	} else if !fromCgroup {
		t.Skip("the container's cgroup is not visible here: run the test beside the Docker engine, as root")
	}
}

// TestStoppedCommandEndsEarly: a command whose processes freeze the
// command's timeout ends as wedged within seconds of the host seeing it,
// long before its own limit; the sandbox is dead and its container stopped.
func TestStoppedCommandEndsEarly(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	sb := sandboxtest.New(t, d, sandbox.Spec{})
	fromHost(t, sb)
	err := wedged(t, sb)
	if !errors.Is(err, sandbox.ErrWedged) || !errors.Is(err, docker.ErrDead) || !strings.Contains(err.Error(), "from the host") {
		t.Fatalf("Exec = %v, want ErrWedged and ErrDead, killed from the host", err)
	}
	info, ierr := dockerClient(t).ContainerInspect(context.Background(), sb.ID())
	if ierr != nil || info.State.Running {
		t.Fatalf("sandbox wedged, container running=%v (%v)", info.State != nil && info.State.Running, ierr)
	}
}

// TestWedgedSandboxWithASilentEngine: the engine stops answering while a
// command wedges its sandbox. The host kills the container, Exec says
// wedged, and Close gives up on the engine after its short deadline,
// rather than its own 2-minute one: the job is not held. Once the engine
// answers again, the reaper removes the stopped container before its
// expiry.
//
// It runs engine execs: the proxy stalls after an exec's start, and a
// command on the resident starter makes no engine call to stall.
func TestWedgedSandboxWithASilentEngine(t *testing.T) {
	proxy := newStallProxy(t)
	d := sandboxtest.NewDocker(t, docker.Options{EngineExec: true})
	sb := sandboxtest.New(t, d, sandbox.Spec{})
	fromHost(t, sb)
	proxy.armed.Store(true) // silent from the command's start on
	err := wedged(t, sb)
	if !errors.Is(err, sandbox.ErrWedged) || !strings.Contains(err.Error(), "from the host") {
		t.Fatalf("Exec = %v, want ErrWedged, killed from the host", err)
	}
	if !proxy.stalled.Load() {
		t.Fatal("the engine did not stop answering: the test tests nothing")
	}
	closed := make(chan error, 1)
	go func() { closed <- sb.Close() }()
	select {
	case err := <-closed:
		if err == nil || !strings.Contains(err.Error(), "reaper") {
			t.Fatalf("Close with a silent engine = %v, want an error that leaves the container to the reaper", err)
		}
	case <-time.After(90 * time.Second):
		t.Fatal("Close of a sandbox killed from the host waits on a silent engine")
	}
	proxy.release()
	cli := dockerClient(t)
	info, err := cli.ContainerInspect(context.Background(), sb.ID())
	if err != nil || info.State == nil || info.State.Running {
		t.Fatalf("after the host's kill: running=%v (%v)", info.State != nil && info.State.Running, err)
	}
	docker.SetDeadAge(t, 0)
	if _, err := d.Reap(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.ContainerInspect(context.Background(), sb.ID()); !cerrdefs.IsNotFound(err) {
		t.Fatalf("the stopped sandbox was not reaped: %v", err)
	}
}

// stallProxy forwards connections to the Docker engine's socket until it
// is armed and has passed the answer to an exec's start; from then on it forwards no
// byte towards the engine (answers to what it already passed still come
// back), and drops what it held once released: an engine that stopped
// answering.
type stallProxy struct {
	armed, stalled atomic.Bool
	done           chan struct{}
	once           sync.Once
}

func newStallProxy(t *testing.T) *stallProxy {
	t.Helper()
	upstream := "/var/run/docker.sock"
	if h := os.Getenv("DOCKER_HOST"); h != "" {
		var ok bool
		if upstream, ok = strings.CutPrefix(h, "unix://"); !ok {
			t.Skipf("DOCKER_HOST %s is not a unix socket", h)
		}
	}
	sock := filepath.Join(t.TempDir(), "docker.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	p := &stallProxy{done: make(chan struct{})}
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go p.forward(conn, upstream)
		}
	}()
	t.Cleanup(func() { p.release(); l.Close() })
	t.Setenv("DOCKER_HOST", "unix://"+sock)
	return p
}

// release forwards again, dropping what was held.
func (p *stallProxy) release() {
	p.armed.Store(false)
	p.stalled.Store(false)
	p.once.Do(func() { close(p.done) })
}

func (p *stallProxy) forward(conn net.Conn, upstream string) {
	defer conn.Close()
	up, err := net.Dial("unix", upstream)
	if err != nil {
		return
	}
	defer up.Close()
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := up.Read(buf)
			if n > 0 {
				// The engine's answer to an exec's start: the stream.
				if p.armed.Load() && strings.HasPrefix(string(buf[:n]), "HTTP/1.1 101 ") {
					p.stalled.Store(true)
				}
				if _, werr := conn.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := conn.Read(buf)
		if n > 0 {
			if p.stalled.Load() {
				// Held requests never reach the engine, even once released.
				<-p.done
				return
			}
			if _, werr := up.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
