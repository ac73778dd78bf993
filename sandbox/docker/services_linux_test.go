package docker_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

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
