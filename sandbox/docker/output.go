package docker

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"io"
	"strconv"

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
	w    io.Writer
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

// recordMax is the longest exit record: "\n255\n".
const recordMax = 5

// exitRecord holds back the last bytes of a stream, where the wrapper's
// exit record is (see wrapScript), and passes the rest to w. Its memory
// is recordMax bytes, whatever is written.
type exitRecord struct {
	w    io.Writer
	held []byte
}

func (r *exitRecord) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) >= recordMax {
		r.w.Write(r.held)
		r.w.Write(p[:len(p)-recordMax])
		r.held = append(r.held[:0], p[len(p)-recordMax:]...)
		return n, nil
	}
	r.held = append(r.held, p...)
	if k := len(r.held) - recordMax; k > 0 {
		r.w.Write(r.held[:k])
		r.held = r.held[:copy(r.held, r.held[k:])]
	}
	return n, nil
}

// end is called once the stream ended. If the bytes held end with an
// exit record, it drops the record, passes on what came before it and
// returns the status; otherwise it passes on everything held.
func (r *exitRecord) end() (status int, ok bool) {
	h := r.held
	r.held = nil
	if n := len(h); n >= 3 && h[n-1] == '\n' {
		if i := bytes.LastIndexByte(h[:n-1], '\n'); i >= 0 {
			if code, ok := statusDigits(h[i+1 : n-1]); ok {
				r.w.Write(h[:i])
				return code, true
			}
		}
	}
	r.w.Write(h)
	return -1, false
}

// statusDigits parses an exit status: one to three decimal digits, at
// most 255.
func statusDigits(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 3 {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	code, err := strconv.Atoi(string(b))
	return code, err == nil && code <= 255
}
