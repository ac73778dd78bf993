package docker

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAttachGivesUpOnASilentEngine: an engine that accepts an exec's
// start and never answers does not hold attach past its context, though
// the client bounds only the dial of a hijacked request by it; over a
// unix socket and over TCP with TLS (which the client dials itself).
func TestAttachGivesUpOnASilentEngine(t *testing.T) {
	t.Run("unix", func(t *testing.T) {
		sock := filepath.Join(t.TempDir(), "docker.sock")
		l, err := net.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		t.Setenv("DOCKER_HOST", "unix://"+sock)
		attachSilent(t, l)
	})
	t.Run("tls", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		attachSilent(t, tls.NewListener(l, tlsEngineEnv(t, l.Addr().String())))
	})
}

// tlsEngineEnv points the client's environment at a TLS engine on addr
// and returns the engine's side: a certificate made for this test, which
// the client trusts as its CA and presents as its own.
func tlsEngineEnv(t *testing.T, addr string) *tls.Config {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "test engine"},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	dir := t.TempDir()
	for name, data := range map[string][]byte{"ca.pem": certPEM, "cert.pem": certPEM, "key.pem": keyPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("DOCKER_HOST", "tcp://"+addr)
	t.Setenv("DOCKER_TLS_VERIFY", "1")
	t.Setenv("DOCKER_CERT_PATH", dir)
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}}
}

// attachSilent serves, on l, an engine that answers its ping and then
// takes every connection and says nothing; attach must still end with
// its context.
func attachSilent(t *testing.T, l net.Listener) {
	answered := make(chan struct{})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/_ping") {
			w.Header().Set("API-Version", "1.41")
			return
		}
		// Take the connection and say nothing until the test ends.
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		<-answered
	})}
	go srv.Serve(l)
	t.Cleanup(func() { close(answered); srv.Close() })
	d, err := New(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	c := &dockerSandbox{d: d, id: "silent"}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := c.attach(ctx, "exec")
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("attach to a silent engine = %v, want its context's end", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("attach to a silent engine still waits a minute after its context ended")
	}
}
