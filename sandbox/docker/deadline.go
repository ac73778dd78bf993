package docker

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"
)

// callTimeout bounds every request to the engine, whatever the caller's
// context (http.Client.Timeout, which covers reading the answer too), and
// the hand-shake that starts an exec's stream: an engine that stops
// answering fails the call instead of holding it for ever. It is long
// because it is a last resort: the slowest ordinary calls (creating a
// container that fills a new cache volume from its image) take seconds.
const callTimeout = 2 * time.Minute

// withBoundDials makes the client's dialer give connections made for an exec
// attach (see attach) a deadline. The client bounds the hijacked request
// of an attach only by the dial: without this, an engine that accepted
// the connection and never answered would hold ContainerExecAttach for
// ever, whatever its context.
func withBoundDials(c *client.Client) error {
	tr, ok := c.HTTPClient().Transport.(*http.Transport)
	if !ok {
		return fmt.Errorf("docker client: cannot bound the dials of transport %T", c.HTTPClient().Transport)
	}
	dial := tr.DialContext
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	cfg := tr.TLSClientConfig
	if cfg != nil {
		// With a TLS configuration on the transport, the client dials a
		// hijacked request with tls.Dial itself, ignoring the transport's
		// dialer (so an attach had no deadline on a remote TLS engine).
		// The transport's dialers do TLS here instead, and the client
		// keeps speaking https.
		tr.TLSClientConfig = nil
		if err := client.WithScheme("https")(c); err != nil {
			return err
		}
		plain := dial
		dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
			return dialTLS(ctx, plain, cfg, network, addr)
		}
	}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if b, ok := ctx.Value(attachKey{}).(*attachConns); ok && err == nil {
			b.add(conn)
		}
		return conn, err
	}
	if cfg != nil {
		tr.DialTLSContext = tr.DialContext
	}
	return nil
}

// dialTLS dials addr with dial and makes the TLS hand-shake of cfg on it,
// within ctx, as tls.Dial would (ServerName from addr when cfg has none).
func dialTLS(ctx context.Context, dial func(context.Context, string, string) (net.Conn, error), cfg *tls.Config, network, addr string) (net.Conn, error) {
	conn, err := dial(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	conf := cfg.Clone()
	if conf.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			host = addr
		}
		conf.ServerName = host
	}
	tc := tls.Client(conn, conf)
	if err := tc.HandshakeContext(ctx); err != nil {
		conn.Close()
		return nil, err
	}
	return tc, nil
}

type attachKey struct{}

// attachConns are the connections dialled during one attach. Each has a
// deadline until the attach returned; once ctx ends it is in the past.
type attachConns struct {
	mu      sync.Mutex
	conns   []net.Conn
	expired bool
}

func (b *attachConns) add(conn net.Conn) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.conns = append(b.conns, conn)
	if b.expired {
		conn.SetDeadline(time.Unix(1, 0))
	} else {
		conn.SetDeadline(time.Now().Add(callTimeout))
	}
}

func (b *attachConns) set(t time.Time, expired bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.expired = expired
	for _, conn := range b.conns {
		conn.SetDeadline(t)
	}
}

// attach starts exec execID and attaches to its output, within
// callTimeout and ctx. The stream it returns has no deadline: its reader
// bounds its reads itself.
func (c *dockerSandbox) attach(ctx context.Context, execID string) (types.HijackedResponse, error) {
	b := &attachConns{}
	stop := context.AfterFunc(ctx, func() { b.set(time.Unix(1, 0), true) })
	stream, err := c.d.cli.ContainerExecAttach(context.WithValue(ctx, attachKey{}, b), execID, container.ExecAttachOptions{})
	stop()
	b.set(time.Time{}, false)
	if ctx.Err() != nil {
		if err == nil {
			stream.Close()
		}
		return types.HijackedResponse{}, fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	return stream, err
}
