package docker

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

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
	if left, err := h.survivors(); left != 2 || err != nil {
		t.Fatalf("survivors = %d, %v; want 2 (this process, listed twice)", left, err)
	}
	h.initUID = os.Getuid()
	if left, err := h.survivors(); left != 0 || err != nil {
		t.Fatalf("survivors as the init user = %d, %v; want 0", left, err)
	}
	h.initPID = me
	h.initUID = os.Getuid() + 1
	if left, err := h.survivors(); left != 1 || err != nil {
		t.Fatalf("survivors with this process as PID 1 = %d, %v; want 1 (the host's PID 1)", left, err)
	}
}
