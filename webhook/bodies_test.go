package webhook

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// 30 concurrent deliveries of 24 MiB with a well-formed but wrong
// signature (an unsigned body costs nothing: it is refused unread). The
// bodies admitted under the default bound (64 MiB: two of them) are read
// and refused 401; the other 28 are answered 503 with Retry-After while
// those two are still arriving; the heap never holds more than the bound
// and some slack (30 bodies read at once would be 720 MiB).
func TestConcurrentUnsignedBodiesAreBounded(t *testing.T) {
	const (
		senders = 30
		size    = 24 << 20
	)
	h, err := New(Config{Secret: []byte(testSecret), BotLogin: testBot, Logger: discardLogger}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	// Buffers earlier deliveries left in the pool must not change how
	// many are admitted (they once did, when a pooled buffer let a body
	// start before its whole length was reserved).
	for range senders {
		recycle(make([]byte, 0, maxRecycled))
	}
	peak := watchHeap(t)
	conns := make([]net.Conn, senders)
	type answer struct {
		i      int
		status int
		retry  string
		err    error
	}
	answers := make(chan answer, senders)
	head := fmt.Sprintf("POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-GitHub-Event: issues\r\n"+
		"X-GitHub-Delivery: d\r\nX-Hub-Signature-256: sha256=%s\r\nContent-Length: %d\r\n\r\n", strings.Repeat("0", 64), size)
	for i := range conns {
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns[i] = c
		// Headers only: every body stays unfinished until the bound has
		// decided on all of them.
		if _, err := io.WriteString(c, head); err != nil {
			t.Fatal(err)
		}
		go func() {
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				answers <- answer{i: i, err: err}
				return
			}
			res.Body.Close()
			answers <- answer{i: i, status: res.StatusCode, retry: res.Header.Get("Retry-After")}
		}()
	}
	// Wait until the handler has seen all 30 (polling a counter, no clock).
	for h.limit.admitted.Load()+h.limit.refused.Load() < senders {
		time.Sleep(time.Millisecond)
	}
	admitted := int(h.limit.admitted.Load())
	if want := DefaultMaxBodyBytes / (size + minRead); admitted != want {
		t.Fatalf("%d bodies admitted, want %d (the byte bound)", admitted, want)
	}
	answered := map[int]bool{}
	for range senders - admitted {
		a := <-answers
		if a.err != nil || a.status != http.StatusServiceUnavailable || a.retry == "" {
			t.Fatalf("sender %d past the bound: status %d, Retry-After %q, %v; want 503 with Retry-After", a.i, a.status, a.retry, a.err)
		}
		answered[a.i] = true
	}
	// The admitted senders now send their bodies, 1 MiB at a time from one
	// buffer, so the test itself holds nothing.
	chunk := make([]byte, 1<<20)
	var wg sync.WaitGroup
	for i, c := range conns {
		if answered[i] {
			continue
		}
		wg.Go(func() {
			for range size / len(chunk) {
				if _, err := c.Write(chunk); err != nil {
					t.Errorf("sender %d: %v", i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	for range admitted {
		if a := <-answers; a.err != nil || a.status != http.StatusUnauthorized {
			t.Fatalf("admitted sender %d: status %d, %v; want 401", a.i, a.status, a.err)
		}
	}
	got, bound := peak(), uint64(DefaultMaxBodyBytes+48<<20)
	t.Logf("heap in use grew by at most %d MiB", got>>20)
	if got > bound {
		t.Errorf("heap in use grew by %d MiB, bound %d MiB", got>>20, bound>>20)
	}
	if free := h.limit.free; free != DefaultMaxBodyBytes {
		t.Errorf("%d bytes of the bound not given back", DefaultMaxBodyBytes-free)
	}
}

// watchHeap samples HeapInuse until the test ends; peak returns the
// largest growth over the start seen so far.
func watchHeap(t *testing.T) (peak func() uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var max atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	sample := func() {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if ms.HeapInuse > base && ms.HeapInuse-base > max.Load() {
			max.Store(ms.HeapInuse - base)
		}
	}
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				sample()
				time.Sleep(2 * time.Millisecond)
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
	return func() uint64 { sample(); return max.Load() }
}

// A request without a usable signature is refused before a byte of its
// body is read: the bound is not even entered.
func TestUnsignedBodyIsNotRead(t *testing.T) {
	h, err := New(Config{Secret: []byte(testSecret), BotLogin: testBot, Logger: discardLogger}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, sig := range []string{"", "sha1=abc", "sha256=zz"} {
		read := &countingReader{r: strings.NewReader(`{"action":"labeled"}`)}
		req := httptest.NewRequest(http.MethodPost, "/webhook", read)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-GitHub-Event", "issues")
		req.Header.Set("X-GitHub-Delivery", "d-1")
		if sig != "" {
			req.Header.Set("X-Hub-Signature-256", sig)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusUnauthorized || read.n != 0 {
			t.Errorf("signature %q: status %d after reading %d bytes, want 401 unread", sig, rec.Code, read.n)
		}
	}
	if n := h.limit.admitted.Load() + h.limit.refused.Load(); n != 0 {
		t.Errorf("%d unsigned requests entered the bound", n)
	}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// The count bound: with room for bytes, the ninth body read at once is
// refused; a body read to its end gives its place back.
func TestBodyCountBound(t *testing.T) {
	l := newBodyLimit(DefaultMaxBodies, DefaultMaxBodyBytes)
	var held []*heldBody
	for i := range DefaultMaxBodies {
		b, err := l.read(strings.NewReader(`{}`), -1, io.Discard)
		if err != nil {
			t.Fatalf("body %d: %v", i, err)
		}
		held = append(held, b)
	}
	if _, err := l.read(strings.NewReader(`{}`), -1, io.Discard); err != errBusy {
		t.Fatalf("body past the count: %v, want errBusy", err)
	}
	held[0].done()
	b, err := l.read(strings.NewReader(`{"a":1}`), -1, io.Discard)
	if err != nil || string(b.Bytes()) != `{"a":1}` {
		t.Fatalf("after one was done: %q, %v", b.Bytes(), err)
	}
}
