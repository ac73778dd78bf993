package docker

import (
	"context"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAttachGivesUpOnASilentEngine: an engine that accepts an exec's
// start and never answers does not hold attach past its context, though
// the client bounds only the dial of a hijacked request by it.
func TestAttachGivesUpOnASilentEngine(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "docker.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
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
	t.Setenv("DOCKER_HOST", "unix://"+sock)
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
