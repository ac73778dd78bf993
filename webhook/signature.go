package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
)

// Signature errors; each is answered with 401.
var (
	errNoSignature   = errors.New("missing X-Hub-Signature-256")
	errSHA1Only      = errors.New("only a SHA-1 X-Hub-Signature was sent; SHA-256 is required")
	errBadSignature  = errors.New("X-Hub-Signature-256 does not match the body")
	errSignatureForm = errors.New("X-Hub-Signature-256 is not sha256=<64 hex digits>")
)

// verifySignature checks header (the X-Hub-Signature-256 value, "sha256="
// and the hex HMAC-SHA256 of body under secret) in constant time. sha1 is the
// X-Hub-Signature header, only used to say why an unsigned request failed.
func verifySignature(secret []byte, body []byte, header, sha1 string) error {
	want, err := parseSignature(header, sha1)
	if err != nil {
		return err
	}
	return checkSum(want, sign(secret, body))
}

// parseSignature decodes the X-Hub-Signature-256 header. The receiver calls
// it before reading the body, so a request without a usable signature is
// refused without holding a byte of it.
func parseSignature(header, sha1 string) ([]byte, error) {
	if header == "" {
		if sha1 != "" {
			return nil, errSHA1Only
		}
		return nil, errNoSignature
	}
	hexSum, ok := strings.CutPrefix(header, "sha256=")
	if !ok || len(hexSum) != 2*sha256.Size {
		return nil, errSignatureForm
	}
	want, err := hex.DecodeString(hexSum)
	if err != nil {
		return nil, errSignatureForm
	}
	return want, nil
}

// checkSum compares the sent and computed HMACs in constant time.
func checkSum(want, got []byte) error {
	if !hmac.Equal(want, got) {
		return errBadSignature
	}
	return nil
}

func sign(secret, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return m.Sum(nil)
}

// Signature returns the X-Hub-Signature-256 value GitHub sends for body
// under secret. Tests and tools that send deliveries use it.
func Signature(secret, body []byte) string {
	return "sha256=" + hex.EncodeToString(sign(secret, body))
}
