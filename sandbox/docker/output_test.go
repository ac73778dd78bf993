package docker

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

func TestCapture(t *testing.T) {
	data := make([]byte, 10000)
	for i := range data {
		data[i] = byte('a' + i%26)
	}
	tests := map[string]struct {
		limit  int
		chunks []int // sizes of successive writes
		n      int   // bytes written in total
	}{
		"all fits":                {limit: 100, chunks: []int{30, 20}, n: 50},
		"exactly the limit":       {limit: 100, chunks: []int{100}, n: 100},
		"one big write":           {limit: 100, chunks: []int{10000}, n: 10000},
		"many small writes":       {limit: 100, chunks: repeat(7, 1428), n: 9996},
		"odd limit":               {limit: 7, chunks: []int{3, 3, 3, 3}, n: 12},
		"limit one":               {limit: 1, chunks: []int{5, 5}, n: 10},
		"writes around the wrap":  {limit: 10, chunks: []int{4, 3, 3, 3, 3}, n: 16},
		"nothing":                 {limit: 10, chunks: nil, n: 0},
		"write larger than tail":  {limit: 64, chunks: []int{40, 500}, n: 540},
		"tail filled exactly":     {limit: 20, chunks: []int{10, 10}, n: 20},
		"tail wrapped many times": {limit: 20, chunks: repeat(9, 100), n: 900},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			c := newCapture(tt.limit)
			off := 0
			for _, k := range tt.chunks {
				if n, err := c.Write(data[off : off+k]); n != k || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
				off += k
			}
			o := c.output()
			in := data[:tt.n]
			headCap := (tt.limit + 1) / 2
			wantHead := in[:min(headCap, len(in))]
			wantTail := in[len(wantHead):]
			if len(wantTail) > tt.limit-headCap {
				wantTail = wantTail[len(wantTail)-(tt.limit-headCap):]
			}
			if !bytes.Equal(o.Head, wantHead) || !bytes.Equal(o.Tail, wantTail) {
				t.Fatalf("head %q tail %q, want %q and %q", o.Head, o.Tail, wantHead, wantTail)
			}
			if o.Total != int64(tt.n) {
				t.Fatalf("Total = %d, want %d", o.Total, tt.n)
			}
			want := sha256.Sum256(in)
			if o.SHA256 != hex.EncodeToString(want[:]) {
				t.Fatalf("SHA256 = %s, want %x", o.SHA256, want)
			}
			if o.Truncated() != (tt.n > tt.limit) {
				t.Fatalf("Truncated() = %v for %d bytes at limit %d", o.Truncated(), tt.n, tt.limit)
			}
		})
	}
}

func repeat(k, times int) []int {
	s := make([]int, times)
	for i := range s {
		s[i] = k
	}
	return s
}
