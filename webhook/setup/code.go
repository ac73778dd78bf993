package setup

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base32"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The one-time setup code. Whoever completes the manifest flow owns the
// server's app identity, so the flow starts only for someone who can read
// the server's log or its data directory: New makes a random code, logs it
// and writes it to CodeFile (0600); POST /setup must carry it. It is
// compared in constant time, wrong codes are limited to maxFailures per
// failureWindow, and it stops working (and its file is removed) once the
// app is registered.
const (
	// CodeFile holds the code, relative to the data directory.
	CodeFile = "setup-code"
	// maxFailures wrong codes within failureWindow close the form until
	// the window has passed: 100 bits cannot be guessed, but each try
	// costs the server a request.
	maxFailures   = 10
	failureWindow = 10 * time.Minute
	// codeBytes of randomness: 20 bytes are 32 base32 letters.
	codeBytes = 20
)

// CodePath is the code file's path under dataDir.
func CodePath(dataDir string) string { return filepath.Join(dataDir, CodeFile) }

// newCode returns a fresh code, in groups of four letters for reading off
// a log; checkCode ignores the dashes, spaces and case.
func newCode() (string, error) {
	b := make([]byte, codeBytes)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	s := base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b)
	var groups []string
	for len(s) > 0 {
		n := min(4, len(s))
		groups = append(groups, s[:n])
		s = s[n:]
	}
	return strings.Join(groups, "-"), nil
}

// writeCode stores the code for the operator, 0600, replacing the code of
// an earlier run.
func writeCode(dataDir, code string) error {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return fmt.Errorf("setup: create %s: %w", dataDir, err)
	}
	if err := writePrivate(dataDir, CodeFile, []byte(code+"\n")); err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	return nil
}

func removeCode(dataDir string) error {
	if err := os.Remove(CodePath(dataDir)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func normalizeCode(s string) string {
	return strings.ToUpper(strings.NewReplacer("-", "", " ", "", "\t", "").Replace(strings.TrimSpace(s)))
}

// errTooManyTries: the form is closed for the rest of the window.
var errTooManyTries = errors.New("too many wrong codes")

// checkCode compares a submitted code with the server's in constant time,
// counting failures. It returns errTooManyTries while the form is closed,
// without comparing. The caller holds h.mu.
func (h *Handler) checkCodeLocked(got string) (bool, error) {
	now := h.cfg.Now()
	kept := h.failures[:0]
	for _, t := range h.failures {
		if now.Sub(t) < failureWindow {
			kept = append(kept, t)
		}
	}
	h.failures = kept
	if len(h.failures) >= maxFailures {
		return false, errTooManyTries
	}
	want := normalizeCode(h.code)
	if want != "" && subtle.ConstantTimeCompare([]byte(normalizeCode(got)), []byte(want)) == 1 {
		return true, nil
	}
	h.failures = append(h.failures, now)
	return false, nil
}

// checkCode is checkCodeLocked under h.mu.
func (h *Handler) checkCode(got string) (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.checkCodeLocked(got)
}
