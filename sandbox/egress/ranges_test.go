package egress_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/patchwright/patchwright/sandbox/egress"
)

// TestRulesRefuse: private, link-local, shared, reserved and NAT64
// addresses are refused unless the operator opened their range; loopback,
// unspecified and multicast always; a public address never; a further
// closed range (the engine's networks) like the built-in ones.
func TestRulesRefuse(t *testing.T) {
	engine := netip.MustParsePrefix("198.51.100.0/24") // a pool of public shape
	cases := []struct {
		ip   string
		open []string
		want string // part of the reason; "" = allowed
	}{
		{"10.1.2.3", nil, "private"},
		{"172.18.0.5", nil, "private"},
		{"192.168.1.1", nil, "private"},
		{"fd12::1", nil, "private"},
		{"169.254.169.254", nil, "link-local"},
		{"fe80::1", nil, "link-local"},
		{"fe80::1%eth0", nil, "link-local"},
		{"::ffff:127.0.0.1", nil, "loopback"},
		{"100.64.0.1", nil, "shared"},
		{"240.0.0.1", nil, "reserved"},
		{"64:ff9b::a00:1", nil, "NAT64"},
		{"::ffff:10.0.0.1", nil, "private"},
		{"127.0.0.1", nil, "loopback"},
		{"::1", nil, "loopback"},
		{"0.0.0.0", nil, "unspecified"},
		{"224.0.0.251", nil, "multicast"},
		{"255.255.255.255", nil, "broadcast"},
		{"198.51.100.7", nil, "engine network"},
		{"203.0.113.9", nil, ""},
		{"2001:db8::1", nil, ""},
		// The operator's ranges open what they hold, and only that.
		{"10.20.1.1", []string{"10.20.0.0/16"}, ""},
		{"10.21.0.1", []string{"10.20.0.0/16"}, "private"},
		{"198.51.100.7", []string{"198.51.100.0/24"}, ""},
		{"169.254.169.254", []string{"169.254.169.254/32"}, ""},
		// Never opened, whatever a range says.
		{"127.0.0.1", []string{"0.0.0.0/0"}, "loopback"},
		{"0.0.0.0", []string{"0.0.0.0/0"}, "unspecified"},
	}
	for _, c := range cases {
		r := egress.Rules{Closed: func(ip netip.Addr) string {
			if engine.Contains(ip) {
				return "an address of an engine network"
			}
			return ""
		}}
		for _, o := range c.open {
			r.Open = append(r.Open, netip.MustParsePrefix(o))
		}
		got := r.Refuses(netip.MustParseAddr(c.ip))
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("Refuses(%s) with %v open = %q, want %q", c.ip, c.open, got, c.want)
		}
		if strings.Contains(got, "private") && !strings.Contains(got, "only the operator can open") {
			t.Errorf("Refuses(%s) = %q, does not say who may open it", c.ip, got)
		}
	}
}

// TestParseRanges: the operator's setting takes ranges and single
// addresses; anything else, or a range holding loopback, unspecified or
// multicast addresses, is refused with what is wrong.
func TestParseRanges(t *testing.T) {
	got, err := egress.ParseRanges("10.20.0.0/16, 192.168.5.7 fd00:1::/64,172.30.1.9/16")
	want := "[10.20.0.0/16 192.168.5.7/32 fd00:1::/64 172.30.0.0/16]"
	if err != nil || fmt.Sprint(got) != want {
		t.Fatalf("ParseRanges = %v, %v; want %s", got, err, want)
	}
	if got, err := egress.ParseRanges(""); err != nil || len(got) != 0 {
		t.Fatalf("ParseRanges(\"\") = %v, %v", got, err)
	}
	for bad, says := range map[string]string{
		"10.0.0.0/33":         "not an address range",
		"registry.corp":       "not an address range",
		"0.0.0.0/0":           "which no setting opens",
		"127.0.0.1":           "loopback",
		"::/0":                "which no setting opens",
		"224.0.0.0/8":         "multicast",
		"::ffff:10.0.0.0/104": "IPv4",
	} {
		if _, err := egress.ParseRanges(bad); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("ParseRanges(%q) = %v, want an error saying %q", bad, err, says)
		}
	}
}

