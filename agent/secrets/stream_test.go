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

// TestScanChangeStreamFindsASecretAcrossAChunkEdge: a key that starts
// before the first chunk ends and ends after it is found, on its line,
// whether the chunk's edge falls inside one line (a long line, or a key
// alone on its line) or between the lines of a PEM block, which only the
// overlap keeps whole.
func TestScanChangeStreamFindsASecretAcrossAChunkEdge(t *testing.T) {
	s := scanner(t)
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
	lines := strings.Repeat("x := 1\n", scanChunk/7) // many short lines
	for _, tc := range []struct {
		name, filler, secret, rule string
	}{
		{"a key on its own line", lines, "key = \"" + awsKey + "\"\n", "aws-access-token"},
		{"a key inside one long line", strings.Repeat("x", scanChunk), " " + awsKey + " tail\n", "aws-access-token"},
		{"a PEM block over many lines", lines, pemKey, "private-key"},
	} {
		for _, back := range []int{5, len(tc.secret) / 2, len(tc.secret) - 3} {
			t.Run(fmt.Sprintf("%s/%d bytes before the edge", tc.name, back), func(t *testing.T) {
				// The secret starts back bytes before the chunk's edge.
				filler := tc.filler[:scanChunk-back]
				after := filler + tc.secret + "end\n"
				if start := strings.Index(after, strings.TrimSpace(tc.secret)[:8]); start >= scanChunk || start+len(strings.TrimSpace(tc.secret)) <= scanChunk {
					t.Fatalf("the secret (bytes %d on) does not span the edge at %d", start, scanChunk)
				}
				want := s.ScanChange("f", "", after)
				got := streamChange(t, s, nil, after)
				if !slices.ContainsFunc(got, func(f Finding) bool { return f.RuleID == tc.rule }) {
					t.Fatalf("no %s finding across the edge: %v", tc.rule, got)
				}
				if !slices.Equal(got, want) {
					t.Errorf("streamed %v, whole %v", got, want)
				}
			})
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
