package docker_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"

	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/docker"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// commandProcesses lists, as the engine sees them from the host, the
// sandbox's processes that run as the command user (uid 1000): "pid cmd"
// lines.
func commandProcesses(t *testing.T, sb sandbox.Sandbox) []string {
	t.Helper()
	top, err := dockerClient(t).ContainerTop(context.Background(), sb.ID(), []string{"-o", "pid,uid,args"})
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	starter := strconv.Itoa(docker.StarterPID(sb))
	for _, p := range top.Processes {
		if p[1] == strconv.Itoa(sandboxtest.UID) && p[0] != starter {
			left = append(left, p[0]+" "+p[2])
		}
	}
	return left
}

// TestNothingOutlivesCommand: whatever a command starts, however it left
// the command's process group and environment, is gone when Exec returns.
func TestNothingOutlivesCommand(t *testing.T) {
	sandboxtest.EndToEnd(t)
	d := sandboxtest.NewDocker(t, docker.Options{})
	for _, image := range sandboxtest.Images(t) {
		t.Run(image, func(t *testing.T) { testNothingOutlivesCommand(t, d, image) })
	}
}

func testNothingOutlivesCommand(t *testing.T, d *docker.Docker, image string) {
	sb := sandboxtest.New(t, d, sandbox.Spec{Image: image})
	for name, script := range map[string]string{
		"setsid without env":  `env -i setsid sh -c 'sleep 1000 &'`,
		"double fork":         `(sh -c 'sleep 1001 </dev/null >/dev/null 2>&1 &' &)`,
		"setsid holding none": `env -i setsid sh -c 'sleep 1002 & sleep 1003' </dev/null >/dev/null 2>&1 &`,
		"nohup":               `nohup setsid sleep 1004 >/dev/null 2>&1 &`,
		"forking loop":        `env -i setsid sh -c 'while :; do sleep 1005 & done' </dev/null >/dev/null 2>&1 & sleep 0.2`,
	} {
		t.Run(name, func(t *testing.T) {
			res := run(t, sb, script)
			if res.TimedOut {
				t.Fatalf("timed out: %+v", res)
			}
			if left := commandProcesses(t, sb); len(left) > 0 {
				t.Fatalf("processes outlived %q:\n%s", script, strings.Join(left, "\n"))
			}
			if ps := processes(t, sb); strings.Contains(ps, "sleep 10") {
				t.Fatalf("the next command sees the last one's processes:\n%s", ps)
			}
		})
	}
}

// TestEscapedWriterStopsWithCommand: a detached process that writes the
// workspace writes nothing once the Exec that started it has returned.
func TestEscapedWriterStopsWithCommand(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	ws := sandboxtest.Workspace(t)
	sb := sandboxtest.New(t, d, sandbox.Spec{Workspace: ws})
	// The command returns only once the writer has written: it surely
	// ran.
	ok(t, sb, `env -i setsid sh -c 'while :; do echo x >> /workspace/log; done' </dev/null >/dev/null 2>&1 &
until [ -s /workspace/log ]; do :; done`)
	log := filepath.Join(ws, "log")
	before, err := os.ReadFile(log)
	if err != nil || len(before) == 0 {
		t.Fatalf("the writer wrote nothing: %q, %v", before, err)
	}
	if left := commandProcesses(t, sb); len(left) > 0 {
		t.Fatalf("the writer outlived its command:\n%s", strings.Join(left, "\n"))
	}
	// Another command's round trip gives a survivor ample time to write.
	ok(t, sb, "true")
	after, err := os.ReadFile(log)
	if err != nil || !bytes.Equal(after, before) {
		t.Fatalf("the workspace was written after Exec returned: %d bytes, then %d (%v)", len(before), len(after), err)
	}
}

