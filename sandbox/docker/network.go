package docker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/network"
)

// The setup network: sandboxes created with sandbox.Spec.Network join it,
// not Docker's default bridge. It is a user-defined bridge with its own
// interface on the Docker host, and the host's firewall (see
// firewallRules) refuses every packet that comes from that interface to
// the host itself: the gateway address, the host's other addresses, the
// ports it publishes. Forwarded traffic, to the internet, goes through as
// on any bridge. Sandboxes on it cannot reach each other either
// (inter-container traffic is off).
//
// The rules are installed with iptables by the process that calls Create,
// so that process must run as root in the Docker host's network namespace
// (the worker beside its engine, or in a container with --network host
// and CAP_NET_ADMIN) with iptables installed. Create fails, and no setup
// command runs, when the rules cannot be installed or when the network's
// interface is not visible here (an engine on another machine).
const (
	// SetupNetwork is the Docker network setup-phase sandboxes join.
	SetupNetwork = "patchwright-setup"
	// SetupBridge is the name of its bridge interface on the Docker host.
	SetupBridge = "pw-setup0"
)

// Docker's bridge driver options used on the setup network.
const (
	optBridgeName = "com.docker.network.bridge.name"
	optICC        = "com.docker.network.bridge.enable_icc"
	optMasquerade = "com.docker.network.bridge.enable_ip_masquerade"
)

// firewallRules are the iptables rules (table filter) that keep setup
// sandboxes from the host, each as the chain and the rule's match and
// target. INPUT is the chain of every packet addressed to the host itself,
// whichever of its addresses; Docker never rewrites INPUT, so the rule
// stays first. REJECT, not DROP, so that a setup command trying a host
// address fails at once instead of hanging until its time limit; TCP with
// a reset, because the kernel sends at most one ICMP error a second. Each
// rule goes to the head of its chain, so the TCP one, added last, comes
// first.
// DOCKER-USER, the chain Docker leaves to operators at the head of
// FORWARD, refuses link-local destinations: cloud metadata services
// (169.254.169.254) hand out the machine's credentials.
var firewallRules = [][]string{
	{"INPUT", "-i", SetupBridge, "-j", "REJECT"},
	{"INPUT", "-i", SetupBridge, "-p", "tcp", "-j", "REJECT", "--reject-with", "tcp-reset"},
	{"DOCKER-USER", "-i", SetupBridge, "-d", "169.254.0.0/16", "-j", "REJECT"},
}

// setupSysctls are set in setup sandboxes: no IPv6 at all, since the
// firewall rules are IPv4 only (the bridge's link-local IPv6 address would
// otherwise reach the host). A kernel without IPv6 has no such setting,
// and none is needed.
func setupSysctls() map[string]string {
	if _, err := os.Stat("/proc/sys/net/ipv6"); err != nil {
		return nil
	}
	return map[string]string{"net.ipv6.conf.all.disable_ipv6": "1"}
}

// setupNetworkMu serialises ensureSetupNetwork within this process; other
// processes doing the same at once are handled by the engine's conflict
// errors and iptables' lock (-w).
var setupNetworkMu sync.Mutex

// ensureSetupNetwork installs the firewall rules, then creates the setup
// network if it does not exist, and checks that it is the one described
// above. Everything is idempotent: it runs before every Create of a
// sandbox with a network, so that rules flushed meanwhile (a firewall
// reload) are back before any setup command runs.
func (d *Docker) ensureSetupNetwork(ctx context.Context) error {
	setupNetworkMu.Lock()
	defer setupNetworkMu.Unlock()
	for _, rule := range firewallRules {
		if err := ensureRule(ctx, rule); err != nil {
			return fmt.Errorf("setup network: install the firewall rule that keeps setup sandboxes off the Docker host (the worker must run as root in the Docker host's network namespace, with iptables): %w", err)
		}
	}
	info, err := d.cli.NetworkInspect(ctx, SetupNetwork, network.InspectOptions{})
	if cerrdefs.IsNotFound(err) {
		_, err = d.cli.NetworkCreate(ctx, SetupNetwork, network.CreateOptions{
			Driver: "bridge",
			Options: map[string]string{
				optBridgeName: SetupBridge,
				optICC:        "false",
				optMasquerade: "true",
			},
			Labels: map[string]string{LabelSandbox: "1"},
		})
		if err != nil && !cerrdefs.IsConflict(err) {
			return fmt.Errorf("create the setup network %s: %w", SetupNetwork, err)
		}
		info, err = d.cli.NetworkInspect(ctx, SetupNetwork, network.InspectOptions{})
	}
	if err != nil {
		return fmt.Errorf("inspect the setup network %s: %w", SetupNetwork, err)
	}
	if err := checkSetupNetwork(info); err != nil {
		return fmt.Errorf("setup network %s: %w (remove it: docker network rm %s)", SetupNetwork, err, SetupNetwork)
	}
	// The rules match the interface by name: they only protect the host
	// they were installed on, which must be the engine's.
	if _, err := net.InterfaceByName(SetupBridge); err != nil {
		return fmt.Errorf("setup network: the bridge %s is not on this machine, so the firewall rules here do not protect the Docker host (run the worker beside its engine): %w", SetupBridge, err)
	}
	return nil
}

// checkSetupNetwork refuses a network of that name made otherwise, by hand
// or by an older version: the firewall rules would not apply to it.
func checkSetupNetwork(info network.Inspect) error {
	switch {
	case info.Driver != "bridge":
		return fmt.Errorf("driver %q, want bridge", info.Driver)
	case info.Options[optBridgeName] != SetupBridge:
		return fmt.Errorf("bridge interface %q, want %s", info.Options[optBridgeName], SetupBridge)
	case info.Options[optICC] != "false":
		return errors.New("sandboxes on it can reach each other (enable_icc is not false)")
	case info.EnableIPv6:
		return errors.New("IPv6 is enabled, and the firewall rules are IPv4 only")
	case info.Internal:
		return errors.New("it is internal: setup would have no internet")
	}
	return nil
}

// ensureRule adds rule at the head of its chain unless it is there.
func ensureRule(ctx context.Context, rule []string) error {
	check := append([]string{"-w", "-C"}, rule...)
	err := exec.CommandContext(ctx, "iptables", check...).Run()
	if err == nil {
		return nil
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return fmt.Errorf("iptables: %w", err)
	}
	// -C exits 1 for a rule that is absent; other failures (no such
	// chain, no permission) are reported by -I below.
	insert := append([]string{"-w", "-I", rule[0], "1"}, rule[1:]...)
	if out, err := exec.CommandContext(ctx, "iptables", insert...).CombinedOutput(); err != nil {
		return fmt.Errorf("iptables %s: %w: %s", strings.Join(insert, " "), err, bytes.TrimSpace(out))
	}
	return nil
}
