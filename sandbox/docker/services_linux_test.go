package docker_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"

	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/docker"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// kvScript talks to the kv service at host with bash's /dev/tcp: SET
// then GET, printing the value.
func kvScript(host string) string {
	return fmt.Sprintf(`bash -c 'exec 3<>/dev/tcp/%s/%d && echo "SET k v1" >&3 && read -r a <&3 && echo "GET k" >&3 && read -r b <&3 && echo "$a $b"'`, host, sandboxtest.ServicePort)
}

// TestServices: a job's service starts healthy on its own network; a
// sandbox without a network reaches it by name and nothing else (not the
// fake internet, not the host); an allowlisted setup sandbox reaches it
// and its proxy, and what goes around its proxy is refused and
// recorded; the service carries the sandbox labels and limits; its
// logs are kept; Close removes it and its network.
func TestServices(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	image := sandboxtest.ServiceImage(t)
	inet := sandboxtest.FakeHost(t, http.NotFoundHandler())
	svcs, err := d.StartServices(context.Background(), sandbox.ServicesSpec{
		JobID:    "svc-" + t.Name(),
		Services: []sandbox.Service{{Name: "kv", Image: image, Env: []string{"MODE=test"}, Health: []string{"/kvserver", "-check"}}},
		Limits:   sandbox.Limits{MemoryBytes: 256 << 20},
	})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			svcs.Close()
		}
	})
	agent := sandboxtest.New(t, d, sandbox.Spec{ServiceNetwork: svcs.Network(), ServiceHosts: []string{"kv"}})
	if got := ok(t, agent, kvScript("kv")); got != "OK v1\n" {
		t.Fatalf("agent phase to the service: %q", got)
	}
	if res := run(t, agent, connectScript(inet)); res.ExitCode == 0 {
		t.Errorf("the agent phase reached %s beside its service", inet)
	}
	// A service of the host, on every address, the job network's gateway
	// included.
	info, err := dockerClient(t).ContainerInspect(context.Background(), agent.ID())
	if err != nil {
		t.Fatal(err)
	}
	ep := info.NetworkSettings.Networks[svcs.Network()]
	if ep == nil || len(info.NetworkSettings.Networks) != 1 {
		t.Fatalf("agent networks %+v, want only %s", info.NetworkSettings.Networks, svcs.Network())
	}
	hostSvc, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hostSvc.Close()
	accept(hostSvc)
	_, hostPort, _ := net.SplitHostPort(hostSvc.Addr().String())
	for _, a := range append(hostAddresses(t), ep.Gateway) {
		if res := run(t, agent, connectScript(net.JoinHostPort(a, hostPort))); res.ExitCode == 0 {
			t.Errorf("the agent phase reached the host's service at %s", a)
		}
	}
	var bypassed []sandbox.Refusal
	setup := sandboxtest.New(t, d, sandbox.Spec{Network: true, Egress: &sandbox.Egress{Allow: []string{inet},
		Refused: func(r sandbox.Refusal) { bypassed = append(bypassed, r) }},
		ServiceNetwork: svcs.Network(), ServiceHosts: []string{"kv"}})
	if got := ok(t, setup, kvScript("kv")+` && echo "$NO_PROXY"`); got != "OK v1\nkv\n" {
		t.Fatalf("setup to the service: %q", got)
	}
	// Around the proxy, with a second network to route by: refused and
	// recorded all the same (Exec returns after the record).
	if res := run(t, setup, connectScript(inet)); res.ExitCode == 0 || len(bypassed) != 1 || !strings.HasPrefix(bypassed[0].Reason, "bypassed the proxy") {
		t.Fatalf("a direct connection from setup with services: exit %d, refusals %+v", res.ExitCode, bypassed)
	}
	if got := svcs.Logs(context.Background())["kv"]; !strings.Contains(got, "kvserver: ready") || !strings.Contains(got, "SET k") {
		t.Errorf("service log: %q", got)
	}
	cli := dockerClient(t)
	list, err := cli.ContainerList(context.Background(), container.ListOptions{Filters: filters.NewArgs(filters.Arg("label", docker.LabelJob+"=svc-"+t.Name()))})
	if err != nil || len(list) != 1 || list[0].Labels[docker.LabelExpires] == "" {
		t.Fatalf("service containers: %+v %v", list, err)
	}
	info, err = cli.ContainerInspect(context.Background(), list[0].ID)
	if err != nil || info.HostConfig.Memory != 256<<20 {
		t.Fatalf("service memory limit: %v %v", info.HostConfig.Memory, err)
	}
	// The job's sandboxes go first, as in the pipeline: a network is
	// removed only once nothing is on it.
	agent.Close()
	setup.Close()
	if err := svcs.Close(); err != nil {
		t.Fatal(err)
	}
	closed = true
	if _, err := cli.ContainerInspect(context.Background(), list[0].ID); err == nil {
		t.Error("the service outlived Close")
	}
	if _, err := cli.NetworkInspect(context.Background(), svcs.Network(), network.InspectOptions{}); err == nil {
		t.Error("the service network outlived Close")
	}
}

