// Package frame is the authenticated framing between the host and the
// sandbox's resident starter (see sandbox/docker/starter): each frame is
// a type byte, a 4-byte big-endian length, the payload and an
// HMAC-SHA256 over a per-direction sequence number, the type and the
// payload, with the per-container key the host gave the starter on its
// stdin. A frame out of order, replayed or written by anyone without the
// key fails Read.
package frame

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
)

// Frame types.
const (
	Ready    = 'r' // starter → host: the key was taken
	Request  = 'q' // host → starter: JSON Req
	Stdout   = 'o' // starter → host: command output
	Stderr   = 'e'
	Exit     = 'x' // starter → host: JSON Record, the command's end
	Tampered = 't' // starter → host: its limits were changed; it exits
)

// MaxPayload bounds one frame.
const MaxPayload = 1 << 20

// KeySize is the length of the key.
const KeySize = 32

// Hello is the line the starter writes, unauthenticated, before it reads
// the key: the host sends the key only once the starter's binary was
// taken in whole (see docker's startStarter).
const Hello = "patchwright-starter 1\n"

// Req asks the starter to run Script with the time limit TimeoutNS.
type Req struct {
	Script    string `json:"script"`
	TimeoutNS int64  `json:"timeout_ns"`
}

// Record is a command's end: its status, the cgroup's OOM kill counts
// before and after it ("" when unreadable), and whether every other
// process of the command user was gone when the starter wrote it.
type Record struct {
	Code      int    `json:"code"`
	OOMBefore string `json:"oom_before"`
	OOMAfter  string `json:"oom_after"`
	Clean     bool   `json:"clean"`
}

// ErrAuth is a frame whose MAC does not match.
var ErrAuth = errors.New("frame failed authentication")

// Conn reads and writes frames in one direction each.
type Conn struct {
	r          io.Reader
	wr         io.Writer
	rmac, wmac hash.Hash
	rseq, wseq uint64
	hdr        [5]byte
	buf        []byte // Read's, reused
}

// New is a Conn reading r and writing w with key.
func New(r io.Reader, w io.Writer, key []byte) *Conn {
	return &Conn{r: r, wr: w, rmac: hmac.New(sha256.New, key), wmac: hmac.New(sha256.New, key)}
}

func sum(m hash.Hash, seq uint64, typ byte, p []byte) []byte {
	m.Reset()
	var b [9]byte
	binary.BigEndian.PutUint64(b[:8], seq)
	b[8] = typ
	m.Write(b[:])
	m.Write(p)
	return m.Sum(nil)
}

// Write sends one frame. It is not safe for concurrent use.
func (c *Conn) Write(typ byte, p []byte) error {
	if len(p) > MaxPayload {
		return fmt.Errorf("frame of %d bytes", len(p))
	}
	buf := make([]byte, 0, 5+len(p)+sha256.Size)
	buf = append(buf, typ, 0, 0, 0, 0)
	binary.BigEndian.PutUint32(buf[1:5], uint32(len(p)))
	buf = append(buf, p...)
	buf = append(buf, sum(c.wmac, c.wseq, typ, p)...)
	c.wseq++
	_, err := c.wr.Write(buf)
	return err
}

// Read returns the next frame, or ErrAuth for one not made with the key.
// The payload is valid until the next Read.
func (c *Conn) Read() (byte, []byte, error) {
	if _, err := io.ReadFull(c.r, c.hdr[:]); err != nil {
		return 0, nil, err
	}
	typ, n := c.hdr[0], binary.BigEndian.Uint32(c.hdr[1:])
	if n > MaxPayload {
		return 0, nil, fmt.Errorf("%w: length %d", ErrAuth, n)
	}
	if need := int(n) + sha256.Size; cap(c.buf) < need {
		c.buf = make([]byte, need)
	}
	buf := c.buf[:int(n)+sha256.Size]
	if _, err := io.ReadFull(c.r, buf); err != nil {
		return 0, nil, err
	}
	p, mac := buf[:n], buf[n:]
	if !hmac.Equal(mac, sum(c.rmac, c.rseq, typ, p)) {
		return 0, nil, ErrAuth
	}
	c.rseq++
	return typ, p, nil
}
