package docker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
)

// Connections that go around the egress proxy. Each allowlisted sandbox
// gets, while it lives, three rules at the head of the mangle table's
// PREROUTING chain: the first packet of every new flow from its address
// on the egress bridge, other than to the proxy, is copied to this
// worker's NFLOG group (nflog_linux.go), prefixed with the sandbox's ID.
// The filter rules of egress.go then refuse the packet as before. The
// sandbox also gets a default route via the gateway, which Docker gives
// (Docker 20.10 gives a container on an internal network one, later
// versions may not): without it a connection to an outside address fails
// inside the sandbox and never reaches a firewall that could record it.
//
// Every rule a worker adds names its owner: the per-sandbox rules carry
// the comment bypassTag+ID, and the INPUT rule that opens the proxy its
// port. reapEgressRules removes those whose owner is gone, so a crashed
// worker's rules do not outlive it.

// bypassTag starts the comment of every per-sandbox rule.
const bypassTag = "pw-egress:"

// bypassRules are the mangle PREROUTING rules that log sandbox ip's
// bypassing packets to st's log group as prefix: everything but TCP to
// the proxy's port on st's gateway, in three rules because a rule cannot
// say "not (to the gateway and to that port)".
func bypassRules(ip, prefix string, st *egressState) [][]string {
	gw, proxyPort := st.gw, st.port
	log := []string{"-m", "conntrack", "--ctstate", "NEW",
		"-m", "comment", "--comment", bypassTag + prefix,
		"-j", "NFLOG", "--nflog-group", fmt.Sprint(st.log.group), "--nflog-prefix", prefix}
	head := []string{"PREROUTING", "-i", EgressBridge, "-s", ip}
	var out [][]string
	for _, match := range [][]string{
		{"!", "-d", gw},
		{"-d", gw, "!", "-p", "tcp"},
		{"-d", gw, "-p", "tcp", "!", "--dport", proxyPort},
	} {
		rule := append(append(append([]string{}, head...), match...), log...)
		out = append(out, rule)
	}
	return out
}

// logBypasses routes the sandbox's outside traffic to the host and logs
// what of it bypasses the proxy to c.egress.
func (c *dockerSandbox) logBypasses(ctx context.Context, st *egressState, info container.InspectResponse) error {
	// The namespace by the sandbox's process, or, for a worker that does
	// not see the host's processes, by the engine's handle on it.
	ns := info.NetworkSettings.SandboxKey
	if info.State != nil && info.State.Pid > 0 {
		if p := fmt.Sprintf("/proc/%d/ns/net", info.State.Pid); fileExists(p) {
			ns = p
		}
	}
	if err := addDefaultRoute(ns, net.ParseIP(st.gw)); err != nil {
		return fmt.Errorf("sandbox %.12s: route its traffic to the firewall that records what bypasses the egress proxy: %w", c.id, err)
	}
	prefix := c.id[:12]
	st.clientsMu.Lock()
	st.clients[prefix] = c.egress
	st.clientsMu.Unlock()
	c.egressLog = st
	c.bypassRules = bypassRules(c.egressIP, prefix, st)
	for _, rule := range c.bypassRules {
		if err := iptables(ctx, "mangle", "-I", rule[0], "1", rule[1:]...); err != nil {
			return fmt.Errorf("sandbox %.12s: log what bypasses the egress proxy: %w", c.id, err)
		}
	}
	return nil
}

// unlogBypasses removes the sandbox's rules and its log registration.
func (c *dockerSandbox) unlogBypasses() {
	if c.egressLog == nil {
		return
	}
	for _, rule := range c.bypassRules {
		iptables(context.Background(), "mangle", "-D", rule[0], "", rule[1:]...)
	}
	c.egressLog.clientsMu.Lock()
	delete(c.egressLog.clients, c.id[:12])
	c.egressLog.clientsMu.Unlock()
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// bypassFlushTimeout bounds the wait for the firewall log at the end of a
// command.
const bypassFlushTimeout = 5 * time.Second

// flushBypasses returns once what the command's packets caused is
// recorded, before the command it is recorded with changes.
func (c *dockerSandbox) flushBypasses() {
	if c.egressLog == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), bypassFlushTimeout)
	defer cancel()
	c.egressLog.log.flush(ctx)
}