// TestServiceUnhealthy: a service whose health command never passes
// fails StartServices, with its logs, and leaves nothing behind.
func TestServiceUnhealthy(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	image := sandboxtest.ServiceImage(t)
	// The health command cannot start. Not `/kvserver <anything but
	// -check>`: that is a second server, which under load could take the
	// port before the service did and stop it instead of failing.
	_, err := d.StartServices(context.Background(), sandbox.ServicesSpec{
		JobID:    "svc-" + t.Name(),
		Services: []sandbox.Service{{Name: "kv", Image: image, Health: []string{"/no-such-health-command"}}},
		Ready:    2e9,
	})
	if err == nil || !strings.Contains(err.Error(), "did not pass") {
		t.Fatalf("StartServices with a failing health command: %v", err)
	}
	list, _ := dockerClient(t).ContainerList(context.Background(), container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", docker.LabelJob+"=svc-"+t.Name()))})
	if len(list) != 0 {
		t.Errorf("%d service containers left", len(list))
	}
}

// fillScript asks the kv service to write n bytes to path in its
// container, and prints its answer.
func fillScript(path string, n int) string {
	return fmt.Sprintf(`bash -c 'exec 3<>/dev/tcp/kv/%d && echo "FILL %s %d" >&3 && read -r a <&3 && echo "$a"'`, sandboxtest.ServicePort, path, n)
}

// TestServicesDiskBound: with DiskDir on a bounded file system, a
// service's image-declared volume is on it, so filling the volume past
// the bound fails in the service; filling the service's writable layer
// past what the bound leaves gets the services stopped, and the job's
// next command fails with sandbox.ErrDiskBound saying why.
func TestServicesDiskBound(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	const size = 64 << 20
	b := newBoundedDir(t, size)
	job := "svcdisk-" + t.Name()
	svcs, err := d.StartServices(context.Background(), sandbox.ServicesSpec{
		JobID:    job,
		Services: []sandbox.Service{{Name: "kv", Image: sandboxtest.ServiceImage(t), Health: []string{"/kvserver", "-check"}}},
		Limits:   sandbox.Limits{MemoryBytes: 256 << 20},
		DiskDir:  filepath.Join(b.Path, "services"),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svcs.Close() })
	sb := sandboxtest.New(t, d, sandbox.Spec{JobID: job, ServiceNetwork: svcs.Network(), ServiceHosts: []string{"kv"}})

	if got := ok(t, sb, fillScript("/data/big", 100<<20)); !strings.Contains(got, "no space left") {
		t.Fatalf("100 MiB into the service's volume on a 64 MiB bound: %q", got)
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(b.Path, &st); err != nil {
		t.Fatal(err)
	}
	if used := int64(st.Blocks-st.Bfree) * st.Bsize; used < size/2 {
		t.Fatalf("the volume's writes are not on the bounded file system: %d bytes used there", used)
	}
	// The volume's file stays: the bound is nearly full, so a small
	// write into the writable layer is already past what it leaves.
	if got := ok(t, sb, fillScript("/layer/big", 8<<20)); strings.TrimSpace(got) != "OK" {
		t.Fatalf("8 MiB into the writable layer: %q", got)
	}
	// The watch measures every few seconds: wait for it.
	for {
		_, err := sb.Exec(context.Background(), sandbox.Command{Script: "true"})
		if err == nil {
			time.Sleep(250 * time.Millisecond)
			continue
		}
		if !errors.Is(err, sandbox.ErrDiskBound) || !strings.Contains(err.Error(), "services wrote") {
			t.Fatalf("the job's command after the services passed the bound: %v, want ErrDiskBound", err)
		}
		break
	}
	ids, err := dockerClient(t).ContainerList(context.Background(), container.ListOptions{Filters: filters.NewArgs(filters.Arg("label", docker.LabelJob+"="+job), filters.Arg("status", "running"))})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range ids {
		if c.ID == sb.ID() {
			continue
		}
		// Being killed: wait for it, or for the test's deadline.
		waited, errs := dockerClient(t).ContainerWait(context.Background(), c.ID, container.WaitConditionNotRunning)
		select {
		case <-waited:
		case err := <-errs:
			t.Errorf("service container %.12s after the bound: %v", c.ID, err)
		}
	}
}
