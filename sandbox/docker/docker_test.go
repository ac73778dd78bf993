package docker_test

import (
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

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"

	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/docker"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// run executes script and fails the test if it could not be run.
func run(t *testing.T, sb sandbox.Sandbox, script string) sandbox.Result {
	t.Helper()
	return runFor(t, sb, script, time.Minute)
}

// runFor is run with a time limit of its own, for a build that may compile
// much of the standard library (the public image shape ships no cache).
func runFor(t *testing.T, sb sandbox.Sandbox, script string, limit time.Duration) sandbox.Result {
	t.Helper()
	res, err := sb.Exec(context.Background(), sandbox.Command{Script: script, Timeout: limit})
	if err != nil {
		t.Fatalf("Exec(%q): %v", script, err)
	}
	return res
}

// ok executes script, requires exit 0 and returns its stdout.
func ok(t *testing.T, sb sandbox.Sandbox, script string) string {
	t.Helper()
	res := run(t, sb, script)
	if res.ExitCode != 0 {
		t.Fatalf("%q exited %d\nstdout: %s\nstderr: %s", script, res.ExitCode, res.Stdout.Head, res.Stderr.Head)
	}
	return string(res.Stdout.Head) + string(res.Stdout.Tail)
}

func dockerClient(t *testing.T) *client.Client {
	t.Helper()
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

func TestExecBasics(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	sb := sandboxtest.New(t, d, sandbox.Spec{})
	res := run(t, sb, "pwd; echo out; echo err >&2; exit 3")
	if res.ExitCode != 3 || string(res.Stdout.Head) != "/workspace\nout\n" || string(res.Stderr.Head) != "err\n" {
		t.Fatalf("got exit %d stdout %q stderr %q", res.ExitCode, res.Stdout.Head, res.Stderr.Head)
	}
	if res.TimedOut || res.OOMKilled || res.Duration <= 0 {
		t.Fatalf("flags wrong: %+v", res)
	}
	if got := ok(t, sb, "go version"); !strings.HasPrefix(got, "go version go1.") {
		t.Fatalf("go version: %q", got)
	}
}

func TestExecDenied(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	sb := sandboxtest.New(t, d, sandbox.Spec{})
	_, err := sb.Exec(context.Background(), sandbox.Command{Script: "git push origin HEAD"})
	var denied *sandbox.DeniedError
	if !errors.As(err, &denied) || !strings.Contains(denied.Reason, "git push") {
		t.Fatalf("Exec(git push) = %v, want *DeniedError", err)
	}
}

func TestCreateRejectsBadSpecs(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	image := sandboxtest.Image(t)
	ws := sandboxtest.Workspace(t)
	file := filepath.Join(ws, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		spec sandbox.Spec
		want string
	}{
		"no image":          {sandbox.Spec{Workspace: ws, JobID: "j"}, "Image is required"},
		"no job":            {sandbox.Spec{Image: image, Workspace: ws}, "JobID is required"},
		"relative":          {sandbox.Spec{Image: image, Workspace: "ws", JobID: "j"}, "absolute"},
		"missing workspace": {sandbox.Spec{Image: image, Workspace: ws + "/nope", JobID: "j"}, "no such file"},
		"file workspace":    {sandbox.Spec{Image: image, Workspace: file, JobID: "j"}, "not a directory"},
		"bad env":           {sandbox.Spec{Image: image, Workspace: ws, JobID: "j", Env: []string{"NOEQUALS"}}, "KEY=VALUE"},
		"negative limit":    {sandbox.Spec{Image: image, Workspace: ws, JobID: "j", Limits: sandbox.Limits{PIDs: -1}}, "negative limit"},
		"unknown runtime":   {sandbox.Spec{Image: image, Workspace: ws, JobID: "j", Runtime: "runsc-missing"}, `runtime "runsc-missing" is not configured`},
		"missing image":     {sandbox.Spec{Image: "patchwright-no-such-image:0", Workspace: ws, JobID: "j"}, "No such image"},
		"host path volume":  {sandbox.Spec{Image: image, Workspace: ws, JobID: "j", CacheVolume: "/etc"}, "not a volume name"},
		"climbing volume":   {sandbox.Spec{Image: image, Workspace: ws, JobID: "j", CacheVolume: "../x"}, "not a volume name"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			sb, err := d.Create(context.Background(), tt.spec)
			if err == nil {
				sb.Close()
				t.Fatalf("Create succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Create = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestNewDockerRejectsBadOptions(t *testing.T) {
	if testing.Short() {
		t.Skip("needs Docker")
	}
	for name, opts := range map[string]docker.Options{
		"root user":                {User: "0:0"},
		"named user":               {User: "agent"},
		"bad init":                 {InitUser: "nobody"},
		"relative home":            {Home: "home"},
		"home is root":             {Home: "/"},
		"home is the workspace":    {Home: "/workspace"},
		"init is the command user": {InitUser: "1000:1000"},
	} {
		t.Run(name, func(t *testing.T) {
			if d, err := docker.New(context.Background(), opts); err == nil {
				d.Close()
				t.Fatalf("New(%+v) succeeded", opts)
			}
		})
	}
}

// interfaces lists the network interfaces the sandbox sees.
func interfaces(t *testing.T, sb sandbox.Sandbox) string {
	t.Helper()
	out := ok(t, sb, `tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | sort | tr '\n' ' '`)
	return strings.TrimSpace(out)
}

func TestNoNetworkByDefault(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	sb := sandboxtest.New(t, d, sandbox.Spec{})
	if got := interfaces(t, sb); got != "lo" {
		t.Fatalf("interfaces = %q, want only lo", got)
	}
	if err := sb.DisableNetwork(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestFilesystemContainment(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	ws := sandboxtest.Workspace(t)
	sb := sandboxtest.New(t, d, sandbox.Spec{Workspace: ws})
	for _, p := range []string{"/etc/evil", "/usr/bin/evil", "/evil", "/root/evil", "/usr/local/go/bin/go"} {
		if res := run(t, sb, "echo x > "+p); res.ExitCode == 0 {
			t.Errorf("writing %s succeeded", p)
		}
	}
	// The writable places, exec allowed where builds need it.
	ok(t, sb, `echo a > /tmp/a && echo b > "$HOME/b" && echo c > /workspace/c`)
	ok(t, sb, `cp /bin/true /tmp/t && /tmp/t && cp /bin/true "$HOME/t" && "$HOME/t"`)
	if got, err := os.ReadFile(filepath.Join(ws, "c")); err != nil || string(got) != "c\n" {
		t.Fatalf("workspace file on the host: %q, %v", got, err)
	}
	// setuid binaries cannot run as root: nosuid and no-new-privileges.
	if got := ok(t, sb, `grep NoNewPrivs /proc/self/status`); !strings.Contains(got, "1") {
		t.Fatalf("NoNewPrivs: %q", got)
	}
}

func TestHostInvisible(t *testing.T) {
	t.Setenv("PATCHWRIGHT_CANARY_TOKEN", "canary-4f1c")
	secretDir := t.TempDir()
	secret := filepath.Join(secretDir, "host-secret.txt")
	if err := os.WriteFile(secret, []byte("host only"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := sandboxtest.NewDocker(t, docker.Options{})
	sb := sandboxtest.New(t, d, sandbox.Spec{Env: []string{"GIVEN=yes", "HOME=/evil"}})
	env := ok(t, sb, "env")
	if strings.Contains(env, "canary-4f1c") || strings.Contains(env, "PATCHWRIGHT_CANARY") {
		t.Fatalf("host environment leaked:\n%s", env)
	}
	if !strings.Contains(env, "GIVEN=yes") || !strings.Contains(env, "HOME="+docker.DefaultHome+"\n") {
		t.Fatalf("spec environment or HOME wrong:\n%s", env)
	}
	if res := run(t, sb, "cat "+secret); res.ExitCode == 0 {
		t.Fatalf("host file readable: %q", res.Stdout.Head)
	}
	if res := run(t, sb, "ls /var/run/docker.sock"); res.ExitCode == 0 {
		t.Fatal("docker socket visible")
	}
}

func TestUnprivileged(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	sb := sandboxtest.New(t, d, sandbox.Spec{})
	if got := ok(t, sb, "id -u; id -g"); got != "1000\n1000\n" {
		t.Fatalf("id = %q, want 1000 1000", got)
	}
	caps := ok(t, sb, "grep -E '^Cap(Eff|Prm|Bnd|Amb)' /proc/self/status")
	for _, line := range strings.Split(strings.TrimSpace(caps), "\n") {
		if !strings.HasSuffix(line, "0000000000000000") {
			t.Fatalf("capabilities left: %q", caps)
		}
	}
	// PID 1 runs as another user: a command cannot signal it.
	if res := run(t, sb, "kill -9 1"); res.ExitCode == 0 {
		t.Fatal("kill -9 1 succeeded")
	}
}

func TestKillAllSurvives(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	sb := sandboxtest.New(t, d, sandbox.Spec{})
	res := run(t, sb, "kill -9 -1")
	if res.ExitCode == 0 {
		t.Fatalf("kill -9 -1 did not kill the command itself: %+v", res)
	}
	if got := ok(t, sb, "echo alive"); got != "alive\n" {
		t.Fatalf("after kill -9 -1: %q", got)
	}
}

// TestExitRecord: the wrapper's exit record is not part of the command's
// stderr, bytes of the command that look like one are kept, and a
// command that kills its wrapper gets the wrapper's status from the
// engine. On the resident starter a record cannot be forged: a command
// that kills the starter gets 137, with what of its output the starter
// relayed before it died.
func TestExitRecord(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	sb := sandboxtest.New(t, d, sandbox.Spec{})
	for script, want := range map[string]struct {
		stderr string
		code   int
	}{
		`printf 'no newline' >&2; exit 3`: {"no newline", 3},
		`nosuchcommand`:                   {"/bin/sh: 1: nosuchcommand: not found\n", 127},
		`printf 'line\n' >&2`:             {"line\n", 0},
		`printf '\n5\n' >&2; exit 4`:      {"\n5\n", 4},
		// A record the command forges is taken, for a status it could
		// have exited with; the watchdog it leaves is ended by reap.
		`printf '\n7\n' >&2; kill -9 $PPID; exit 0`: {"", 7},
		`kill -9 $PPID`: {"", 137},
	} {
		onStarter := docker.StarterPID(sb) != 0
		res := run(t, sb, script)
		t.Logf("%s: %v (starter %v)", script, res.Duration, onStarter)
		got := string(res.Stderr.Head) + string(res.Stderr.Tail)
		if onStarter && strings.Contains(script, "$PPID") {
			if res.ExitCode != 137 || !strings.HasPrefix("\n7\n", got) {
				t.Errorf("%s on the starter: exit %d, stderr %q; want 137", script, res.ExitCode, got)
			}
			continue
		}
		if got != want.stderr || res.ExitCode != want.code {
			t.Errorf("%s: exit %d, stderr %q; want %d, %q", script, res.ExitCode, got, want.code, want.stderr)
		}
	}
	if left := commandProcesses(t, sb); len(left) > 0 {
		t.Fatalf("processes outlived the commands:\n%s", strings.Join(left, "\n"))
	}
}

func TestForkBomb(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{KillGrace: time.Second})
	sb := sandboxtest.New(t, d, sandbox.Spec{Limits: sandbox.Limits{PIDs: 64}})
	res, err := sb.Exec(context.Background(), sandbox.Command{Script: `f(){ f | f & }; f; sleep 2`, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatalf("fork bomb: %v", err)
	}
	t.Logf("fork bomb: exit %d, timed out %v, stderr %q", res.ExitCode, res.TimedOut, res.Stderr.Tail)
	// The pids limit is what held it: 100 processes do not fit in 64.
	res = run(t, sb, "i=0; while [ $i -lt 100 ]; do sleep 30 & i=$((i+1)); done")
	if res.ExitCode == 0 || !strings.Contains(string(res.Stderr.Head), "fork") {
		t.Fatalf("100 processes under a limit of 64: exit %d, stderr %q", res.ExitCode, res.Stderr.Head)
	}
	// Every process of the bomb is gone: commands can start processes
	// again, and only PID 1, its sleep and this command's few remain.
	ok(t, sb, "for i in 1 2 3 4 5 6 7 8 9 10; do /bin/true & done; wait")
	out := ok(t, sb, "ls -d /proc/[0-9]* | wc -l")
	if n, err := strconv.Atoi(strings.TrimSpace(out)); err != nil || n > 10 {
		t.Fatalf("%q processes left after the fork bomb:\n%s", out, processes(t, sb))
	}
}

func TestMemoryLimitReportsOOM(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	sb := sandboxtest.New(t, d, sandbox.Spec{Limits: sandbox.Limits{MemoryBytes: 64 << 20}})
	// bash keeps the whole substitution in memory: 512 MB against 64 MB.
	res := run(t, sb, `bash -c 'a=$(head -c 512000000 /dev/zero | tr "\0" x); echo ${#a}'`)
	if !res.OOMKilled || res.ExitCode == 0 || res.TimedOut {
		t.Fatalf("want OOMKilled: %+v (stderr %q)", res, res.Stderr.Head)
	}
	res = run(t, sb, "echo fine")
	if res.OOMKilled || res.ExitCode != 0 {
		t.Fatalf("next command: %+v", res)
	}
	// A failing command after the OOM is not reported as one.
	res = run(t, sb, "exit 1")
	if res.OOMKilled {
		t.Fatalf("stale OOM reported: %+v", res)
	}
}

// processes lists the command lines of the sandbox's processes.
func processes(t *testing.T, sb sandbox.Sandbox) string {
	t.Helper()
	return ok(t, sb, `for d in /proc/[0-9]*; do tr '\0' ' ' < $d/cmdline 2>/dev/null; echo; done`)
}

func TestTimeoutKillsAndSandboxStaysUsable(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{KillGrace: time.Second})
	sb := sandboxtest.New(t, d, sandbox.Spec{})
	res, err := sb.Exec(context.Background(), sandbox.Command{Script: "echo started; sleep 1000", Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.ExitCode != 137 || res.OOMKilled || string(res.Stdout.Head) != "started\n" {
		t.Fatalf("want TimedOut with exit 137: %+v", res)
	}
	if ps := processes(t, sb); strings.Contains(ps, "sleep 1000") {
		t.Fatalf("sleep survived:\n%s", ps)
	}
	if got := ok(t, sb, "echo usable"); got != "usable\n" {
		t.Fatalf("after timeout: %q", got)
	}
}

func TestTimeoutKillsEscapedProcesses(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{KillGrace: time.Second})
	sb := sandboxtest.New(t, d, sandbox.Spec{})
	// setsid leaves the process group timeout kills, and keeps the output
	// open: the host must kill it.
	res, err := sb.Exec(context.Background(), sandbox.Command{Script: "setsid sleep 1000", Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut {
		t.Fatalf("want TimedOut: %+v", res)
	}
	if ps := processes(t, sb); strings.Contains(ps, "sleep 1000") {
		t.Fatalf("escaped sleep survived:\n%s", ps)
	}
	ok(t, sb, "true")
}

func TestTimeoutKillsEscapedSilentProcesses(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{KillGrace: time.Second})
	sb := sandboxtest.New(t, d, sandbox.Spec{})
	// Escaped and holding no output: the exec ends at the limit, the
	// process would live on.
	res, err := sb.Exec(context.Background(), sandbox.Command{Script: "setsid sleep 1001 >/dev/null 2>&1 </dev/null", Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut {
		t.Fatalf("want TimedOut: %+v", res)
	}
	if ps := processes(t, sb); strings.Contains(ps, "sleep 1001") {
		t.Fatalf("escaped sleep survived:\n%s", ps)
	}
}

func TestBackgroundJobsEndWithCommand(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	sb := sandboxtest.New(t, d, sandbox.Spec{})
	// Without the cleanup this would hold the output open for 1000 s.
	res := run(t, sb, "sleep 1000 & echo done")
	if res.ExitCode != 0 || string(res.Stdout.Head) != "done\n" || res.TimedOut {
		t.Fatalf("got %+v", res)
	}
	if ps := processes(t, sb); strings.Contains(ps, "sleep 1000") {
		t.Fatalf("background sleep survived:\n%s", ps)
	}
}

func TestCancelMidCommand(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	ws := sandboxtest.Workspace(t)
	sb := sandboxtest.New(t, d, sandbox.Spec{Workspace: ws})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := sb.Exec(ctx, sandbox.Command{Script: "touch started; sleep 1000"})
		done <- err
	}()
	// Cancel once the command is surely running.
	for {
		if _, err := os.Stat(filepath.Join(ws, "started")); err == nil {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("Exec ended before it was cancelled: %v", err)
		default:
			runtime.Gosched()
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Exec after cancel = %v, want context.Canceled", err)
	}
	if ps := processes(t, sb); strings.Contains(ps, "sleep 1000") {
		t.Fatalf("cancelled command still runs:\n%s", ps)
	}
}

func TestCancelledBeforeStart(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	sb := sandboxtest.New(t, d, sandbox.Spec{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := sb.Exec(ctx, sandbox.Command{Script: "true"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Exec on a cancelled context = %v", err)
	}
	ok(t, sb, "true")
}

func TestLargeOutputIsCappedWithBoundedMemory(t *testing.T) {
	sandboxtest.EndToEnd(t)
	d := sandboxtest.NewDocker(t, docker.Options{})
	sb := sandboxtest.New(t, d, sandbox.Spec{})
	const size = 200_000_000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res, err := sb.Exec(context.Background(), sandbox.Command{
		Script:      fmt.Sprintf("head -c %d /dev/zero | tr '\\0' a; echo END", size),
		Timeout:     5 * time.Minute,
		OutputLimit: 1000,
	})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.Stdout.Total != size+4 || !res.Stdout.Truncated() {
		t.Fatalf("got exit %d, total %d, truncated %v", res.ExitCode, res.Stdout.Total, res.Stdout.Truncated())
	}
	if len(res.Stdout.Head) != 500 || string(res.Stdout.Tail[len(res.Stdout.Tail)-4:]) != "END\n" || len(res.Stdout.Tail) != 500 {
		t.Fatalf("head %d bytes, tail %q", len(res.Stdout.Head), res.Stdout.Tail)
	}
	// Everything allocated while 200 MB went through: a few buffers, not
	// the stream.
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %d KiB while reading %d MB", allocated>>10, size/1_000_000)
	if allocated > 16<<20 {
		t.Fatalf("allocated %d bytes reading the output: memory grows with it", allocated)
	}
	// The digest covers all bytes: compare with sha256sum in the sandbox.
	sum := ok(t, sb, fmt.Sprintf("(head -c %d /dev/zero | tr '\\0' a; echo END) | sha256sum | cut -d' ' -f1", size))
	if strings.TrimSpace(sum) != res.Stdout.SHA256 {
		t.Fatalf("SHA256 %s, sha256sum says %s", res.Stdout.SHA256, sum)
	}
}

func TestConcurrentExecs(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	sb := sandboxtest.New(t, d, sandbox.Spec{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := sb.Exec(context.Background(), sandbox.Command{Script: fmt.Sprintf("echo %d; echo e%d >&2; exit %d", i, i, i), Timeout: time.Minute})
			if err == nil && (res.ExitCode != i || string(res.Stdout.Head) != fmt.Sprintf("%d\n", i) || string(res.Stderr.Head) != fmt.Sprintf("e%d\n", i)) {
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
}

func TestCloseAfterCancelAndTwice(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	image := sandboxtest.Image(t)
	ctx, cancel := context.WithCancel(context.Background())
	sb, err := d.Create(ctx, sandbox.Spec{Image: image, Workspace: sandboxtest.Workspace(t), JobID: "close-test"})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := sb.Close(); err != nil {
		t.Fatalf("Close after cancel: %v", err)
	}
	if err := sb.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := dockerClient(t).ContainerInspect(context.Background(), sb.ID()); !cerrdefs.IsNotFound(err) {
		t.Fatalf("container still there after Close: %v", err)
	}
	if _, err := sb.Exec(context.Background(), sandbox.Command{Script: "true"}); !errors.Is(err, sandbox.ErrClosed) {
		t.Fatalf("Exec after Close = %v, want ErrClosed", err)
	}
}

func TestDeadContainerReported(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	sb := sandboxtest.New(t, d, sandbox.Spec{})
	if err := dockerClient(t).ContainerKill(context.Background(), sb.ID(), "KILL"); err != nil {
		t.Fatal(err)
	}
	// The engine may take a moment to record the exit: Exec must say the
	// container is not running, not hang or report an exit code.
	_, err := sb.Exec(context.Background(), sandbox.Command{Script: "true"})
	if !errors.Is(err, docker.ErrDead) {
		t.Fatalf("Exec on a killed container = %v, want ErrDead", err)
	}
}

func TestReapRemovesLeakedContainers(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	image := sandboxtest.Image(t)
	cli := dockerClient(t)
	ctx := context.Background()
	// As a crashed worker leaves them: one expired, one with a broken
	// label, one still alive, and a container that is not ours.
	mk := func(labels map[string]string) string {
		t.Helper()
		c, err := cli.ContainerCreate(ctx, &container.Config{Image: image, Cmd: []string{"true"}, Labels: labels}, nil, nil, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true}) })
		return c.ID
	}
	job := "reap-" + t.Name()
	expired := mk(map[string]string{docker.LabelSandbox: "1", docker.LabelJob: job, docker.LabelExpires: time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)})
	broken := mk(map[string]string{docker.LabelSandbox: "1", docker.LabelJob: job, docker.LabelExpires: "soon"})
	alive := mk(map[string]string{docker.LabelSandbox: "1", docker.LabelJob: job, docker.LabelExpires: time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
	foreign := mk(map[string]string{docker.LabelExpires: time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)})

	// The count is not checked: another test binary's reaper (a worker
	// process of the soak, say) may take the leaked ones first. What is
	// left afterwards is.
	if _, err := d.Reap(ctx); err != nil {
		t.Fatal(err)
	}
	for id, wantGone := range map[string]bool{expired: true, broken: true, alive: false, foreign: false} {
		_, err := cli.ContainerInspect(ctx, id)
		if gone := cerrdefs.IsNotFound(err); gone != wantGone {
			t.Errorf("container %.12s gone=%v, want %v (%v)", id, gone, wantGone, err)
		}
	}
	left, err := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", docker.LabelJob+"="+job))})
	if err != nil || len(left) != 1 {
		t.Fatalf("left: %d, %v", len(left), err)
	}
}

func TestRunReaperStopsWithContext(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		d.RunReaper(ctx, time.Hour, nil)
		close(done)
	}()
	cancel()
	<-done
}

func TestSandboxLabels(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	sb := sandboxtest.New(t, d, sandbox.Spec{JobID: "job-42", TTL: time.Minute})
	info, err := dockerClient(t).ContainerInspect(context.Background(), sb.ID())
	if err != nil {
		t.Fatal(err)
	}
	l := info.Config.Labels
	expires, err := time.Parse(time.RFC3339, l[docker.LabelExpires])
	if l[docker.LabelSandbox] != "1" || l[docker.LabelJob] != "job-42" || err != nil || time.Until(expires) > time.Minute {
		t.Fatalf("labels %v", l)
	}
	h := info.HostConfig
	if !h.ReadonlyRootfs || len(h.CapDrop) != 1 || h.CapDrop[0] != "ALL" || h.MemorySwap != h.Memory || h.Memory != sandbox.DefaultLimits.MemoryBytes ||
		*h.PidsLimit != sandbox.DefaultLimits.PIDs || h.NanoCPUs != 1e9 || h.NetworkMode != "none" || h.Privileged {
		t.Fatalf("host config: %+v", h)
	}
}

// TestCacheVolume: caches on a named volume outlive the sandbox and are
// seen by the next sandbox that names it, and by no sandbox naming another.
func TestCacheVolume(t *testing.T) {
	sandboxtest.EndToEnd(t)
	d := sandboxtest.NewDocker(t, docker.Options{})
	volume := fmt.Sprintf("patchwright-test-cachevol-%d", time.Now().UnixNano())
	cli := dockerClient(t)
	t.Cleanup(func() { cli.VolumeRemove(context.Background(), volume, true) })

	first := sandboxtest.New(t, d, sandbox.Spec{CacheVolume: volume})
	ok(t, first, `echo warm > "$XDG_CACHE_HOME/marker"`)
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	second := sandboxtest.New(t, d, sandbox.Spec{CacheVolume: volume})
	if got := ok(t, second, `cat "$XDG_CACHE_HOME/marker"`); got != "warm\n" {
		t.Errorf("second sandbox reads %q from the shared cache, want %q", got, "warm\n")
	}
	// Cleanups run last first: remove the volume after its sandbox.
	t.Cleanup(func() { cli.VolumeRemove(context.Background(), volume+"-other", true) })
	other := sandboxtest.New(t, d, sandbox.Spec{CacheVolume: volume + "-other"})
	if res := run(t, other, `cat "$XDG_CACHE_HOME/marker"`); res.ExitCode == 0 {
		t.Error("a sandbox with another cache volume reads the first volume's cache")
	}
}

// TestPruneCaches: old cache volumes go unless a container uses them;
// volumes that are not Patchwright's caches are never touched.
func TestPruneCaches(t *testing.T) {
	sandboxtest.EndToEnd(t)
	d := sandboxtest.NewDocker(t, docker.Options{})
	cli := dockerClient(t)
	ctx := context.Background()
	name := fmt.Sprintf("patchwright-test-prune-%d", time.Now().UnixNano())
	exists := func(v string) bool {
		_, err := cli.VolumeInspect(ctx, v)
		if err != nil && !cerrdefs.IsNotFound(err) {
			t.Fatal(err)
		}
		return err == nil
	}
	for _, v := range []string{name + "-idle", name + "-busy", name + "-foreign"} {
		t.Cleanup(func() { cli.VolumeRemove(context.Background(), v, true) })
	}
	if _, err := cli.VolumeCreate(ctx, volume.CreateOptions{Name: name + "-foreign"}); err != nil {
		t.Fatal(err)
	}
	idle := sandboxtest.New(t, d, sandbox.Spec{CacheVolume: name + "-idle"})
	if err := idle.Close(); err != nil {
		t.Fatal(err)
	}
	busy := sandboxtest.New(t, d, sandbox.Spec{CacheVolume: name + "-busy"})

	// Age zero: every cache volume is old enough.
	if _, err := d.PruneCaches(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if exists(name + "-idle") {
		t.Error("an old cache volume no container uses was kept")
	}
	if !exists(name+"-busy") || !exists(name+"-foreign") {
		t.Fatal("a cache volume in use, or a volume that is not a cache, was removed")
	}
	ok(t, busy, `echo still > "$XDG_CACHE_HOME/marker"`)

	// A young cache is kept.
	if err := busy.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.PruneCaches(ctx, time.Hour); err != nil {
		t.Fatal(err)
	}
	if !exists(name + "-busy") {
		t.Error("a cache volume younger than the age limit was removed")
	}
}
