package egress_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/patchwright/patchwright/sandbox/egress"
)

func TestAllowlist(t *testing.T) {
	a := egress.Allowlist{"proxy.golang.org", "Registry.Internal:8443", "*.example.com"}
	cases := []struct {
		host string
		port int
		want bool
	}{
		{"proxy.golang.org", 443, true},
		{"PROXY.golang.org.", 80, true},
		{"proxy.golang.org", 8080, false},
		{"sum.golang.org", 443, false},
		{"evilproxy.golang.org", 443, false},
		{"registry.internal", 8443, true},
		{"registry.internal", 443, false},
		{"a.b.example.com", 443, true},
		{"example.com", 443, false},
		{"badexample.com", 443, false},
		{"10.0.0.1", 443, false},
	}
	for _, c := range cases {
		if got := a.Allows(c.host, c.port); got != c.want {
			t.Errorf("Allows(%s, %d) = %v, want %v", c.host, c.port, got, c.want)
		}
	}
	for _, bad := range []string{"", " ", "*", "*.", "a/b", "host:0", "host:70000", "host:x", ".example.com", "u@host", "*.*.com"} {
		if egress.CheckEntry(bad) == nil {
			t.Errorf("CheckEntry(%q) = nil, want an error", bad)
		}
	}
	for _, good := range []string{"pypi.org", "*.pythonhosted.org", "registry.internal:8443", "10.0.0.1"} {
		if err := egress.CheckEntry(good); err != nil {
			t.Errorf("CheckEntry(%q) = %v", good, err)
		}
	}
}

// recorder collects refusals.
type recorder struct {
	mu  sync.Mutex
	got []egress.Refusal
}

func (r *recorder) add(x egress.Refusal) { r.mu.Lock(); r.got = append(r.got, x); r.mu.Unlock() }
func (r *recorder) all() []egress.Refusal {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]egress.Refusal(nil), r.got...)
}

// upstream is a server on loopback that stands for a registry; the proxy
// under test is told to deny nothing, so that it may reach it.
func upstream(t *testing.T) (port string) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "module %s", r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	_, port, _ = net.SplitHostPort(srv.Listener.Addr().String())
	return port
}

func proxyClient(p *egress.Proxy) *http.Client {
	u := &url.URL{Scheme: "http", Host: p.Addr().String()}
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u)}}
}

func listen(t *testing.T, opts egress.Options) *egress.Proxy {
	p, err := egress.Listen("127.0.0.1:0", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// denyNothing lets the proxy reach the tests' upstream on loopback.
var denyNothing = egress.Options{Refuses: func(netip.Addr) string { return "" }}

func get(t *testing.T, c *http.Client, u string) (int, string) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestProxyAllowsAndRefuses: plain HTTP and CONNECT to an allowed name go
// through; another name, or the same server by address, is refused and
// recorded with the command that asked.
func TestProxyAllowsAndRefuses(t *testing.T) {
	t.Parallel()
	port := upstream(t)
	p := listen(t, denyNothing)
	var rec recorder
	cl := p.Register("127.0.0.1", egress.Allowlist{"localhost:" + port}, "setup", rec.add)
	cl.SetCommand("go mod download")
	c := proxyClient(p)

	if code, body := get(t, c, "http://localhost:"+port+"/rsc.io/quote"); code != 200 || body != "module /rsc.io/quote" {
		t.Fatalf("allowed GET: %d %q", code, body)
	}
	if code, _ := get(t, c, "http://127.0.0.1:"+port+"/x"); code != http.StatusForbidden {
		t.Fatalf("GET by address: %d, want 403", code)
	}
	// CONNECT: a tunnel to the allowed name carries raw bytes both ways.
	conn, err := net.Dial("tcp", p.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "CONNECT localhost:%s HTTP/1.1\r\nHost: localhost:%s\r\n\r\n", port, port)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	fmt.Fprintf(conn, "GET /tunnelled HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
	inner, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(inner.Body)
	if string(b) != "module /tunnelled" {
		t.Fatalf("through the tunnel: %q", b)
	}
	// CONNECT to a name not allowed.
	cl.SetCommand("npm ci")
	if _, err := c.Get("https://registry.npmjs.org/lodash"); err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Fatalf("CONNECT registry.npmjs.org: %v, want Forbidden", err)
	}
	want := []egress.Refusal{
		{Host: "127.0.0.1", Port: mustAtoi(port), Phase: "setup", Command: "go mod download", Reason: "not on the allowlist"},
		{Host: "registry.npmjs.org", Port: 443, Phase: "setup", Command: "npm ci", Reason: "not on the allowlist"},
	}
	if got := rec.all(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("refusals:\n got %+v\nwant %+v", got, want)
	}
}

// TestProxyDeniesAddresses: an allowed name that resolves to an address
// no sandbox may reach (here loopback, by the built-in rules) is refused
// at the dial, for plain HTTP and CONNECT alike, and recorded.
func TestProxyDeniesAddresses(t *testing.T) {
	t.Parallel()
	port := upstream(t)
	p := listen(t, egress.Options{})
	var rec recorder
	p.Register("127.0.0.1", egress.Allowlist{"localhost:" + port}, "setup", rec.add)
	c := proxyClient(p)
	if code, _ := get(t, c, "http://localhost:"+port+"/"); code != http.StatusBadGateway {
		t.Fatalf("GET to loopback by an allowed name: %d, want 502", code)
	}
	if _, err := c.Get("https://localhost:" + port + "/"); err == nil {
		t.Fatal("CONNECT to loopback by an allowed name went through")
	}
	got := rec.all()
	if len(got) != 2 || !strings.Contains(got[0].Reason, "no sandbox may reach") || !strings.Contains(got[1].Reason, "no sandbox may reach") {
		t.Fatalf("refusals: %+v", got)
	}
}

// TestProxyUnknownClient: a source address nobody registered (or one
// unregistered) gets nothing.
func TestProxyUnknownClient(t *testing.T) {
	t.Parallel()
	port := upstream(t)
	p := listen(t, denyNothing)
	c := proxyClient(p)
	if code, _ := get(t, c, "http://localhost:"+port+"/"); code != http.StatusForbidden {
		t.Fatalf("unregistered client: %d, want 403", code)
	}
	cl := p.Register("127.0.0.1", egress.Allowlist{"localhost:" + port}, "setup", nil)
	if code, _ := get(t, c, "http://localhost:"+port+"/"); code != 200 {
		t.Fatalf("registered client: %d, want 200", code)
	}
	p.Unregister("127.0.0.1", cl)
	if code, _ := get(t, c, "http://localhost:"+port+"/"); code != http.StatusForbidden {
		t.Fatalf("unregistered client: %d, want 403", code)
	}
	// A request that is not a proxy request.
	resp, err := http.Get("http://" + p.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("direct request: %d", resp.StatusCode)
	}
}

func mustAtoi(s string) int {
	var n int
	fmt.Sscan(s, &n)
	return n
}
