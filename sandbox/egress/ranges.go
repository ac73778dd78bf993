package egress

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// Address rules: which addresses the proxy connects to, whatever a
// repository's network.allow says. An allowlist names hosts, and a name
// can resolve to anything, so every address a name resolves to is checked
// before the proxy connects (Proxy.dial).
//
// Two kinds are refused. Closed ranges (private, link-local, shared,
// reserved, and the Docker engine's networks through Options.Closed) hold
// what a repository must not reach on a shared worker: the queue's Redis
// on a compose bridge, cloud metadata, the company's LAN. The operator may
// open a part of them (Options.Open), for a registry on the LAN. Never
// ranges (loopback, unspecified, multicast, broadcast, this machine's own
// addresses) stay refused even then: they are the worker itself.

// rangeKind is a named set of prefixes.
type rangeKind struct {
	what     string
	prefixes []netip.Prefix
}

func prefixes(s ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(s))
	for i, p := range s {
		out[i] = netip.MustParsePrefix(p)
	}
	return out
}

// closedRanges may be opened by the operator.
var closedRanges = []rangeKind{
	{"a private address", prefixes("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7", "fec0::/10")},
	{"a link-local address (cloud metadata answers there)", prefixes("169.254.0.0/16", "fe80::/10")},
	{"a shared (carrier-grade NAT) address", prefixes("100.64.0.0/10")},
	{"a reserved address", prefixes("192.0.0.0/24", "240.0.0.0/4")},
	// NAT64 prefixes carry an IPv4 address inside, a private one too.
	{"a NAT64 address", prefixes("64:ff9b::/96", "64:ff9b:1::/48")},
}

// neverRanges are refused whatever the operator opened.
var neverRanges = []rangeKind{
	{"a loopback address", prefixes("127.0.0.0/8", "::1/128")},
	{"an unspecified address", prefixes("0.0.0.0/8", "::/128")},
	{"a multicast or broadcast address", prefixes("224.0.0.0/4", "255.255.255.255/32", "ff00::/8")},
}

func kindOf(kinds []rangeKind, ip netip.Addr) string {
	for _, k := range kinds {
		for _, p := range k.prefixes {
			if p.Contains(ip) {
				return k.what
			}
		}
	}
	return ""
}

// never says why ip is refused even inside an opened range; "" if not.
func never(ip netip.Addr) string {
	if why := kindOf(neverRanges, ip); why != "" {
		return why
	}
	if ownAddress(ip) {
		return "an address of the worker's own machine"
	}
	return ""
}

// ownAddress reports whether ip belongs to one of this machine's
// interfaces (a Docker bridge's gateway is one). An error listing them
// counts as yes: refusing is the safe answer.
func ownAddress(ip netip.Addr) bool {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return true
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if own, ok := netip.AddrFromSlice(n.IP); ok && own.Unmap() == ip {
				return true
			}
		}
	}
	return false
}

// closed says why ip is refused unless the operator opened it; "" if not.
func closed(ip netip.Addr) string { return kindOf(closedRanges, ip) }

// ParseRanges reads the operator's opened ranges: CIDR prefixes ("10.20.0.0/16",
// "fd00:1::/64") or single addresses, separated by commas or spaces.
// A range that holds a never-refused address (loopback, unspecified,
// multicast) is an error, so that no setting looks as if it opened them.
func ParseRanges(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.FieldsFunc(s, func(c rune) bool { return c == ',' || c == ' ' }) {
		p, err := netip.ParsePrefix(f)
		if err != nil {
			a, aerr := netip.ParseAddr(f)
			if aerr != nil {
				return nil, fmt.Errorf("%q is not an address range such as 10.20.0.0/16 or an address", f)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		p = p.Masked()
		if p.Addr().Is4In6() {
			return nil, fmt.Errorf("%q: write an IPv4 range as IPv4", f)
		}
		for _, k := range neverRanges {
			for _, n := range k.prefixes {
				if n.Overlaps(p) {
					return nil, fmt.Errorf("%q holds %s, which no setting opens", f, k.what)
				}
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// Rules are the address rules of a proxy: the built-in ranges, the
// operator's opened ranges and any further closed ones.
type Rules struct {
	// Open are the ranges the operator opened (PATCHWRIGHT_EGRESS_ALLOW_CIDRS,
	// read by ParseRanges): a closed address in one is reached.
	Open []netip.Prefix
	// Closed, when set, says why a further address is closed ("" if it
	// is not): the Docker engine's networks, whatever their ranges.
	Closed func(netip.Addr) string
}

// Refuses says why no sandbox may reach ip ("a private address, which
// only the operator can open (…)"); "" if one may.
func (r Rules) Refuses(ip netip.Addr) string {
	// A prefix never contains an address with a zone ("fe80::1%eth0").
	ip = ip.Unmap().WithZone("")
	if why := never(ip); why != "" {
		return why + ", which no sandbox may reach"
	}
	for _, p := range r.Open {
		if p.Contains(ip) {
			return ""
		}
	}
	if why := closed(ip); why != "" {
		return why + openHint
	}
	if r.Closed != nil {
		if why := r.Closed(ip); why != "" {
			return why + openHint
		}
	}
	return ""
}

// openHint says who may open a closed range: not the repository.
const openHint = ", which only the operator can open (PATCHWRIGHT_EGRESS_ALLOW_CIDRS)"

// InClosedRange reports whether r was refused for an address in a closed
// range, one the operator could open: said to the repository whatever
// its checks did, since no network.allow can reach it.
func InClosedRange(r Refusal) bool { return strings.HasSuffix(r.Reason, openHint) }
