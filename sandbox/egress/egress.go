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
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
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
	p       *Proxy
	allow   Allowlist
	phase   string
	refused func(Refusal)
	tr      *http.Transport // plain HTTP requests', dialling through dial

	mu      sync.Mutex
	command string
	seen    map[Refusal]bool // what Refuse recorded, at most maxSeen
}

// maxSeen bounds the refusals Refuse remembers to record each once: past
// it, a refusal is passed on every time, and the caller bounds what it
// keeps (a flood of distinct ones must not grow this map).
const maxSeen = 1024

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
	if len(c.seen) < maxSeen {
		c.seen[r] = true
	}
	c.mu.Unlock()
	if !again && c.refused != nil {
		c.refused(r)
	}
}

// Options configure a Proxy; zero fields take the defaults named.
type Options struct {
	// Refuses says why no sandbox may reach an address, "" if one may;
	// nil is Rules{}.Refuses, the built-in ranges.
	Refuses func(netip.Addr) string
	// Lookup resolves a host name to its addresses; nil is the system's
	// resolver.
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	// MaxConns bounds one sandbox's connections to the proxy at once;
	// default DefaultMaxConns.
	MaxConns int
}

// DefaultMaxConns is Options.MaxConns' default: more than any package
// manager opens at once (npm's default is 16 sockets, Maven's 20).
const DefaultMaxConns = 128

// Proxy serves the egress network. It is safe for concurrent use.
type Proxy struct {
	ln   net.Listener
	srv  *http.Server
	opts Options

	mu      sync.Mutex
	clients map[string]*Client
	conns   map[string]int // open connections by source address
}

// dialTimeout bounds the proxy's connection to an allowed host.
const dialTimeout = 30 * time.Second

// Listen starts a proxy on addr ("10.0.0.1:0").
func Listen(addr string, opts Options) (*Proxy, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("egress proxy: %w", err)
	}
	if opts.Refuses == nil {
		opts.Refuses = Rules{}.Refuses
	}
	if opts.Lookup == nil {
		opts.Lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = DefaultMaxConns
	}
	p := &Proxy{opts: opts, clients: map[string]*Client{}, conns: map[string]int{}}
	p.ln = &limitListener{Listener: ln, p: p}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}
	go p.srv.Serve(p.ln)
	return p, nil
}

// Addr is where the proxy listens.
func (p *Proxy) Addr() net.Addr { return p.ln.Addr() }

// Close stops the proxy and every connection through it.
func (p *Proxy) Close() error {
	p.mu.Lock()
	for _, c := range p.clients {
		c.tr.CloseIdleConnections()
	}
	p.mu.Unlock()
	return p.srv.Close()
}

// Register lets the sandbox at ip through to allow; refused, if not nil,
// is called (from the proxy's goroutines) for each refusal. A second
// registration of ip replaces the first.
func (p *Proxy) Register(ip string, allow Allowlist, phase string, refused func(Refusal)) *Client {
	c := &Client{p: p, allow: slices.Clone(allow), phase: phase, refused: refused}
	// A transport per client: a kept-alive connection is never another
	// sandbox's.
	c.tr = &http.Transport{DialContext: c.dialAddr, ResponseHeaderTimeout: 5 * time.Minute}
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
	c.tr.CloseIdleConnections()
}

func (p *Proxy) client(remote string) *Client {
	ip, _, _ := net.SplitHostPort(remote)
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.clients[ip]
}

// limitListener closes a connection whose source already has
// Options.MaxConns open: a sandbox opening sockets in a loop costs the
// worker a bounded number of goroutines and buffers.
type limitListener struct {
	net.Listener
	p *Proxy
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		conn, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip, _, _ := net.SplitHostPort(conn.RemoteAddr().String())
		if l.p.take(ip) {
			return &countedConn{Conn: conn, release: func() { l.p.release(ip) }}, nil
		}
		// Recorded before the close, so that the sandbox that sees the
		// connection end finds the refusal recorded.
		if c := l.p.client(conn.RemoteAddr().String()); c != nil {
			host, port, _ := net.SplitHostPort(l.Addr().String())
			c.Refuse(host, atoi(port), fmt.Sprintf("more than %d connections to the egress proxy at once", l.p.opts.MaxConns))
		}
		conn.Close()
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func (p *Proxy) take(ip string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns[ip] >= p.opts.MaxConns {
		return false
	}
	p.conns[ip]++
	return true
}

func (p *Proxy) release(ip string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns[ip]--; p.conns[ip] <= 0 {
		delete(p.conns, ip)
	}
}

// countedConn gives its place back once, at its first Close (the server
// and a tunnel may both close it).
type countedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *countedConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
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
		c.tunnel(r.Context(), w, host, port)
		return
	}
	c.forward(w, r, host, port)
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

// errDenied is a host that resolves to an address no sandbox may reach.
type errDenied struct {
	ip  netip.Addr
	why string
}

func (e errDenied) Error() string {
	return "resolves to " + e.ip.String() + ", " + e.why
}

// dial connects to host:port. It resolves host and refuses it if any of
// its addresses is refused (an answer mixing a public address with a
// private one is how a rebinding attack starts), then connects to the
// checked addresses themselves: a second lookup could answer otherwise.
func (c *Client) dial(ctx context.Context, host string, port int) (net.Conn, error) {
	ips, err := c.p.opts.Lookup(ctx, host)
	if err != nil {
		return nil, err
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("%s has no address", host)
	}
	for _, ip := range ips {
		if why := c.p.opts.Refuses(ip); why != "" {
			return nil, errDenied{ip.Unmap(), why}
		}
	}
	d := net.Dialer{Timeout: dialTimeout}
	var errs []error
	for _, ip := range ips {
		conn, err := d.DialContext(ctx, "tcp", netip.AddrPortFrom(ip.Unmap(), uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// dialAddr is dial for the client's transport.
func (c *Client) dialAddr(ctx context.Context, _, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	return c.dial(ctx, host, atoi(port))
}

// refuseDial records a dial that the address check refused.
func (c *Client) refuseDial(host string, port int, err error) {
	var denied errDenied
	if errors.As(err, &denied) {
		c.refuse(host, port, denied.Error())
	}
}

func (c *Client) tunnel(ctx context.Context, w http.ResponseWriter, host string, port int) {
	up, err := c.dial(ctx, host, port)
	if err != nil {
		c.refuseDial(host, port, err)
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
	if cc, ok := c.(*countedConn); ok {
		c = cc.Conn
	}
	if tc, ok := c.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
}

// hopHeaders are per-connection headers a proxy must not pass on.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authorization", "Proxy-Authenticate", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

func (c *Client) forward(w http.ResponseWriter, r *http.Request, host string, port int) {
	out := r.Clone(r.Context())
	out.RequestURI = ""
	for _, h := range hopHeaders {
		out.Header.Del(h)
	}
	resp, err := c.tr.RoundTrip(out)
	if err != nil {
		c.refuseDial(host, port, err)
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
