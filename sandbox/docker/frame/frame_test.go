package frame

import (
	"bytes"
	"errors"
	"testing"
)

// TestFrames: frames made with the key are read back in order; a frame
// made with another key, a replayed frame and a changed byte fail.
func TestFrames(t *testing.T) {
	key := bytes.Repeat([]byte{1}, KeySize)
	var wire bytes.Buffer
	w := New(nil, &wire, key)
	w.Write(Stdout, []byte("hello"))
	w.Write(Exit, []byte(`{"code":0}`))
	first := append([]byte(nil), wire.Bytes()[:5+5+32]...)

	r := New(bytes.NewReader(wire.Bytes()), nil, key)
	for _, want := range []string{"hello", `{"code":0}`} {
		if _, p, err := r.Read(); err != nil || string(p) != want {
			t.Fatalf("Read = %q, %v; want %q", p, err, want)
		}
	}

	var forged bytes.Buffer
	New(nil, &forged, bytes.Repeat([]byte{2}, KeySize)).Write(Exit, []byte(`{"code":0}`))
	changed := append([]byte(nil), first...)
	changed[6] ^= 1
	for name, b := range map[string][]byte{
		"other key": forged.Bytes(),
		"replayed":  append(append([]byte(nil), first...), first...),
		"changed":   changed,
	} {
		r := New(bytes.NewReader(b), nil, key)
		var err error
		for err == nil {
			_, _, err = r.Read()
		}
		if !errors.Is(err, ErrAuth) {
			t.Errorf("%s: %v, want ErrAuth", name, err)
		}
	}
}
