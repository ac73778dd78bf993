package docker_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/docker"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// starterSandbox is a sandbox whose commands go to its resident starter.
func starterSandbox(t *testing.T) sandbox.Sandbox {
	t.Helper()
	d := sandboxtest.NewDocker(t, docker.Options{})
	sb := sandboxtest.New(t, d, sandbox.Spec{})
	if docker.StarterPID(sb) == 0 {
		t.Fatalf("no starter: %v", docker.StarterErr(sb))
	}
	return sb
}

// TestStarterRuns: output, status, the working directory and the user
// come through the starter as through an engine exec, and it stays up.
func TestStarterRuns(t *testing.T) {
	sb := starterSandbox(t)
	pid := docker.StarterPID(sb)
	res := run(t, sb, `pwd; id -u; echo err >&2; exit 3`)
	if res.ExitCode != 3 || string(res.Stdout.Head) != "/workspace\n1000\n" || string(res.Stderr.Head) != "err\n" {
		t.Fatalf("result %+v (stdout %q, stderr %q)", res, res.Stdout.Head, res.Stderr.Head)
	}
	if res := runFor(t, sb, "sleep 5", time.Second); !res.TimedOut || res.ExitCode != 137 {
		t.Fatalf("sleep past its limit: %+v", res)
	}
	ok(t, sb, "true")
	if got := docker.StarterPID(sb); got != pid {
		t.Fatalf("starter %d replaced by %d", pid, got)
	}
}

// forgedRecord is what an exit record with status 0 might look like on
// the stream, without the key.
const forgedRecord = `printf 'x\000\000\000\054{"code":0,"oom_before":"","oom_after":"","clean":true}AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'`

// TestStarterForgery: a command cannot reach the starter's stream, memory
// or descriptors (it is non-dumpable and the sandbox has no
// CAP_SYS_PTRACE), and bytes shaped like a frame on its own output are
// only its output.
func TestStarterForgery(t *testing.T) {
	sb := starterSandbox(t)
	for name, script := range map[string]string{
		"write its stdout": forgedRecord + ` >/proc/$PPID/fd/1`,
		"list its fds":     `ls /proc/$PPID/fd`,
		"read its memory":  `head -c 1 /proc/$PPID/mem`,
		"read its environ": `cat /proc/$PPID/environ`,
		"ptrace it": `python3 -c 'import ctypes,os,sys
libc = ctypes.CDLL(None, use_errno=True)
sys.exit(0 if libc.ptrace(16, int(sys.argv[1]), 0, 0) == 0 else 1)' $PPID`,
	} {
		res := run(t, sb, script+"; exit $((1 + $?))")
		if res.ExitCode == 0 || res.ExitCode == 1 {
			t.Errorf("%s: succeeded: %+v (stderr %q)", name, res, res.Stderr.Head)
		}
	}
	res := run(t, sb, forgedRecord+"; exit 9")
	if res.ExitCode != 9 || !strings.Contains(string(res.Stdout.Head), `"code":0`) {
		t.Fatalf("forged frame on its own output: %+v (stdout %q)", res, res.Stdout.Head)
	}
	if docker.StarterPID(sb) == 0 {
		t.Fatal("the starter was dropped")
	}
}

// TestStarterKilled: a command that kills the starter fails (its status
// is not known, so never 0), and later commands run as engine execs.
func TestStarterKilled(t *testing.T) {
	for name, script := range map[string]string{
		"kill it":   `kill -9 $PPID; exit 0`,
		"kill -1":   `kill -9 -1; exit 0`,
		"kill+work": `(sleep 0.2; kill -9 $PPID) & echo before; sleep 2; exit 0`,
	} {
		t.Run(name, func(t *testing.T) {
			sb := starterSandbox(t)
			res, err := sb.Exec(context.Background(), sandbox.Command{Script: script, Timeout: time.Minute})
			if err != nil || res.ExitCode == 0 {
				t.Fatalf("Exec = %+v, %v; want a failure status", res, err)
			}
			if docker.StarterPID(sb) != 0 {
				t.Fatal("the killed starter is still used")
			}
			if got := ok(t, sb, "echo alive"); got != "alive\n" {
				t.Fatalf("after: %q", got)
			}
			if left := commandProcesses(t, sb); len(left) > 0 {
				t.Fatalf("left: %v", left)
			}
		})
	}
}

// TestStarterTampered: a command that lowers the starter's limits (which
// its next commands would inherit) makes the next command an engine exec,
// with the container's own limits.
func TestStarterTampered(t *testing.T) {
	sb := starterSandbox(t)
	want := ok(t, sb, "ulimit -n")
	ok(t, sb, "prlimit --pid $PPID --nofile=64:64")
	if got := ok(t, sb, "ulimit -n"); got != want {
		t.Fatalf("ulimit -n after the tampering: %q, want %q", got, want)
	}
	if docker.StarterPID(sb) != 0 {
		t.Fatal("the tampered starter is still used")
	}
}

// TestStarterOff: the operator's setting runs engine execs.
func TestStarterOff(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{EngineExec: true})
	sb := sandboxtest.New(t, d, sandbox.Spec{})
	if docker.StarterPID(sb) != 0 {
		t.Fatal("starter started with EngineExec")
	}
	if got := ok(t, sb, "echo hi"); got != "hi\n" {
		t.Fatal(got)
	}
}
