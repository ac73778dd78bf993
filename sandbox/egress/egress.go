// Package egress is the proxy through which setup sandboxes reach the
// network: HTTP CONNECT and plain HTTP requests, allowed by host name
// against each sandbox's allowlist, every refusal reported. The firewall
// (sandbox/docker) drops every other packet, so the proxy is the only way
// out; this package only decides who may go where.
//
// A client is told apart by its source address: each sandbox is
// registered with its address on the egress network before its first
// command, and an address nobody registered is refused.
package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/patchwright/patchwright/sandbox"
)

// Refusal is one connection the proxy refused (sandbox owns the type,
// which its Spec names).
type Refusal = sandbox.Refusal

// Allowlist holds host names a sandbox may reach. An entry is a host name
// ("proxy.golang.org", ports 80 and 443), a host name and port
// ("registry.internal:8443", that port only) or a domain's subdomains
// ("*.example.com", ports 80 and 443; not example.com itself).
type Allowlist []string

// CheckEntry reports what is wrong with an allowlist entry, nil if nothing.
func CheckEntry(e string) error {
	host, port, err := splitEntry(e)
	switch {
	case err != nil:
		return err
	case strings.ContainsAny(e, "/@ \t"):
		return fmt.Errorf("%q is not a host name, host:port or *.domain", e)
	case port < 0:
		return fmt.Errorf("%q: the port is not a number from 1 to 65535", e)
	}
	name := strings.TrimPrefix(host, "*.")
	if name == "" || strings.ContainsAny(name, "*/ @") || strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") {
		return fmt.Errorf("%q is not a host name, host:port or *.domain", e)
	}
	return nil
}

// splitEntry splits "host[:port]"; port 0 means 80 and 443, -1 invalid.
func splitEntry(e string) (string, int, error) {
	e = strings.ToLower(strings.TrimSpace(e))
	if e == "" {
		return "", 0, errors.New("empty allowlist entry")
	}
	h, p, err := net.SplitHostPort(e)
	if err != nil {
		return e, 0, nil
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 {
		return h, -1, nil
	}
	return h, n, nil
}

// Allows reports whether host (a name or an address literal) may be
// reached on port.
func (a Allowlist) Allows(host string, port int) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	for _, e := range a {
		h, p, err := splitEntry(e)
		if err != nil || p < 0 {
			continue
		}
		if p == 0 && port != 80 && port != 443 || p != 0 && p != port {
			continue
		}
		if h == host || strings.HasPrefix(h, "*.") && strings.HasSuffix(host, h[1:]) {
			return true
		}
	}
	return false
}

// Client is one registered sandbox.
type Client struct {
	allow   Allowlist
	phase   string
	refused func(Refusal)

	mu      sync.Mutex
	command string
	seen    map[Refusal]bool // what Refuse recorded
}

// SetCommand names the command the sandbox runs now, for the refusals it
// causes; "" when none runs.
func (c *Client) SetCommand(script string) {
	c.mu.Lock()
	c.command = script
	c.mu.Unlock()
}

func (c *Client) refuse(host string, port int, reason string) {
	c.mu.Lock()
	r := Refusal{Host: host, Port: port, Phase: c.phase, Command: c.command, Reason: reason}
	c.mu.Unlock()
	if c.refused != nil {
		c.refused(r)
	}
}

// Refuse records a connection refused elsewhere than in the proxy (the
// firewall refuses what goes around it), with the command that runs now.
// The same refusal during the same command is recorded once: a client
// retrying must not flood the ledger.
func (c *Client) Refuse(host string, port int, reason string) {
	c.mu.Lock()
	r := Refusal{Host: host, Port: port, Phase: c.phase, Command: c.command, Reason: reason}
	again := c.seen[r]
	if c.seen == nil {
		c.seen = map[Refusal]bool{}
	}
	c.seen[r] = true
	c.mu.Unlock()
	if !again && c.refused != nil {
		c.refused(r)
	}
}

// Proxy serves the egress network. It is safe for concurrent use.
type Proxy struct {
	ln   net.Listener
	srv  *http.Server
	tr   *http.Transport
	deny func(net.IP) bool

	mu      sync.Mutex
	clients map[string]*Client
}

// dialTimeout bounds the proxy's connection to an allowed host.
const dialTimeout = 30 * time.Second

// Listen starts a proxy on addr ("10.0.0.1:0"). deny reports the addresses
// no sandbox may reach whatever its allowlist says (the host's own,
// loopback, link-local: an allowed name can resolve to them); nil denies
// those of DefaultDeny.
func Listen(addr string, deny func(net.IP) bool) (*Proxy, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("egress proxy: %w", err)
	}
	if deny == nil {
		deny = DefaultDeny
	}
	p := &Proxy{ln: ln, deny: deny, clients: map[string]*Client{}}
	p.tr = &http.Transport{DialContext: p.dial, ResponseHeaderTimeout: 5 * time.Minute}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}
	go p.srv.Serve(ln)
	return p, nil
}

// Addr is where the proxy listens.
func (p *Proxy) Addr() net.Addr { return p.ln.Addr() }

