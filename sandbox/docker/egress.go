package docker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os/exec"
	"strings"
	"sync"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/network"

	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/egress"
)

// The egress network: sandboxes created with sandbox.Spec.Egress join it
// instead of the setup network. It is an internal bridge (Docker forwards
// nothing from it), the firewall refuses every packet from its interface
// to the host and every packet it would forward, and the one thing it lets
// through is TCP to the runner's egress proxy, which listens on the
// network's gateway address and lets each sandbox reach the host names of
// its allowlist (sandbox/egress). Sandboxes on it cannot reach each other.
// What goes around the proxy is refused and recorded (see bypass.go).
//
// Like the setup network's, the rules are installed by the process that
// calls Create, which must run as root in the Docker host's network
// namespace; the proxy listens there too.
const (
	// EgressNetwork is the Docker network allowlisted sandboxes join.
	EgressNetwork = "patchwright-egress"
	// EgressBridge is its bridge interface on the Docker host.
	EgressBridge = "pw-egress0"
)

// egressRules refuse, with a reset where TCP, every packet from the
// egress bridge to the host and every packet it would forward: the
// network stays closed even if Docker's own rules for internal networks
// were flushed. Each goes to the head of its chain, as firewallRules.
var egressRules = [][]string{
	{"INPUT", "-i", EgressBridge, "-j", "REJECT"},
	{"INPUT", "-i", EgressBridge, "-p", "tcp", "-j", "REJECT", "--reject-with", "tcp-reset"},
	{"DOCKER-USER", "-i", EgressBridge, "-j", "REJECT"},
	{"DOCKER-USER", "-i", EgressBridge, "-p", "tcp", "-j", "REJECT", "--reject-with", "tcp-reset"},
}

// egressState is the runner's egress proxy, started by the first sandbox
// that needs it and stopped by Docker.Close.
type egressState struct {
	proxy  *egress.Proxy
	url    string   // http://gateway:port
	accept []string // the INPUT rule that lets sandboxes reach the proxy
	gw     string
	port   string // the proxy's

	log       *nflog                    // the firewall's log of bypassing packets
	clientsMu sync.Mutex                // guards clients and nets
	clients   map[string]*egress.Client // by log prefix (sandbox ID)
	nets      []netip.Prefix            // the engine's networks' ranges, as of the last Create
}

// ensureEgress installs the egress network's firewall rules, creates the
// network if it does not exist, starts the proxy on its gateway and returns
// the proxy's URL. Like ensureSetupNetwork it runs before every Create that
// needs it, so rules flushed meanwhile are back first.
func (d *Docker) ensureEgress(ctx context.Context) (string, error) {
	d.egressMu.Lock()
	defer d.egressMu.Unlock()
	for _, rule := range egressRules {
		if err := ensureRule(ctx, rule); err != nil {
			return "", fmt.Errorf("egress network: install the firewall rule that confines allowlisted sandboxes (the worker must run as root in the Docker host's network namespace, with iptables): %w", err)
		}
	}
	gw, err := d.egressGateway(ctx)
	if err != nil {
		return "", err
	}
	if d.egress == nil {
		// This process's first allowlisted sandbox: what a crashed
		// worker left in the firewall goes first.
		if err := d.reapEgressRules(ctx); err != nil {
			return "", err
		}
		if d.egress, err = startEgress(gw, d.egressOpen, d.egressLookup); err != nil {
			return "", err
		}
	}
	// Networks made since the last sandbox (a compose project started
	// meanwhile) are closed from this one on.
	if err := d.egress.refreshNetworks(ctx, d); err != nil {
		return "", err
	}
	// The ACCEPT must come before the REJECTs, which ensureRule may just
	// have put at the head of INPUT: then take it out and put it first
	// again. Only then: while it is out, running setups lose the proxy.
	if !acceptFirst(ctx, d.egress.accept) {
		deleteRule(ctx, d.egress.accept)
		if err := insertFirst(ctx, d.egress.accept); err != nil {
			return "", fmt.Errorf("egress network: let sandboxes reach the proxy: %w", err)
		}
	}
	return d.egress.url, nil
}

