package docker_test

import (
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/docker"
	"github.com/patchwright/patchwright/sandbox/egress"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// fetchScript fetches url with Python's urllib, which goes through
// HTTP_PROXY/HTTPS_PROXY as most clients do, and prints the body.
func fetchScript(url string) string {
	return fmt.Sprintf(`python3 -c 'import urllib.request,sys; sys.stdout.write(urllib.request.urlopen(%q, timeout=10).read().decode())'`, url)
}

// TestEgressAllowlist: an allowlisted sandbox reaches an allowed host
// through the proxy and nothing else: another host is refused by the
// proxy and recorded with its command; a direct connection and a DNS
// query to a server of the command's own, bypassing the proxy, are
// refused by the firewall and recorded with their commands too; the
// Docker host's services (other than the proxy) are out of reach as on
// the setup network.
func TestEgressAllowlist(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	mux := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "served "+r.URL.Path) })
	allowed := sandboxtest.FakeHost(t, mux)
	other := sandboxtest.FakeHost(t, mux)
	var mu sync.Mutex
	var refused []egress.Refusal
	sb := sandboxtest.New(t, d, sandbox.Spec{Network: true, Egress: &sandbox.Egress{
		Allow: []string{allowed},
		Phase: "setup",
		Refused: func(r egress.Refusal) {
			mu.Lock()
			refused = append(refused, r)
			mu.Unlock()
		},
	}})

	if got := ok(t, sb, fetchScript("http://"+allowed+"/mod")); got != "served /mod" {
		t.Fatalf("allowed host: %q", got)
	}
	// A second allowlisted sandbox leaves the proxy's firewall opening as
	// it was: one ACCEPT, before the REJECTs.
	sandboxtest.New(t, d, sandbox.Spec{Network: true, Egress: &sandbox.Egress{Allow: []string{allowed}}})
	rules, err := exec.Command("iptables", "-w", "-S", "INPUT").Output()
	if err != nil {
		t.Fatal(err)
	}
	var egressRules []string
	for _, l := range strings.Split(string(rules), "\n") {
		if strings.Contains(l, "-i "+docker.EgressBridge+" ") && (strings.Contains(l, "REJECT") || strings.Contains(l, "ACCEPT")) {
			egressRules = append(egressRules, l)
		}
	}
	if len(egressRules) < 3 || !strings.HasSuffix(egressRules[0], "-j ACCEPT") {
		t.Fatalf("egress rules of INPUT:\n%s", strings.Join(egressRules, "\n"))
	}
	if got := ok(t, sb, fetchScript("http://"+allowed+"/again")); got != "served /again" {
		t.Fatalf("allowed host after a second sandbox: %q", got)
	}
	blocked := fetchScript("http://" + other + "/leak")
	if res := run(t, sb, blocked); res.ExitCode == 0 || !strings.Contains(string(res.Stderr.Tail)+string(res.Stderr.Head), "403") {
		t.Fatalf("host not on the allowlist: exit %d, stderr %s", res.ExitCode, res.Stderr.Head)
	}
	// Around the proxy: straight to the allowed host's address, and a DNS
	// query to it.
	direct := connectScript(allowed)
	if res := run(t, sb, direct); res.ExitCode == 0 {
		t.Fatalf("a direct connection to %s went through the firewall", allowed)
	}
	allowedIP, allowedPort, _ := net.SplitHostPort(allowed)
	dns := dnsScript(allowedIP, "leak.example")
	if res := run(t, sb, dns); res.ExitCode == 0 {
		t.Fatalf("a DNS query to %s was answered: %s", allowedIP, res.Stdout.Head)
	}
	host, port, _ := net.SplitHostPort(other)
	mu.Lock()
	got := fmt.Sprint(refused)
	mu.Unlock()
	want := fmt.Sprint([]egress.Refusal{
		{Host: host, Port: atoi(port), Phase: "setup", Command: blocked, Reason: "not on the allowlist"},
		{Host: allowedIP, Port: atoi(allowedPort), Phase: "setup", Command: direct, Reason: "bypassed the proxy: a direct TCP connection"},
		{Host: allowedIP, Port: 53, Phase: "setup", Command: dns, Reason: "bypassed the proxy: a DNS query for leak.example"},
	})
	if got != want {
		t.Fatalf("refusals:\n got %s\nwant %s", got, want)
	}

	// The host's own services: every address but the proxy's port.
	info, err := dockerClient(t).ContainerInspect(t.Context(), sb.ID())
	if err != nil {
		t.Fatal(err)
	}
	ep := info.NetworkSettings.Networks[docker.EgressNetwork]
	if ep == nil || len(info.NetworkSettings.Networks) != 1 {
		t.Fatalf("networks: %+v, want only %s", info.NetworkSettings.Networks, docker.EgressNetwork)
	}
	svc, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	accept(svc)
	_, svcPort, _ := net.SplitHostPort(svc.Addr().String())
	for _, a := range append(hostAddresses(t), ep.Gateway) {
		if res := run(t, sb, connectScript(net.JoinHostPort(a, svcPort))); res.ExitCode == 0 {
			t.Errorf("the allowlisted sandbox reached the host's service on %s", a)
		}
	}
	// No IPv6, as on the setup network.
	if got := ok(t, sb, "cat /proc/sys/net/ipv6/conf/all/disable_ipv6 2>/dev/null || echo 1"); strings.TrimSpace(got) != "1" {
		t.Errorf("IPv6 is on: %q", got)
	}
}

// dnsScript sends a DNS query for name to server:53 over UDP, as a
// resolver of the command's own would, and waits for the answer (or the
// firewall's refusal).
func dnsScript(server, name string) string {
	q := "\\x12\\x34\\x01\\x00\\x00\\x01\\x00\\x00\\x00\\x00\\x00\\x00"
	for _, l := range strings.Split(name, ".") {
		q += fmt.Sprintf("\\x%02x%s", len(l), l)
	}
	q += "\\x00\\x00\\x01\\x00\\x01"
	return fmt.Sprintf(`python3 -c "import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(5); s.connect(('%s', 53)); s.send(b'%s'); print(s.recv(512))"`, server, q)
}

func atoi(s string) int {
	var n int
	fmt.Sscan(s, &n)
	return n
}

// TestEgressDockerResolverRecorded: a lookup through Docker's own
// resolver (127.0.0.11, what the container's resolv.conf names) is not
// answered from outside the allowlist, and is recorded: the engine sends
// the query on from the sandbox's own network namespace (for an upstream
// server that is not the host's loopback), so the firewall refuses it
// and NFLOG sees its name.
func TestEgressDockerResolverRecorded(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	var mu sync.Mutex
	var refused []egress.Refusal
	sb := sandboxtest.New(t, d, sandbox.Spec{Network: true, Egress: &sandbox.Egress{
		Phase: "setup",
		Refused: func(r egress.Refusal) {
			mu.Lock()
			refused = append(refused, r)
			mu.Unlock()
		},
	}})
	// Cut short: the refusal is recorded from the first packet, and the
	// resolver would retry for about 20 s.
	lookup := `timeout 4 getent hosts leak-through-resolver.example`
	if res := run(t, sb, lookup); res.ExitCode == 0 {
		t.Fatalf("the lookup was answered: %s", res.Stdout.Head)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, r := range refused {
		if strings.Contains(r.Reason, "a DNS query for leak-through-resolver.example") && r.Command == lookup && r.Port == 53 {
			return
		}
	}
	t.Fatalf("no refusal of the lookup's query recorded: %+v", refused)
}