// Close stops the proxy and every connection through it.
func (p *Proxy) Close() error {
	p.tr.CloseIdleConnections()
	return p.srv.Close()
}

// Register lets the sandbox at ip through to allow; refused, if not nil,
// is called (from the proxy's goroutines) for each refusal. A second
// registration of ip replaces the first.
func (p *Proxy) Register(ip string, allow Allowlist, phase string, refused func(Refusal)) *Client {
	c := &Client{allow: slices.Clone(allow), phase: phase, refused: refused}
	p.mu.Lock()
	p.clients[ip] = c
	p.mu.Unlock()
	return c
}

// Unregister forgets ip's client, if it is c: its later connections are
// refused.
func (p *Proxy) Unregister(ip string, c *Client) {
	p.mu.Lock()
	if p.clients[ip] == c {
		delete(p.clients, ip)
	}
	p.mu.Unlock()
}

func (p *Proxy) client(remote string) *Client {
	ip, _, _ := net.SplitHostPort(remote)
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.clients[ip]
}

// ServeHTTP handles one proxy request: CONNECT host:port, or a plain HTTP
// request with an absolute URL.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c := p.client(r.RemoteAddr)
	if c == nil {
		http.Error(w, "patchwright egress proxy: this address is not a sandbox's", http.StatusForbidden)
		return
	}
	host, port, ok := target(r)
	if !ok {
		http.Error(w, "patchwright egress proxy: want CONNECT host:port or an absolute http:// URL", http.StatusBadRequest)
		return
	}
	if !c.allow.Allows(host, port) {
		c.refuse(host, port, "not on the allowlist")
		http.Error(w, fmt.Sprintf("patchwright egress proxy: %s:%d is not on this repository's allowlist (network.allow in .github/agent.yml)", host, port), http.StatusForbidden)
		return
	}
	if r.Method == http.MethodConnect {
		p.tunnel(r.Context(), w, c, host, port)
		return
	}
	p.forward(w, r, c, host, port)
}

// target is the host and port a proxy request asks for.
func target(r *http.Request) (string, int, bool) {
	hostport := r.Host
	defPort := "80"
	if r.Method != http.MethodConnect {
		if r.URL.Scheme != "http" || r.URL.Host == "" {
			return "", 0, false
		}
		hostport = r.URL.Host
	} else {
		defPort = "443"
	}
	h, p, err := net.SplitHostPort(hostport)
	if err != nil {
		h, p = hostport, defPort
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 || h == "" {
		return "", 0, false
	}
	return strings.Trim(h, "[]"), n, true
}

// errDenied is a dial to an address no sandbox may reach.
type errDenied struct{ ip net.IP }

func (e errDenied) Error() string {
	return "resolves to " + e.ip.String() + ", which no sandbox may reach"
}

// dial connects to addr after checking every address it resolves to,
// so an allowed name cannot lead to the host or cloud metadata.
func (p *Proxy) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: dialTimeout, Control: func(_, address string, _ syscall.RawConn) error {
		h, _, _ := net.SplitHostPort(address)
		if ip := net.ParseIP(h); ip == nil || p.deny(ip) {
			return errDenied{ip}
		}
		return nil
	}}
	return d.DialContext(ctx, network, addr)
}

// refuseDial records a dial that the address check refused.
func refuseDial(c *Client, host string, port int, err error) {
	var denied errDenied
	if errors.As(err, &denied) {
		c.refuse(host, port, denied.Error())
	}
}

func (p *Proxy) tunnel(ctx context.Context, w http.ResponseWriter, c *Client, host string, port int) {
	up, err := p.dial(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		refuseDial(c, host, port, err)
		http.Error(w, "patchwright egress proxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer up.Close()
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "patchwright egress proxy: cannot tunnel", http.StatusInternalServerError)
		return
	}
	down, buf, err := hj.Hijack()
	if err != nil {
		return
	}
	defer down.Close()
	// The server's header deadlines must not cut a long download.
	down.SetDeadline(time.Time{})
	if _, err := io.WriteString(down, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() { io.Copy(up, buf); closeWrite(up); done <- struct{}{} }()
	go func() { io.Copy(down, up); closeWrite(down); done <- struct{}{} }()
	<-done
	<-done
}

func closeWrite(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
}

// hopHeaders are per-connection headers a proxy must not pass on.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authorization", "Proxy-Authenticate", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, c *Client, host string, port int) {
	out := r.Clone(r.Context())
	out.RequestURI = ""
	for _, h := range hopHeaders {
		out.Header.Del(h)
	}
	resp, err := p.tr.RoundTrip(out)
	if err != nil {
		refuseDial(c, host, port, err)
		http.Error(w, "patchwright egress proxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for _, h := range hopHeaders {
		resp.Header.Del(h)
	}
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
}

// DefaultDeny reports loopback, link-local, unspecified and multicast
// addresses, and every address of this machine's interfaces.
func DefaultDeny(ip net.IP) bool {
	if ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsUnspecified() || ip.IsMulticast() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return true
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}