// startEgress starts the proxy on the gateway and the firewall log; open
// are the ranges the operator opened, lookup the proxy's resolver (nil:
// the system's).
func startEgress(gw string, open []netip.Prefix, lookup func(context.Context, string) ([]netip.Addr, error)) (*egressState, error) {
	e := &egressState{gw: gw, clients: map[string]*egress.Client{}}
	rules := egress.Rules{Open: open, Closed: e.engineNetwork}
	p, err := egress.Listen(net.JoinHostPort(gw, "0"), egress.Options{Refuses: rules.Refuses, Lookup: lookup})
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(p.Addr().String())
	e.proxy, e.port = p, port
	e.url = "http://" + net.JoinHostPort(gw, port)
	e.accept = []string{"INPUT", "-i", EgressBridge, "-d", gw, "-p", "tcp", "--dport", port, "-j", "ACCEPT"}
	// The log's handler runs on its reader goroutine, which must not wait
	// for egressMu: clients has a lock of its own.
	e.log, err = openNFLOG(func(b bypass) {
		e.clientsMu.Lock()
		c := e.clients[b.prefix]
		e.clientsMu.Unlock()
		if c != nil {
			c.Refuse(b.ip, b.port, b.reason)
		}
	})
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("egress network: %w (the worker must run as root in the Docker host's network namespace)", err)
	}
	return e, nil
}

// refreshNetworks reads the address ranges of the engine's networks: the
// default bridge, every compose project's, overlays, macvlans, whatever
// ranges their address pools gave them. Failing to read them fails the
// Create: the proxy must not guess.
func (e *egressState) refreshNetworks(ctx context.Context, d *Docker) error {
	list, err := d.cli.NetworkList(ctx, network.ListOptions{})
	if err != nil {
		return fmt.Errorf("egress network: list the engine's networks, which no sandbox may reach: %w", err)
	}
	var nets []netip.Prefix
	for _, n := range list {
		for _, c := range n.IPAM.Config {
			if p, err := netip.ParsePrefix(c.Subnet); err == nil {
				nets = append(nets, p.Masked())
			}
		}
	}
	e.clientsMu.Lock()
	e.nets = nets
	e.clientsMu.Unlock()
	return nil
}

// engineNetwork says which of the engine's networks holds ip, for the
// proxy's rules; "" for none.
func (e *egressState) engineNetwork(ip netip.Addr) string {
	e.clientsMu.Lock()
	defer e.clientsMu.Unlock()
	for _, n := range e.nets {
		if n.Contains(ip) {
			// Not named: the refusal reaches the repository's report.
			return "an address of one of the worker's Docker networks"
		}
	}
	return ""
}

// acceptFirst reports whether INPUT holds the ACCEPT rule accept (its
// port's) before any REJECT of the egress bridge.
func acceptFirst(ctx context.Context, accept []string) bool {
	out, err := exec.CommandContext(ctx, "iptables", "-w", "-S", "INPUT").Output()
	if err != nil {
		return false
	}
	port := accept[len(accept)-3]
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.Contains(line, "-i "+EgressBridge+" ") {
			continue
		}
		if strings.Contains(line, "-j REJECT") {
			return false
		}
		if strings.Contains(line, "--dport "+port+" ") && strings.HasSuffix(line, "-j ACCEPT") {
			return true
		}
	}
	return false
}

// egressGateway creates the egress network when it is missing, checks it
// and returns its gateway address, where the proxy listens.
func (d *Docker) egressGateway(ctx context.Context) (string, error) {
	info, err := d.cli.NetworkInspect(ctx, EgressNetwork, network.InspectOptions{})
	if cerrdefs.IsNotFound(err) {
		_, err = d.cli.NetworkCreate(ctx, EgressNetwork, network.CreateOptions{
			Driver:   "bridge",
			Internal: true,
			Options:  map[string]string{optBridgeName: EgressBridge, optICC: "false"},
			Labels:   map[string]string{LabelSandbox: "1"},
		})
		if err != nil && !cerrdefs.IsConflict(err) {
			return "", fmt.Errorf("create the egress network %s: %w", EgressNetwork, err)
		}
		info, err = d.cli.NetworkInspect(ctx, EgressNetwork, network.InspectOptions{})
	}
	if err != nil {
		return "", fmt.Errorf("inspect the egress network %s: %w", EgressNetwork, err)
	}
	switch {
	case info.Driver != "bridge" || info.Options[optBridgeName] != EgressBridge:
		err = fmt.Errorf("not a bridge on %s", EgressBridge)
	case info.Options[optICC] != "false":
		err = errors.New("sandboxes on it can reach each other (enable_icc is not false)")
	case !info.Internal:
		err = errors.New("it is not internal")
	case info.EnableIPv6:
		err = errors.New("IPv6 is enabled, and the firewall rules are IPv4 only")
	case len(info.IPAM.Config) == 0 || net.ParseIP(info.IPAM.Config[0].Gateway).To4() == nil:
		err = errors.New("it has no IPv4 gateway for the proxy")
	}
	if err != nil {
		return "", fmt.Errorf("egress network %s: %w (remove it: docker network rm %s)", EgressNetwork, err, EgressNetwork)
	}
	if _, err := net.InterfaceByName(EgressBridge); err != nil {
		return "", fmt.Errorf("egress network: the bridge %s is not on this machine, so the proxy and firewall here cannot serve it (run the worker beside its engine): %w", EgressBridge, err)
	}
	return info.IPAM.Config[0].Gateway, nil
}