// resolver answers names as a test says, standing in for DNS.
func resolver(names map[string][]string) func(context.Context, string) ([]netip.Addr, error) {
	return func(_ context.Context, host string) ([]netip.Addr, error) {
		if a, err := netip.ParseAddr(host); err == nil {
			return []netip.Addr{a}, nil
		}
		var out []netip.Addr
		for _, s := range names[host] {
			out = append(out, netip.MustParseAddr(s))
		}
		if out == nil {
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		return out, nil
	}
}

// TestProxyRefusesPrivateNetworks: allowlisted names and addresses that
// are, or resolve to, private, link-local or shared addresses are refused
// and recorded before any connection is tried, for CONNECT and plain HTTP;
// so is a name whose answer mixes a public address with a private one.
// Nothing is sent anywhere: every one is refused before its dial.
func TestProxyRefusesPrivateNetworks(t *testing.T) {
	t.Parallel()
	p := listen(t, egress.Options{Lookup: resolver(map[string][]string{
		"registry.corp":  {"10.0.0.7"},
		"redis.compose":  {"172.18.0.2"},
		"metadata.cloud": {"169.254.169.254"},
		"rebind.example": {"203.0.113.5", "192.168.1.1"},
	})})
	hosts := []string{"registry.corp", "redis.compose", "metadata.cloud", "rebind.example", "10.1.2.3", "100.64.0.1", "fd00::1"}
	var allow egress.Allowlist
	for _, h := range hosts {
		allow = append(allow, net.JoinHostPort(h, "6379"), h)
	}
	var rec recorder
	p.Register("127.0.0.1", allow, "setup", rec.add)
	c := proxyClient(p)
	for _, h := range hosts {
		if code, body := get(t, c, "http://"+net.JoinHostPort(h, "80")+"/"); code != http.StatusBadGateway || !strings.Contains(body, "which only the operator can open") {
			t.Errorf("GET %s: %d %q, want 502 and why", h, code, body)
		}
		if _, err := c.Get("https://" + net.JoinHostPort(h, "6379") + "/"); err == nil {
			t.Errorf("CONNECT %s:6379 went through", h)
		}
	}
	got := rec.all()
	if len(got) != 2*len(hosts) {
		t.Fatalf("%d refusals, want %d: %+v", len(got), 2*len(hosts), got)
	}
	for _, r := range got {
		if !egress.InClosedRange(r) || r.Phase != "setup" {
			t.Errorf("refusal %+v: the reason does not say the range is closed", r)
		}
		if r.Host == "rebind.example" && !strings.Contains(r.Reason, "192.168.1.1") {
			t.Errorf("refusal %+v: does not name the private address of the mixed answer", r)
		}
	}
}

// TestProxyBoundsConnections: a sandbox holds at most MaxConns connections
// to the proxy; the next is closed at once and recorded (once, however
// many follow), and a place given back is taken again.
func TestProxyBoundsConnections(t *testing.T) {
	t.Parallel()
	port := upstream(t)
	opts := denyNothing
	opts.MaxConns = 3
	p := listen(t, opts)
	var rec recorder
	p.Register("127.0.0.1", egress.Allowlist{"localhost:" + port}, "setup", rec.add)
	var held []net.Conn
	for range 3 {
		conn, err := net.Dial("tcp", p.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, conn)
	}
	for range 5 {
		conn, err := net.Dial("tcp", p.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "GET http://localhost:%s/x HTTP/1.1\r\nHost: localhost\r\n\r\n", port)
		if n, err := conn.Read(make([]byte, 1)); err == nil {
			t.Fatalf("a connection past the bound was served (%d bytes)", n)
		}
		conn.Close()
	}
	got := rec.all()
	if len(got) != 1 || !strings.Contains(got[0].Reason, "more than 3 connections") {
		t.Fatalf("refusals: %+v, want one of the bound", got)
	}
	for _, c := range held {
		c.Close()
	}
	// The server sees the closes on its own time: wait for a place.
	c := proxyClient(p)
	for {
		resp, err := c.Get("http://localhost:" + port + "/again")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("after the bound: %d", resp.StatusCode)
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
