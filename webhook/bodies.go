package webhook

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"
)

// The bound on bodies being read. A body is read before its signature can
// be checked, so without a bound anyone who can reach /webhook makes the
// receiver hold as many 25 MiB bodies as they open connections.
const (
	// DefaultMaxBodies is how many bodies are read at once.
	DefaultMaxBodies = 8
	// DefaultMaxBodyBytes is how many bytes those bodies may hold together.
	DefaultMaxBodyBytes = 64 << 20
	// MinBodyBytes is the least MaxBodyBytes bound New accepts: one
	// largest body and the room its last read needs.
	MinBodyBytes = MaxBodyBytes + 2*minRead
	// busyRetryAfter is the Retry-After of a 503 past the bound, seconds.
	busyRetryAfter = "10"
	// minRead is the least room a read is given; the buffer grows by at
	// least this much.
	minRead = 32 << 10
)

// errBusy: the bound is reached; answered 503 with Retry-After.
var errBusy = errors.New("too many webhook bodies are being read: retry later")

// bodyLimit bounds the bodies being read at once and the bytes their
// buffers hold (capacity, not length: what the process really holds). It
// never waits: past the bound a request is refused at once, so a slow
// sender cannot queue others behind it.
type bodyLimit struct {
	slots chan struct{}

	mu   sync.Mutex
	free int64

	// admitted counts the bodies that started to be read, refused those
	// answered errBusy (before or while reading); for the tests.
	admitted, refused atomic.Int64
}

func newBodyLimit(bodies int, bytes int64) *bodyLimit {
	return &bodyLimit{slots: make(chan struct{}, bodies), free: bytes}
}

func (l *bodyLimit) enter() bool {
	select {
	case l.slots <- struct{}{}:
		return true
	default:
		return false
	}
}

func (l *bodyLimit) leave() { <-l.slots }

func (l *bodyLimit) reserve(n int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n > l.free {
		return false
	}
	l.free -= n
	return true
}

func (l *bodyLimit) release(n int64) {
	l.mu.Lock()
	l.free += n
	l.mu.Unlock()
}

// heldBody is a body read under the bound; done gives its room back.
// Nothing may keep Bytes, or a slice of it, past done: the payload package
// copies what it returns.
type heldBody struct {
	buf      []byte
	reserved int64
	limit    *bodyLimit
}

func (b *heldBody) Bytes() []byte { return b.buf }

// verified gives the body's place and bytes back once its signature is
// checked: the bound is on bodies nobody has vouched for, and a signed
// delivery (GitHub's pace) must not wait behind its own queue work.
func (b *heldBody) verified() {
	if b.limit == nil {
		return
	}
	b.limit.release(b.reserved)
	b.limit.leave()
	b.limit = nil
}

// done releases what is still held and recycles the buffer.
func (b *heldBody) done() {
	b.verified()
	recycle(b.buf)
}

// read reads r (length bytes when length >= 0, as Content-Length says)
// into a buffer of bounded size, writing each chunk to sum as it arrives
// (the signature's HMAC), so the body is read once. It fails with errBusy
// past the bound and with r's error otherwise.
func (l *bodyLimit) read(r io.Reader, length int64, sum io.Writer) (*heldBody, error) {
	if !l.enter() {
		l.refused.Add(1)
		return nil, errBusy
	}
	b := &heldBody{buf: fromPool(), limit: l}
	if !l.reserve(int64(cap(b.buf))) {
		recycle(b.buf)
		l.leave()
		l.refused.Add(1)
		return nil, errBusy
	}
	b.reserved = int64(cap(b.buf))
	for first := true; ; first = false {
		// A body whose length is known reserves all of it before it
		// counts as admitted: otherwise whether it is admitted would
		// depend on the size of the buffer the pool happened to hold.
		whole := first && length >= 0 && int(length)+minRead > cap(b.buf)
		if whole || cap(b.buf)-len(b.buf) < minRead {
			if err := b.grow(length); err != nil {
				if errors.Is(err, errBusy) {
					l.refused.Add(1)
				}
				b.done()
				return nil, err
			}
		}
		if first {
			l.admitted.Add(1)
		}
		n, err := r.Read(b.buf[len(b.buf):cap(b.buf)])
		sum.Write(b.buf[len(b.buf) : len(b.buf)+n])
		b.buf = b.buf[:len(b.buf)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			b.done()
			return nil, err
		}
	}
}

// grow makes room for the next read: the whole body at once when its
// length is known, else double. The old and new buffers are both held
// while copying, so both are reserved until then.
func (b *heldBody) grow(length int64) error {
	size := max(2*cap(b.buf), minRead)
	if length >= 0 && int(length)+minRead > cap(b.buf) {
		size = int(length) + minRead
	}
	size = min(size, MaxBodyBytes+2*minRead)
	if size <= cap(b.buf) {
		size = cap(b.buf) + minRead
	}
	if !b.limit.reserve(int64(size)) {
		return errBusy
	}
	next := make([]byte, len(b.buf), size)
	copy(next, b.buf)
	old := b.buf
	b.buf = next
	b.reserved += int64(size)
	b.limit.release(int64(cap(old)))
	b.reserved -= int64(cap(old))
	recycle(old)
	return nil
}

// bodies recycles body buffers. Every delivery is read whole, for its
// signature, and most are 10-30 KiB; reading each into fresh memory was most
// of what the receiver allocated.
var bodies = sync.Pool{New: func() any { return new([]byte) }}

// maxRecycled keeps the pool from holding on to a rare huge body.
const maxRecycled = 1 << 20

func fromPool() []byte {
	p := bodies.Get().(*[]byte)
	return (*p)[:0]
}

func recycle(buf []byte) {
	if cap(buf) > 0 && cap(buf) <= maxRecycled {
		buf = buf[:0]
		bodies.Put(&buf)
	}
}
