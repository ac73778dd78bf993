package setup

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
)

// /setup without the code never starts the manifest flow: the page asks
// for the code, and a missing or wrong one is refused, with no state
// issued. The right one (typed in any case, without its dashes) starts it.
func TestSetupWithoutTheCodeIsRefused(t *testing.T) {
	f := newFixture(t)
	status, body := f.get(t, "/setup")
	if status != http.StatusOK || manifestRE.MatchString(body) || !strings.Contains(body, `name="code"`) {
		t.Fatalf("GET /setup: %d, want the code form and no manifest\n%s", status, body)
	}
	for _, code := range []string{"", "AAAA-BBBB", f.code(t) + "X"} {
		status, body := f.post(t, url.Values{"code": {code}})
		if status != http.StatusForbidden || manifestRE.MatchString(body) {
			t.Errorf("code %q: %d, want 403 without the manifest", code, status)
		}
	}
	if n := len(f.h.states); n != 0 {
		t.Fatalf("%d states issued without the code", n)
	}
	typed := strings.ToLower(strings.ReplaceAll(f.code(t), "-", ""))
	status, body = f.post(t, url.Values{"code": {typed}})
	if status != http.StatusOK || !manifestRE.MatchString(body) {
		t.Fatalf("the right code: %d, want the manifest form\n%s", status, body)
	}
}

// The code is in the log and in a file only the server's user reads.
func TestCodeIsLoggedAndWrittenPrivately(t *testing.T) {
	dir := t.TempDir()
	var logs bytes.Buffer
	h, err := New(Config{DataDir: dir, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(CodePath(dir))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("code file mode %v, want 0600", fi.Mode().Perm())
	}
	b, _ := os.ReadFile(CodePath(dir))
	code := strings.TrimSpace(string(b))
	if code != h.code || len(normalizeCode(code)) != 32 || !strings.Contains(logs.String(), code) {
		t.Errorf("code %q, handler's %q, log:\n%s", code, h.code, logs.String())
	}
	// A restart makes a new code; the old one stops working.
	again, err := New(Config{DataDir: dir, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := again.checkCode(code); ok {
		t.Error("the previous run's code still works")
	}
}

// Once the app is registered the code is spent: its file is gone and
// posting it is answered 404 like every setup page.
func TestCodeExpiresOnceRegistered(t *testing.T) {
	f := newFixture(t)
	code := f.code(t)
	action, _ := f.start(t, "")
	if status, body := f.get(t, "/setup/callback?code=good&state="+action.Query().Get("state")); status != http.StatusOK {
		t.Fatalf("callback: %d\n%s", status, body)
	}
	if _, err := os.Stat(CodePath(f.dir)); !os.IsNotExist(err) {
		t.Errorf("code file after registration: %v", err)
	}
	if status, body := f.post(t, url.Values{"code": {code}}); status != http.StatusNotFound || manifestRE.MatchString(body) {
		t.Errorf("the code after registration: %d, want 404", status)
	}
	if ok, _ := f.h.checkCode(code); ok {
		t.Error("the spent code still compares equal")
	}
}

// Wrong codes are limited: past maxFailures in failureWindow even the right
// code is refused until the window has passed.
func TestWrongCodesAreLimited(t *testing.T) {
	f := newFixture(t)
	for range maxFailures {
		if status, _ := f.post(t, url.Values{"code": {"wrong"}}); status != http.StatusForbidden {
			t.Fatalf("wrong code: %d", status)
		}
	}
	if status, _ := f.post(t, url.Values{"code": {f.code(t)}}); status != http.StatusTooManyRequests {
		t.Fatalf("right code after %d wrong ones: %d, want 429", maxFailures, status)
	}
	f.now = f.now.Add(failureWindow)
	if status, _ := f.post(t, url.Values{"code": {f.code(t)}}); status != http.StatusOK {
		t.Fatalf("right code after the window: %d, want 200", status)
	}
}
