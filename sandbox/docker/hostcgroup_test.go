package docker

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/patchwright/patchwright/sandbox"
)

// HostSurvivors counts sb's survivors as reap does, and says whether the
// count came from the host's cgroup (for the tests of package docker_test).
func HostSurvivors(sb sandbox.Sandbox) (left int, fromCgroup bool, err error) {
	c := sb.(*dockerSandbox)
	if err := c.turn.lock(context.Background()); err != nil {
		return 0, false, err
	}
	defer c.turn.unlock()
	left, err = c.survivors(context.Background())
	if c.host == nil && c.hostErr != nil {
		err = fmt.Errorf("%w (not from the host: %v)", err, c.hostErr)
	}
	return left, c.host != nil, err
}

func TestCgroupDir(t *testing.T) {
	const id = "b421b8ac2e95"
	v1 := "4:memory:/docker/" + id + "\n6:freezer:/docker/" + id + "\n1:name=systemd:/docker/" + id + "\n"
	v2 := "0::/system.slice/docker-" + id + ".scope\n"
	mounts := `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer
`
	unified := "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
	tests := map[string]struct{ paths, mounts, want string }{
		"v1":                   {v1, mounts, "/sys/fs/cgroup/memory/docker/" + id},
		"hybrid prefers v2":    {v1 + v2, mounts + unified, "/sys/fs/cgroup/unified/system.slice/docker-" + id + ".scope"},
		"v2 unmounted":         {v1 + v2, mounts, "/sys/fs/cgroup/memory/docker/" + id},
		"v2 only":              {v2, "29 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", "/sys/fs/cgroup/system.slice/docker-" + id + ".scope"},
		"mounted below a root": {v2, "29 23 0:26 /system.slice /mnt/cg rw - cgroup2 cgroup2 rw\n", "/mnt/cg/docker-" + id + ".scope"},
		"outside the root":     {v2, "29 23 0:26 /user.slice /mnt/cg rw - cgroup2 cgroup2 rw\n", ""},
		"another container":    {"0::/docker/0123456789ab\n", unified, ""},
		"no cgroup mounted":    {v1 + v2, "31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n", ""},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := cgroupDir(tt.paths, tt.mounts, id); got != tt.want {
				t.Fatalf("cgroupDir = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestHostCgroupCounts: every process listed in the cgroup or below it
// that does not run as the init user is counted, PID 1 and processes
// gone meanwhile are not.
func TestHostCgroupCounts(t *testing.T) {
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "child"), 0o755); err != nil {
		t.Fatal(err)
	}
	me := os.Getpid()
	write := func(path string, pids ...int) {
		t.Helper()
		var text string
		for _, p := range pids {
			text += fmt.Sprintf("%d\n", p)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "cgroup.procs"), 1, me, gone.Process.Pid)
	write(filepath.Join(dir, "child", "cgroup.procs"), me)
	h := &hostCgroup{dir: dir, initPID: 1, initUID: os.Getuid() + 1}
	if left, err := h.survivors(0); left != 2 || err != nil {
		t.Fatalf("survivors = %d, %v; want 2 (this process, listed twice)", left, err)
	}
	h.initUID = os.Getuid()
	if left, err := h.survivors(0); left != 0 || err != nil {
		t.Fatalf("survivors as the init user = %d, %v; want 0", left, err)
	}
	h.initPID = me
	h.initUID = os.Getuid() + 1
	if left, err := h.survivors(0); left != 1 || err != nil {
		t.Fatalf("survivors with this process as PID 1 = %d, %v; want 1 (the host's PID 1)", left, err)
	}
}

// SetDeadAge sets how long a stopped sandbox waits for Reap, until the
// test ends (for the tests of package docker_test).
func SetDeadAge(t *testing.T, age time.Duration) {
	old := deadAge
	deadAge = age
	t.Cleanup(func() { deadAge = old })
}

// TestExecStopped: a stopped process whose parent is outside the cgroup
// (an exec's first process), or a stopped child of one, is seen; a
// continued one, a stopped one further down, and the init user's are not.
// The processes are real ones of this test; one has a name that looks
// like the rest of /proc/PID/stat.
func TestExecStopped(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep here")
	}
	odd := filepath.Join(t.TempDir(), "a) T 1 (")
	if data, err := os.ReadFile(sleep); err != nil {
		t.Fatal(err)
	} else if err := os.WriteFile(odd, data, 0o755); err != nil {
		t.Fatal(err)
	}
	start := func(name string, args ...string) *os.Process {
		t.Helper()
		cmd := exec.Command(name, args...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd.Process
	}
	root := start(odd, "100")
	// A shell, its child (a shell that does not exec its command), and its
	// grandchild (a sleep).
	shell := start("/bin/sh", "-c", "/bin/sh -c '"+sleep+" 102; :' & wait")
	children := func(pid int) []string {
		data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
		return strings.Fields(string(data))
	}
	var child, grandchild int
	for i := 0; grandchild == 0; i++ {
		if i == 500 {
			t.Fatal("the shell's children did not start")
		}
		time.Sleep(10 * time.Millisecond)
		if f := children(shell.Pid); len(f) == 1 {
			child, _ = strconv.Atoi(f[0])
			if g := children(child); len(g) == 1 {
				grandchild, _ = strconv.Atoi(g[0])
			}
		}
	}
	if ppid, state, err := processState(root.Pid); err != nil || ppid != os.Getpid() || state == 'T' {
		t.Fatalf("processState(%q) = %d, %c, %v; want this process as parent, not stopped", odd, ppid, state, err)
	}
	dir := t.TempDir()
	procs := fmt.Sprintf("%d\n%d\n%d\n%d\n", root.Pid, shell.Pid, child, grandchild)
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(procs), 0o644); err != nil {
		t.Fatal(err)
	}
	h := &hostCgroup{dir: dir, initPID: 1, initUID: os.Getuid() + 1}
	check := func(want bool, what string) {
		t.Helper()
		// A signal takes effect a moment after kill returns.
		for i := 0; ; i++ {
			got, err := h.execStopped()
			if err != nil {
				t.Fatal(err)
			}
			if got == want {
				return
			}
			if i == 3000 { // 30 s: a loaded machine delays the signal
				t.Fatalf("%s: execStopped = %v, want %v", what, got, want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	check(false, "nothing stopped")
	stop := func(pid int, sig syscall.Signal) {
		t.Helper()
		if err := syscall.Kill(pid, sig); err != nil {
			t.Fatal(err)
		}
	}
	stop(grandchild, syscall.SIGSTOP)
	check(false, "only a process below the exec's children stopped")
	stop(child, syscall.SIGSTOP)
	check(true, "a child of an exec's first process stopped (its timeout)")
	stop(child, syscall.SIGCONT)
	check(false, "it was continued")
	stop(root.Pid, syscall.SIGSTOP)
	check(true, "an exec's first process stopped")
	h.initUID = os.Getuid()
	check(false, "the stopped process is the init user's")
	h.initUID = os.Getuid() + 1
	check(true, "the command user's process stopped")
}