// iptables runs one iptables command on table; pos, when not "", is the
// position argument after the chain.
func iptables(ctx context.Context, table, op, chain, pos string, rule ...string) error {
	args := []string{"-w", "-t", table, op, chain}
	if pos != "" {
		args = append(args, pos)
	}
	args = append(args, rule...)
	if out, err := exec.CommandContext(ctx, "iptables", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("iptables %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// reapEgressRules removes the egress rules whose owner is gone: the
// per-sandbox rules of sandboxes no longer running, and the INPUT rules
// opening a proxy port on which nothing listens any more (the worker
// that listened there died). The rules are listed before the containers:
// a sandbox's rules are added once it runs, so a rule whose sandbox does
// not run at the later listing is stale, never one being set up.
func (d *Docker) reapEgressRules(ctx context.Context) error {
	mangle, err := listRules(ctx, "mangle", "PREROUTING")
	if err != nil {
		return err
	}
	input, err := listRules(ctx, "filter", "INPUT")
	if err != nil {
		return err
	}
	running, err := d.cli.ContainerList(ctx, container.ListOptions{
		Filters: filters.NewArgs(filters.Arg("label", LabelSandbox), filters.Arg("status", "running")),
	})
	if err != nil {
		return fmt.Errorf("list running sandboxes: %w", err)
	}
	live := map[string]bool{}
	for _, c := range running {
		live[c.ID[:12]] = true
	}
	// A rule another worker's reaper removed meanwhile fails to go: no
	// error.
	for _, rule := range mangle {
		if id, ok := ruleOwner(rule); ok && !live[id] {
			iptables(ctx, "mangle", "-D", rule[1], "", rule[2:]...)
		}
	}
	for _, rule := range input {
		if addr, ok := proxyAccept(rule); ok && !listening(addr) {
			iptables(ctx, "filter", "-D", rule[1], "", rule[2:]...)
		}
	}
	return nil
}

// canFirewall reports whether this process can change the firewall: as
// root, with iptables. Without, it installs no rules, and has none to reap.
func canFirewall() bool {
	_, err := exec.LookPath("iptables")
	return err == nil && os.Geteuid() == 0
}

// listRules is iptables -S of a chain, each rule split into its words
// ("-A", chain, ...), unquoted (iptables-nft quotes comments). The rules
// this package adds have no spaces in their words, so their words are
// what deletes them; a rule of someone else's may not split right, and
// is not this package's to delete.
func listRules(ctx context.Context, table, chain string) ([][]string, error) {
	out, err := exec.CommandContext(ctx, "iptables", "-w", "-t", table, "-S", chain).Output()
	if err != nil {
		return nil, fmt.Errorf("iptables -t %s -S %s: %w", table, chain, err)
	}
	return parseRules(string(out)), nil
}

// parseRules splits iptables -S output as listRules says.
func parseRules(out string) [][]string {
	var rules [][]string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		for i := range f {
			f[i] = strings.Trim(f[i], `"`)
		}
		if len(f) > 2 && f[0] == "-A" {
			rules = append(rules, f)
		}
	}
	return rules
}

// ruleOwner is the sandbox ID a per-sandbox rule names.
func ruleOwner(rule []string) (string, bool) {
	for i, w := range rule[:len(rule)-1] {
		if w == "--comment" && strings.HasPrefix(rule[i+1], bypassTag) {
			return strings.TrimPrefix(rule[i+1], bypassTag), true
		}
	}
	return "", false
}

// proxyAccept is the address ("gw:port") an INPUT rule of the egress
// bridge opens, if it is the ACCEPT of a proxy.
func proxyAccept(rule []string) (string, bool) {
	var in, dst, port string
	for i := 0; i+1 < len(rule); i++ {
		switch rule[i] {
		case "-i":
			in = rule[i+1]
		case "-d":
			dst = strings.TrimSuffix(rule[i+1], "/32")
		case "--dport":
			port = rule[i+1]
		}
	}
	if in != EgressBridge || dst == "" || port == "" || rule[len(rule)-1] != "ACCEPT" {
		return "", false
	}
	return net.JoinHostPort(dst, port), true
}

// listening reports whether something listens on addr: a probe that can
// bind it finds nobody, and lets go at once. An address that is no
// longer this machine's has nobody either.
func listening(addr string) bool {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return errors.Is(err, syscall.EADDRINUSE)
	}
	ln.Close()
	return false
}
