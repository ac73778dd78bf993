package secrets

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

func streamChange(t *testing.T, s *Scanner, before *string, after string) []Finding {
	t.Helper()
	var b io.Reader
	if before != nil {
		b = iotest.HalfReader(strings.NewReader(*before))
	}
	found, err := s.ScanChangeStream(context.Background(), "f", b, iotest.HalfReader(strings.NewReader(after)))
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// windowSizes makes windows use chunk and overlap bytes until the test
// ends.
func windowSizes(t *testing.T, chunk, overlap int) {
	t.Helper()
	c, o := chunkBytes, overlapBytes
	t.Cleanup(func() { chunkBytes, overlapBytes = c, o })
	chunkBytes, overlapBytes = chunk, overlap
}

// TestScanChangeStreamFindsASecretAcrossAChunkEdge: a key that starts
// before a chunk ends and ends after it is found, on its line, whether
// the chunk's edge falls inside one line (a long line, or a key alone on
// its line) or between the lines of a PEM block, which only the overlap
// keeps whole. The cases run on windows shrunk to 16 KiB with 4 KiB of
// overlap (more than the PEM key's 1.7 KB), at the first edge and the
// third, as at scanChunk each case read a megabyte of filler, seconds
// under -race; the real sizes are crossed once, by the case that needs
// the overlap and costs least (a long line: one window's regexes).
func TestScanChangeStreamFindsASecretAcrossAChunkEdge(t *testing.T) {
	s := scanner(t)
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
	type secret struct{ name, text, rule string }
	onItsLine := secret{"a key on its own line", "key = \"" + awsKey + "\"\n", "aws-access-token"}
	inALongLine := secret{"a key inside one long line", " " + awsKey + " tail\n", "aws-access-token"}
	pemBlock := secret{"a PEM block over many lines", pemKey, "private-key"}
	// filler is n bytes of many short lines, or of one long line.
	filler := func(sc secret, n int) string {
		if sc == inALongLine {
			return strings.Repeat("x", n)
		}
		return strings.Repeat("x := 1\n", n/7+1)[:n]
	}
	check := func(t *testing.T, sc secret, edge, back int) {
		// The secret starts back bytes before the edge.
		after := filler(sc, edge-back) + sc.text + "end\n"
		if start := strings.Index(after, strings.TrimSpace(sc.text)[:8]); start >= edge || start+len(strings.TrimSpace(sc.text)) <= edge {
			t.Fatalf("the secret (bytes %d on) does not span the edge at %d", start, edge)
		}
		want := s.ScanChange("f", "", after)
		got := streamChange(t, s, nil, after)
		if !slices.ContainsFunc(got, func(f Finding) bool { return f.RuleID == sc.rule }) {
			t.Fatalf("no %s finding across the edge: %v", sc.rule, got)
		}
		if !slices.Equal(got, want) {
			t.Errorf("streamed %v, whole %v", got, want)
		}
	}
	t.Run("real sizes", func(t *testing.T) {
		check(t, inALongLine, scanChunk, len(inALongLine.text)/2)
	})
	windowSizes(t, 16<<10, 4<<10)
	for _, sc := range []secret{onItsLine, inALongLine, pemBlock} {
		for _, edge := range []int{1, 3} {
			for _, back := range []int{5, len(sc.text) / 2, len(sc.text) - 3} {
				t.Run(fmt.Sprintf("%s/edge %d/%d bytes before it", sc.name, edge, back), func(t *testing.T) {
					check(t, sc, edge*chunkBytes, back)
				})
			}
		}
	}
}

// TestScanChangeStreamIsScanChange: on small files the streamed scan
// finds what ScanChange finds, a key already in the file excepted and an
// encoded one decoded.
func TestScanChangeStreamIsScanChange(t *testing.T) {
	s := scanner(t)
	before := "key = \"" + awsKey + "\"\n"
	second := "AKIA" + "Q7XR2MBN5TLC4PWE"
	encoded := base64.StdEncoding.EncodeToString([]byte("AWS_ACCESS_KEY_ID=" + "AKIA" + "R4TQ8ZXM2NWB7PLK"))
	for _, tc := range []struct {
		name   string
		before *string
		after  string
	}{
		{"unchanged key", &before, before + "other = 1\n"},
		{"a second key", &before, before + "other = 1\nsecond = \"" + second + "\"\n"},
		{"a new file", nil, "a\n" + before},
		{"encoded", &before, before + "blob = " + encoded + "\n"},
		{"empty", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := ""
			if tc.before != nil {
				b = *tc.before
			}
			want := s.ScanChange("f", b, tc.after)
			if got := streamChange(t, s, tc.before, tc.after); !slices.Equal(got, want) {
				t.Errorf("streamed %v, whole %v", got, want)
			}
		})
	}
}

// TestScanChangeStreamReadError: a reader that fails is an error, never a
// clean file.
func TestScanChangeStreamReadError(t *testing.T) {
	s := scanner(t)
	_, err := s.ScanChangeStream(context.Background(), "f", nil, iotest.ErrReader(io.ErrClosedPipe))
	if err == nil {
		t.Error("a failing reader scanned clean")
	}
}