// proxyEnv points every common client at the proxy. NO_PROXY holds only
// the job's services, reached directly: nothing else is reachable
// without the proxy. The JVM reads none of these variables, so Maven and
// Gradle get the proxy as system properties (javaProxyOptions).
func proxyEnv(url string, services []string) []string {
	direct := strings.Join(services, ",")
	return []string{
		"HTTP_PROXY=" + url, "HTTPS_PROXY=" + url,
		"http_proxy=" + url, "https_proxy=" + url,
		"NO_PROXY=" + direct, "no_proxy=" + direct,
		"JAVA_TOOL_OPTIONS=" + javaProxyOptions(url, services),
	}
}

// javaProxyOptions are the JVM's proxy system properties for the proxy at
// url ("http://host:port"), the services reached directly. They go in
// JAVA_TOOL_OPTIONS, which every JVM reads (Maven, the Gradle client,
// its daemon and its wrapper's download), not MAVEN_OPTS or GRADLE_OPTS,
// which an image sets for its own ends (ours: Maven's local repository)
// and the container's environment would replace. Maven 3.8 takes them:
// its HTTP transport, wagon-http 3.5, builds its client with
// useSystemProperties, so the JVM's ProxySelector routes each request
// (a settings.xml <proxy> is not needed). Each JVM prints "Picked up
// JAVA_TOOL_OPTIONS: ..." to its stderr: noise in setup's output only,
// since no other phase has the proxy.
func javaProxyOptions(url string, services []string) string {
	hostPort := strings.TrimPrefix(url, "http://")
	host, port, _ := net.SplitHostPort(hostPort)
	opts := []string{
		"-Dhttp.proxyHost=" + host, "-Dhttp.proxyPort=" + port,
		"-Dhttps.proxyHost=" + host, "-Dhttps.proxyPort=" + port,
	}
	// Without the property the JVM goes directly to localhost only,
	// which the sandbox has nothing on; with it, the services too.
	if len(services) > 0 {
		opts = append(opts, "-Dhttp.nonProxyHosts="+strings.Join(services, "|"))
	}
	return strings.Join(opts, " ")
}

// registerEgress tells the proxy the sandbox's address on the egress
// network, before any command runs in it.
func (c *dockerSandbox) registerEgress(ctx context.Context, e *sandbox.Egress) error {
	info, err := c.d.cli.ContainerInspect(ctx, c.id)
	if err != nil {
		return fmt.Errorf("inspect sandbox %.12s: %w", c.id, err)
	}
	ep := info.NetworkSettings.Networks[EgressNetwork]
	if ep == nil || ep.IPAddress == "" {
		return fmt.Errorf("sandbox %.12s has no address on %s", c.id, EgressNetwork)
	}
	c.d.egressMu.Lock()
	st := c.d.egress
	c.d.egressMu.Unlock()
	c.egressIP = ep.IPAddress
	c.egress = st.proxy.Register(ep.IPAddress, e.Allow, e.Phase, e.Refused)
	return c.logBypasses(ctx, st, info)
}

// unregisterEgress forgets the sandbox's address, at Close.
func (c *dockerSandbox) unregisterEgress() {
	if c.egress == nil {
		return
	}
	c.unlogBypasses()
	c.d.egressMu.Lock()
	if c.d.egress != nil {
		c.d.egress.proxy.Unregister(c.egressIP, c.egress)
	}
	c.d.egressMu.Unlock()
}

// closeEgress stops the proxy and removes its ACCEPT rule.
func (d *Docker) closeEgress() error {
	d.egressMu.Lock()
	defer d.egressMu.Unlock()
	if d.egress == nil {
		return nil
	}
	err := errors.Join(d.egress.proxy.Close(), d.egress.log.close())
	deleteRule(context.Background(), d.egress.accept)
	d.egress = nil
	return err
}

func insertFirst(ctx context.Context, rule []string) error {
	args := append([]string{"-w", "-I", rule[0], "1"}, rule[1:]...)
	if out, err := exec.CommandContext(ctx, "iptables", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("iptables -I %s: %w: %s", rule[0], err, bytes.TrimSpace(out))
	}
	return nil
}

// deleteRule removes every copy of rule; one that is absent is no error.
func deleteRule(ctx context.Context, rule []string) {
	args := append([]string{"-w", "-D"}, rule...)
	for range 16 {
		if exec.CommandContext(ctx, "iptables", args...).Run() != nil {
			return
		}
	}
}
