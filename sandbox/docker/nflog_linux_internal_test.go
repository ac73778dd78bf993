package docker

import (
	"strings"
	"testing"
)

// ipv4 is a minimal IPv4 header to dst with proto, then payload.
func ipv4(proto byte, dst [4]byte, payload []byte) []byte {
	h := make([]byte, 20)
	h[0] = 0x45
	h[9] = proto
	copy(h[16:], dst[:])
	return append(h, payload...)
}

// TestParsePacket: the logged packet's address, port and kind, and a DNS
// query's name with anything unprintable in it replaced.
func TestParsePacket(t *testing.T) {
	tcp := ipv4(6, [4]byte{192, 0, 2, 7}, []byte{0x9c, 0x40, 0x24, 0xb2, 0, 0, 0, 0})
	udpHeader := []byte{0x9c, 0x40, 0, 53, 0, 0, 0, 0}
	query := []byte{0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 4, 'l', 'e', 'a', 'k', 3, 'a', '\n', 'b', 0, 0, 1, 0, 1}
	answer := append([]byte{}, query...)
	answer[2] |= 0x80
	for _, c := range []struct {
		name string
		pkt  []byte
		want bypass
	}{
		{"tcp", tcp, bypass{ip: "192.0.2.7", port: 9394, reason: "bypassed the proxy: a direct TCP connection"}},
		{"dns", ipv4(17, [4]byte{8, 8, 8, 8}, append(udpHeader, query...)), bypass{ip: "8.8.8.8", port: 53, reason: "bypassed the proxy: a DNS query for leak.a?b"}},
		{"dns answer", ipv4(17, [4]byte{8, 8, 8, 8}, append(udpHeader, answer...)), bypass{ip: "8.8.8.8", port: 53, reason: "bypassed the proxy: UDP"}},
		{"icmp", ipv4(1, [4]byte{10, 0, 0, 1}, nil), bypass{ip: "10.0.0.1", reason: "bypassed the proxy: ICMP"}},
	} {
		if got, ok := parsePacket(c.pkt); !ok || got != c.want {
			t.Errorf("%s: %+v %v, want %+v", c.name, got, ok, c.want)
		}
	}
	if _, ok := parsePacket([]byte{0x60, 0, 0}); ok {
		t.Error("a truncated non-IPv4 packet parsed")
	}
}

// TestReapedRuleShapes: the rules reapEgressRules reads back from
// iptables -S, with and without iptables-nft's quotes.
func TestReapedRuleShapes(t *testing.T) {
	rules := parseRules("-P PREROUTING ACCEPT\n" + strings.Join([]string{
		`-A PREROUTING -s 172.18.0.2/32 ! -d 172.18.0.1/32 -i pw-egress0 -m conntrack --ctstate NEW -m comment --comment "pw-egress:0123456789ab" -j NFLOG --nflog-prefix 0123456789ab --nflog-group 28759`,
		`-A PREROUTING -s 172.18.0.2/32 ! -d 172.18.0.1/32 -i pw-egress0 -m conntrack --ctstate NEW -m comment --comment pw-egress:0123456789ab -j NFLOG --nflog-prefix 0123456789ab --nflog-group 28759`,
	}, "\n"))
	if len(rules) != 2 {
		t.Fatalf("rules: %q", rules)
	}
	for _, r := range rules {
		if id, ok := ruleOwner(r); !ok || id != "0123456789ab" {
			t.Errorf("owner of %q: %q %v", r, id, ok)
		}
	}
	accept := strings.Fields("-A INPUT -d 172.18.0.1/32 -i pw-egress0 -p tcp -m tcp --dport 43903 -j ACCEPT")
	if addr, ok := proxyAccept(accept); !ok || addr != "172.18.0.1:43903" {
		t.Errorf("proxy opening: %q %v", addr, ok)
	}
	for _, other := range []string{
		"-A INPUT -i pw-egress0 -p tcp -j REJECT --reject-with tcp-reset",
		"-A INPUT -d 172.18.0.1/32 -i pw-setup0 -p tcp -m tcp --dport 43903 -j ACCEPT",
	} {
		if _, ok := proxyAccept(strings.Fields(other)); ok {
			t.Errorf("%s taken for a proxy opening", other)
		}
	}
}

// BenchmarkNFLOGFlush is what every command of an allowlisted sandbox
// pays at its end: one round trip to the firewall log. Needs root.
func BenchmarkNFLOGFlush(b *testing.B) {
	l, err := openNFLOG(func(bypass) {})
	if err != nil {
		b.Skip(err)
	}
	defer l.close()
	for b.Loop() {
		if err := l.flush(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
}