// TestExecsRunOneAtATime: a command started while another runs waits for
// it, so it never sees (or is killed with) the first one's processes.
func TestExecsRunOneAtATime(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	ws := sandboxtest.Workspace(t)
	sb := sandboxtest.New(t, d, sandbox.Spec{Workspace: ws})
	first := make(chan error, 1)
	go func() {
		_, err := sb.Exec(context.Background(), sandbox.Command{
			Script:  "touch running; sleep 1; rm running; echo done > first",
			Timeout: time.Minute,
		})
		first <- err
	}()
	waitForFile(t, filepath.Join(ws, "running"), first)
	got := ok(t, sb, `[ -e running ] && echo overlapped; cat first`)
	if got != "done\n" {
		t.Fatalf("second command saw %q, want the first one finished", got)
	}
	if err := <-first; err != nil {
		t.Fatal(err)
	}
}

// waitForFile returns once path exists on the host; it fails the test if
// the command that should create it ended first.
func waitForFile(t *testing.T, path string, done <-chan error) {
	t.Helper()
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		select {
		case err := <-done:
			t.Fatalf("the command ended before %s existed: %v", path, err)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// TestCloseEndsEveryProcess: when Close returns, no process of the
// sandbox is left, a running command and a detached writer included, so
// nothing can write the workspace any more; and the running command's
// Exec returns then, not at its time limit.
func TestCloseEndsEveryProcess(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	ws := sandboxtest.Workspace(t)
	image := sandboxtest.Image(t)
	sb, err := d.Create(context.Background(), sandbox.Spec{Image: image, Workspace: ws, JobID: "test-close-ends", CacheVolume: sandboxtest.CacheVolume})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	done := make(chan error, 1)
	go func() {
		_, err := sb.Exec(context.Background(), sandbox.Command{
			Script:  `env -i setsid sh -c 'while :; do echo x >> /workspace/a; done' </dev/null >/dev/null 2>&1 & while :; do echo y >> /workspace/b; done`,
			Timeout: time.Hour,
		})
		done <- err
	}()
	waitForFile(t, filepath.Join(ws, "a"), done)
	waitForFile(t, filepath.Join(ws, "b"), done)
	pids := hostPIDs(t, sb)
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	for pid, cmdline := range pids {
		if now, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && bytes.Equal(now, cmdline) {
			t.Errorf("process %d (%q) still runs after Close", pid, cmdline)
		}
	}
	// Not a measure of speed: an Exec the close did not end waits for
	// its hour (it did, on the starter, when the starter's reader saw the
	// close before the command did).
	select {
	case err := <-done:
		if !errors.Is(err, sandbox.ErrClosed) {
			t.Fatalf("the command running during Close ended with %v, want ErrClosed", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the command running during Close still waits for its time limit")
	}
}

// hostPIDs returns the host PIDs and command lines of the sandbox's
// command processes. It skips the test when this process cannot see them
// (the engine runs in another PID namespace, as in a VM).
func hostPIDs(t *testing.T, sb sandbox.Sandbox) map[int][]byte {
	t.Helper()
	pids := map[int][]byte{}
	for _, line := range commandProcesses(t, sb) {
		pidText, _, _ := strings.Cut(line, " ")
		pid, err := strconv.Atoi(pidText)
		if err != nil {
			t.Fatal(err)
		}
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if errors.Is(err, os.ErrNotExist) {
			t.Skip("the sandbox's processes are not visible here: run the test in the Docker engine's PID namespace")
		}
		if err != nil {
			t.Fatal(err)
		}
		pids[pid] = cmdline
	}
	if len(pids) < 2 {
		t.Fatalf("want the command and its writer running, found %v", pids)
	}
	return pids
}

// TestOOMBlamedOnItsCommandOnly: an OOM kill in a command that still
// succeeded, or in one that failed, is not reported for the next failing
// command.
func TestOOMBlamedOnItsCommandOnly(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	sb := sandboxtest.New(t, d, sandbox.Spec{Limits: sandbox.Limits{MemoryBytes: 64 << 20}})
	const hog = `bash -c 'a=$(head -c 512000000 /dev/zero | tr "\0" x); echo ${#a}'`
	// The hog is killed, the command goes on and succeeds.
	if res := run(t, sb, hog+"; echo survived"); res.ExitCode != 0 || !strings.Contains(string(res.Stdout.Head), "survived") {
		t.Fatalf("command around the OOM kill: %+v", res)
	}
	if res := run(t, sb, "exit 1"); res.ExitCode != 1 || res.OOMKilled {
		t.Fatalf("the next failing command was blamed on an earlier OOM: %+v", res)
	}
	res := run(t, sb, hog)
	if !res.OOMKilled {
		t.Fatalf("the OOM kill of a failing command was not reported: %+v", res)
	}
	if res := run(t, sb, "exit 1"); res.OOMKilled {
		t.Fatalf("the next failing command was blamed on an earlier OOM: %+v", res)
	}
}

// TestConcurrentExecsEachCleanedUp: concurrent callers each get their own
// result and none is killed by another's cleanup.
func TestConcurrentExecsEachCleanedUp(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	sb := sandboxtest.New(t, d, sandbox.Spec{})
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := sb.Exec(context.Background(), sandbox.Command{
				Script:  fmt.Sprintf("env -i setsid sleep 100%d </dev/null >/dev/null 2>&1 & sleep 0.1; echo %d", i, i),
				Timeout: time.Minute,
			})
			if err == nil && (res.ExitCode != 0 || string(res.Stdout.Head) != fmt.Sprintf("%d\n", i)) {
				err = fmt.Errorf("command %d: %+v", i, res)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if left := commandProcesses(t, sb); len(left) > 0 {
		t.Fatalf("processes outlived their commands:\n%s", strings.Join(left, "\n"))
	}
}

// TestSurvivorFightingBack: a detached process that SIGKILLs everything it
// can, over and over (the cleanup's own helper included), either loses or
// costs the sandbox: after Exec nothing of the command runs, or the
// sandbox is dead and its container stopped.
func TestSurvivorFightingBack(t *testing.T) {
	sandboxtest.EndToEnd(t)
	for _, image := range sandboxtest.Images(t) {
		for name, fight := range map[string]string{"kill": "kill -9 -1", "stop": "kill -STOP -1"} {
			t.Run(image+"/"+name, func(t *testing.T) { survivorFightingBack(t, image, fight) })
		}
	}
}

// survivorFightingBack leaves a process that runs fight in a loop, against
// the helper that ends the command's processes. "stop" freezes the helper
// mid-run: Exec must still return, not wait on it for ever.
func survivorFightingBack(t *testing.T, image, fight string) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	sb := sandboxtest.New(t, d, sandbox.Spec{Image: image, CacheVolume: sandboxtest.CacheVolumeFor(image)})
	_, err := sb.Exec(context.Background(), sandbox.Command{
		// The sleep outlasts the fight's start, however loaded the
		// machine: the stop is to find the command still running.
		Script:  `env -i setsid sh -c 'while :; do ` + fight + `; done' </dev/null >/dev/null 2>&1 & sleep 5`,
		Timeout: time.Minute,
	})
	switch {
	case err == nil:
		if left := commandProcesses(t, sb); len(left) > 0 {
			t.Fatalf("Exec succeeded with processes left:\n%s", strings.Join(left, "\n"))
		}
		ok(t, sb, "true")
	case errors.Is(err, docker.ErrDead):
		// A stopped command is seen from the host at once, the sandbox's
		// first command included (before, that one waited for its time
		// limit, a minute here, and only the cleanup after it was seen).
		if fight == "kill -STOP -1" && !strings.Contains(err.Error(), "(the command: ") {
			t.Errorf("the stopped command was not caught itself: %v", err)
		}
		info, ierr := dockerClient(t).ContainerInspect(context.Background(), sb.ID())
		if ierr != nil || info.State.Running {
			t.Fatalf("sandbox reported dead, container running=%v (%v)", info.State != nil && info.State.Running, ierr)
		}
		t.Logf("the survivor cost the sandbox: %v", err)
	default:
		t.Fatalf("Exec = %v, want success or ErrDead", err)
	}
}

// TestHostSeesSurvivors: where the worker sees the container's cgroup, the
// survivor check reads it from the host and counts a process of the
// command user, however it was started, until the next command's cleanup
// ends it.
func TestHostSeesSurvivors(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	sb := sandboxtest.New(t, d, sandbox.Spec{})
	ok(t, sb, "true")
	if left, fromCgroup, err := docker.HostSurvivors(sb); err != nil || left != 0 {
		t.Fatalf("after a command: %d survivors, %v", left, err)
	} else if !fromCgroup {
		t.Skip("the container's cgroup is not visible here: run the test beside the Docker engine, as root")
	}
	// Started behind the sandbox's back, as a survivor would be.
	cli := dockerClient(t)
	ctx := context.Background()
	created, err := cli.ContainerExecCreate(ctx, sb.ID(), container.ExecOptions{User: strconv.Itoa(sandboxtest.UID), Cmd: []string{"sleep", "1006"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := cli.ContainerExecStart(ctx, created.ID, container.ExecStartOptions{Detach: true}); err != nil {
		t.Fatal(err)
	}
	for len(commandProcesses(t, sb)) == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	if left, _, err := docker.HostSurvivors(sb); err != nil || left != 1 {
		t.Fatalf("with a sleep of the command user: %d survivors, %v; want 1", left, err)
	}
	ok(t, sb, "true")
	if left, _, err := docker.HostSurvivors(sb); err != nil || left != 0 {
		t.Fatalf("after the next command: %d survivors, %v", left, err)
	}
	if left := commandProcesses(t, sb); len(left) > 0 {
		t.Fatalf("processes outlived the next command:\n%s", strings.Join(left, "\n"))
	}
}

// TestWedgedSandboxKilled: a process that freezes every process it can
// reach, over and over, stops the command and the cleanup's helper. Exec
// still returns, on a context without deadline, once the command's time
// limit and the helper's have passed: the sandbox is killed (from the
// host where its cgroup is visible here), the error is ErrWedged and
// ErrDead, the container is stopped and no goroutine of the sandbox is
// left waiting.
func TestWedgedSandboxKilled(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{KillGrace: time.Second})
	sb := sandboxtest.New(t, d, sandbox.Spec{})
	ok(t, sb, "true")
	_, fromCgroup, _ := docker.HostSurvivors(sb)
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := sb.Exec(context.Background(), sandbox.Command{
			Script:  `env -i setsid sh -c 'while :; do kill -STOP -1; done' </dev/null >/dev/null 2>&1 & sleep 1`,
			Timeout: 2 * time.Second,
		})
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(5 * time.Minute):
		t.Fatalf("Exec still runs after 5 minutes:\n%s", goroutines())
	}
	t.Logf("Exec returned after %v: %v", time.Since(start).Round(time.Millisecond), err)
	if !errors.Is(err, sandbox.ErrWedged) || !errors.Is(err, docker.ErrDead) {
		t.Fatalf("Exec = %v, want ErrWedged and ErrDead", err)
	}
	if fromCgroup && !strings.Contains(err.Error(), "from the host") {
		t.Errorf("the cgroup is visible, but the sandbox was not killed from the host: %v", err)
	}
	info, ierr := dockerClient(t).ContainerInspect(context.Background(), sb.ID())
	if ierr != nil || info.State.Running {
		t.Fatalf("sandbox wedged, container running=%v (%v)", info.State != nil && info.State.Running, ierr)
	}
	if _, err := sb.Exec(context.Background(), sandbox.Command{Script: "true"}); !errors.Is(err, docker.ErrDead) {
		t.Fatalf("Exec on the killed sandbox = %v, want ErrDead", err)
	}
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	// Goroutines end a moment after the calls that started them return.
	for i := 0; strings.Contains(goroutines(), "sandbox/docker.(*"); i++ {
		if i == 100 {
			t.Fatalf("goroutines of the sandbox left:\n%s", goroutines())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// goroutines dumps every goroutine but the caller's.
func goroutines() string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	_, others, _ := bytes.Cut(buf, []byte("\n\n"))
	return string(others)
}
