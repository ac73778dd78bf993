package docker_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/docker"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// accept takes and closes connections on ln until it is closed.
func accept(ln net.Listener) {
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
}

// connectScript is a command that exits 0 when it opens a TCP connection
// to addr (host:port) within 10 s.
func connectScript(addr string) string {
	host, port, _ := net.SplitHostPort(addr)
	return fmt.Sprintf(`timeout 10 bash -c 'echo hi > /dev/tcp/%s/%s'`, host, port)
}

// hostAddresses are this machine's IPv4 addresses, loopback excluded.
func hostAddresses(t *testing.T) []string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	var ips []string
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
			ips = append(ips, n.IP.String())
		}
	}
	return ips
}

// TestNetworkPhases: the setup phase has a network, the agent phase
// (after DisableNetwork) has none, and what setup cached stays.
func TestNetworkPhases(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	// No internet here: show the setup phase is connected by reaching a
	// listener of this test on a stand-in for it (the host's own
	// services are out of reach: TestSetupNetworkReachesOutNotHost).
	inet := sandboxtest.FakeHost(t, http.NotFoundHandler())
	sb := sandboxtest.New(t, d, sandbox.Spec{Network: true})
	connect := connectScript(inet)

	if got := interfaces(t, sb); got != "eth0 lo" {
		t.Fatalf("setup phase interfaces = %q, want eth0 and lo", got)
	}
	ok(t, sb, connect)
	ok(t, sb, "mkdir -p $GOMODCACHE/cache $GOCACHE && echo filled > $GOMODCACHE/cache/marker && echo c > $GOCACHE/marker")

	if err := sb.DisableNetwork(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := interfaces(t, sb); got != "lo" {
		t.Fatalf("agent phase interfaces = %q, want only lo", got)
	}
	if res := run(t, sb, connect); res.ExitCode == 0 {
		t.Fatalf("agent phase reached %s", inet)
	}
	// Caches written in setup are still there.
	if got := ok(t, sb, "cat $GOMODCACHE/cache/marker $GOCACHE/marker"); got != "filled\nc\n" {
		t.Fatalf("caches after DisableNetwork: %q", got)
	}
	// Disabling twice is harmless.
	if err := sb.DisableNetwork(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestSetupNetworkReachesOutNotHost: a setup sandbox reaches the
// (stand-in) internet, and no service of the Docker host: not on the
// setup network's gateway, not on any other address of the host. It has
// no IPv6, which the firewall rules do not cover.
func TestSetupNetworkReachesOutNotHost(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	inet := sandboxtest.FakeHost(t, http.NotFoundHandler())
	sb := sandboxtest.New(t, d, sandbox.Spec{Network: true})
	info, err := dockerClient(t).ContainerInspect(context.Background(), sb.ID())
	if err != nil {
		t.Fatal(err)
	}
	setup := info.NetworkSettings.Networks[docker.SetupNetwork]
	if setup == nil || setup.Gateway == "" || len(info.NetworkSettings.Networks) != 1 {
		t.Fatalf("setup sandbox networks: %+v, want only %s", info.NetworkSettings.Networks, docker.SetupNetwork)
	}

	ok(t, sb, connectScript(inet))

	// One listener on every address of the host, and one on the gateway
	// alone (a service bound to the bridge only).
	any, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer any.Close()
	accept(any)
	gw, err := net.Listen("tcp", net.JoinHostPort(setup.Gateway, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	accept(gw)
	_, port, _ := net.SplitHostPort(any.Addr().String())
	targets := []string{gw.Addr().String()}
	for _, ip := range hostAddresses(t) {
		targets = append(targets, net.JoinHostPort(ip, port))
	}
	for _, addr := range targets {
		// The host itself can connect: the listener works.
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("the host cannot reach its own listener %s: %v", addr, err)
		}
		c.Close()
		if res := run(t, sb, connectScript(addr)); res.ExitCode == 0 {
			t.Errorf("a setup sandbox reached the host's listener on %s", addr)
		} else if res.ExitCode == 124 {
			t.Errorf("connecting to %s hung until the limit; want refused at once: %s", addr, res.Stderr.Head)
		}
	}
	if got := ok(t, sb, "cat /proc/net/if_inet6"); got != "" {
		t.Errorf("setup sandbox has IPv6 addresses:\n%s", got)
	}
}

// TestSetupFirewallRulesRestored: rules flushed meanwhile (a firewall
// reload) are back before the next setup sandbox runs anything.
func TestSetupFirewallRulesRestored(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	if os.Geteuid() != 0 {
		t.Skip("needs root to change the host's firewall")
	}
	rules := [][]string{
		{"INPUT", "-i", docker.SetupBridge, "-j", "REJECT"},
		{"INPUT", "-i", docker.SetupBridge, "-p", "tcp", "-j", "REJECT", "--reject-with", "tcp-reset"},
		{"DOCKER-USER", "-i", docker.SetupBridge, "-d", "169.254.0.0/16", "-j", "REJECT"},
	}
	present := func(rule []string) bool {
		return exec.Command("iptables", append([]string{"-w", "-C"}, rule...)...).Run() == nil
	}
	sandboxtest.New(t, d, sandbox.Spec{Network: true})
	for _, rule := range rules {
		if !present(rule) {
			t.Fatalf("rule %v missing after Create", rule)
		}
		for present(rule) { // concurrent Creates may have added it twice
			if out, err := exec.Command("iptables", append([]string{"-w", "-D"}, rule...)...).CombinedOutput(); err != nil {
				t.Fatalf("delete %v: %v: %s", rule, err, out)
			}
		}
	}
	sandboxtest.New(t, d, sandbox.Spec{Network: true})
	for _, rule := range rules {
		if !present(rule) {
			t.Errorf("rule %v not restored by the next Create", rule)
		}
	}
}

// TestSetupNetworkFailsClosed: without the firewall rules no sandbox with
// a network is made.
func TestSetupNetworkFailsClosed(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	image := sandboxtest.Image(t)
	t.Setenv("PATH", t.TempDir()) // no iptables
	sb, err := d.Create(context.Background(), sandbox.Spec{Image: image, Workspace: sandboxtest.Workspace(t), JobID: "test-fails-closed", Network: true})
	if err == nil {
		sb.Close()
		t.Fatal("Create with a network succeeded without iptables")
	}
	if !strings.Contains(err.Error(), "firewall rule") {
		t.Fatalf("Create = %v, want it to say the firewall rule could not be installed", err)
	}
}

// TestUnfencedSetupFallsBack: with UnfencedSetup (patchwright run), a
// machine that cannot install the firewall rules still runs setup, on
// Docker's default bridge.
func TestUnfencedSetupFallsBack(t *testing.T) {
	image := sandboxtest.Image(t)
	d := sandboxtest.NewDocker(t, docker.Options{UnfencedSetup: true})
	t.Setenv("PATH", t.TempDir()) // no iptables
	sb, err := d.Create(context.Background(), sandbox.Spec{Image: image, Workspace: sandboxtest.Workspace(t), JobID: "test-unfenced", Network: true})
	if err != nil {
		t.Fatalf("Create = %v, want the default bridge", err)
	}
	defer sb.Close()
	res, err := sb.Exec(context.Background(), sandbox.Command{Script: "cat /proc/net/route | wc -l"})
	if err != nil || res.ExitCode != 0 || strings.TrimSpace(string(res.Stdout.Head)) == "1" {
		t.Fatalf("no route in the fallback sandbox: %+v, %v", res, err)
	}
}
