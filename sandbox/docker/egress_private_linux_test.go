package docker_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/network"

	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/docker"
	"github.com/patchwright/patchwright/sandbox/egress"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// privateService starts a web server in a container on a bridge network
// of the test's own, standing for the queue's Redis on a compose bridge,
// and returns the container's name, its address and the network's range.
func privateService(t *testing.T) (name string, ip netip.Addr, subnet netip.Prefix) {
	t.Helper()
	cli := dockerClient(t)
	ctx := context.Background()
	b := make([]byte, 4)
	rand.Read(b)
	suffix := hex.EncodeToString(b)
	netName, name := "pwtest-private-"+suffix, "pwtest-redis-"+suffix
	if _, err := cli.NetworkCreate(ctx, netName, network.CreateOptions{Driver: "bridge"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.NetworkRemove(context.Background(), netName) })
	created, err := cli.ContainerCreate(ctx,
		&container.Config{Image: sandboxtest.Image(t), User: "65534:65534", Cmd: []string{"python3", "-m", "http.server", "8000", "--directory", "/"}},
		&container.HostConfig{NetworkMode: container.NetworkMode(netName)}, nil, nil, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cli.ContainerRemove(context.Background(), created.ID, container.RemoveOptions{Force: true})
	})
	if err := cli.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		t.Fatal(err)
	}
	info, err := cli.ContainerInspect(ctx, created.ID)
	if err != nil {
		t.Fatal(err)
	}
	ip = netip.MustParseAddr(info.NetworkSettings.Networks[netName].IPAddress)
	nw, err := cli.NetworkInspect(ctx, netName, network.InspectOptions{})
	if err != nil || len(nw.IPAM.Config) == 0 {
		t.Fatalf("inspect %s: %v", netName, err)
	}
	return name, ip, netip.MustParsePrefix(nw.IPAM.Config[0].Subnet)
}

// composeResolver answers the container's name and private.example with
// its address, as the resolver of a worker on a compose network would
// (Docker's own DNS answers container names), and nothing else.
func composeResolver(name string, ip netip.Addr) func(context.Context, string) ([]netip.Addr, error) {
	return func(_ context.Context, host string) ([]netip.Addr, error) {
		if a, err := netip.ParseAddr(host); err == nil {
			return []netip.Addr{a}, nil
		}
		if host == name || host == "private.example" {
			return []netip.Addr{ip}, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
}

// TestEgressRefusesPrivateNetworks: a repository's allowlist naming a
// container's private address, its container name, or a DNS name that
// resolves to it, reaches nothing: each is refused and recorded with why.
// The operator's range opens the same three.
func TestEgressRefusesPrivateNetworks(t *testing.T) {
	name, ip, subnet := privateService(t)
	targets := []string{ip.String(), name, "private.example"}
	var allow []string
	for _, h := range targets {
		allow = append(allow, h+":8000")
	}
	fetch := func(d *docker.Docker) ([]sandbox.Result, []egress.Refusal) {
		var mu sync.Mutex
		var refused []egress.Refusal
		sb := sandboxtest.New(t, d, sandbox.Spec{Network: true, Egress: &sandbox.Egress{
			Allow: allow, Phase: "setup",
			Refused: func(r egress.Refusal) { mu.Lock(); refused = append(refused, r); mu.Unlock() },
		}})
		var out []sandbox.Result
		for _, h := range targets {
			out = append(out, run(t, sb, fetchScript("http://"+h+":8000/etc/hostname")))
		}
		mu.Lock()
		defer mu.Unlock()
		return out, refused
	}

	closed := sandboxtest.NewDocker(t, docker.Options{})
	docker.SetEgressLookup(closed, composeResolver(name, ip))
	results, refused := fetch(closed)
	for i, res := range results {
		if res.ExitCode == 0 {
			t.Errorf("%s: fetched %q through the proxy", targets[i], res.Stdout.Head)
		}
	}
	if len(refused) != len(targets) {
		t.Fatalf("refusals %+v, want one for each of %v", refused, targets)
	}
	for i, r := range refused {
		if r.Host != targets[i] || r.Port != 8000 || !strings.Contains(r.Reason, "resolves to "+ip.String()+", a private address") ||
			!strings.Contains(r.Reason, "only the operator can open") {
			t.Errorf("refusal %+v: want %s refused as private", r, targets[i])
		}
	}
	closed.Close()

	open := sandboxtest.NewDocker(t, docker.Options{EgressOpen: []netip.Prefix{subnet}})
	docker.SetEgressLookup(open, composeResolver(name, ip))
	results, refused = fetch(open)
	for i, res := range results {
		if res.ExitCode != 0 || strings.TrimSpace(string(res.Stdout.Head)) == "" {
			t.Errorf("%s in the opened range %s: exit %d, stderr %s", targets[i], subnet, res.ExitCode, res.Stderr.Head)
		}
	}
	if len(refused) != 0 {
		t.Errorf("refusals in the opened range: %+v", refused)
	}
}
