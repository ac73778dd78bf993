package docker

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"hash"

	"github.com/patchwright/patchwright/sandbox"
)

// capture keeps the first and the last bytes of a stream, its length and
// its SHA-256. Its memory is fixed at creation: the head and tail buffers
// never grow, whatever is written.
type capture struct {
	head     []byte // first bytes, filled up to cap
	tail     []byte // ring of the last bytes
	tailNext int    // next write position in tail
	tailLen  int    // bytes held in tail
	total    int64
	sum      hash.Hash
}

// newCapture keeps at most limit bytes: half for the head, the rest for
// the tail.
func newCapture(limit int) *capture {
	headCap := (limit + 1) / 2
	return &capture{
		head: make([]byte, 0, headCap),
		tail: make([]byte, limit-headCap),
		sum:  sha256.New(),
	}
}

func (c *capture) Write(p []byte) (int, error) {
	n := len(p)
	c.total += int64(n)
	c.sum.Write(p)
	if room := cap(c.head) - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	if len(c.tail) == 0 || len(p) == 0 {
		return n, nil
	}
	// Only the last len(tail) bytes of p can survive.
	if len(p) > len(c.tail) {
		p = p[len(p)-len(c.tail):]
	}
	for len(p) > 0 {
		k := copy(c.tail[c.tailNext:], p)
		p = p[k:]
		c.tailNext = (c.tailNext + k) % len(c.tail)
		c.tailLen = min(c.tailLen+k, len(c.tail))
	}
	return n, nil
}

// output returns what was kept, with copies the caller owns.
func (c *capture) output() sandbox.Output {
	o := sandbox.Output{
		Head:   append([]byte(nil), c.head...),
		Total:  c.total,
		SHA256: hex.EncodeToString(c.sum.Sum(nil)),
	}
	if c.tailLen > 0 {
		start := (c.tailNext - c.tailLen + len(c.tail)) % len(c.tail)
		o.Tail = make([]byte, 0, c.tailLen)
		if start+c.tailLen <= len(c.tail) {
			o.Tail = append(o.Tail, c.tail[start:start+c.tailLen]...)
		} else {
			o.Tail = append(o.Tail, c.tail[start:]...)
			o.Tail = append(o.Tail, c.tail[:c.tailNext]...)
		}
	}
	return o
}

// firstLineMax bounds the line firstLine holds back: the wrapper's line is
// a number, so a longer one is not the wrapper's and is passed on.
const firstLineMax = 64

// firstLine holds back the first line of a stream (the wrapper's, see
// wrapScript) and passes the rest to w.
type firstLine struct {
	w    *capture
	line []byte
	done bool
}

func (f *firstLine) Write(p []byte) (int, error) {
	n := len(p)
	if !f.done {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			i = len(p)
		}
		f.line = append(f.line, p[:i]...)
		p = p[min(i+1, len(p)):]
		ended := i < n
		f.done = ended
		if len(f.line) > firstLineMax {
			f.w.Write(f.line)
			if ended {
				f.w.Write([]byte{'\n'})
			}
			f.line, f.done = nil, true
		}
	}
	if len(p) > 0 {
		f.w.Write(p)
	}
	return n, nil
}

// text is the line held back, without its newline.
func (f *firstLine) text() string { return string(f.line) }
