//go:build linux

package sandbox

import (
	"bytes"
	"errors"
	"os"
	"testing"
)

// TestReadAllPastTheStat: a file that grew since its stat (here a pipe
// holding more than the stated size) is read to its end, growing the
// buffer, and refused once past the limit.
func TestReadAllPastTheStat(t *testing.T) {
	content := bytes.Repeat([]byte("0123456789"), 300)
	pipe := func() *os.File {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(content); err != nil {
			t.Fatal(err)
		}
		w.Close()
		t.Cleanup(func() { r.Close() })
		return r
	}
	r := pipe()
	got, err := readAll(int(r.Fd()), "p", nil, 10, 1<<20)
	if err != nil || !bytes.Equal(got, content) {
		t.Errorf("readAll = %d bytes, %v; want all %d", len(got), err, len(content))
	}
	r = pipe()
	if _, err := readAll(int(r.Fd()), "p", nil, 10, 2000); !errors.Is(err, ErrTooLarge) {
		t.Errorf("readAll past the limit = %v, want too large", err)
	}
	r = pipe()
	if _, err := readAll(int(r.Fd()), "p", nil, 10, int64(len(content))-1); !errors.Is(err, ErrTooLarge) {
		t.Errorf("readAll one byte past the limit = %v, want too large", err)
	}
}
