package pipeline

import (
	"encoding/base64"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent/secrets"
)

// TestScrubScriptCache runs the cache half of the scrub script with the
// host's sh and grep on a HOME of the test's own: each file holding a
// needle (base64 in a read-only directory, as Go's module cache makes
// them, under a name with a space; hex) is removed and printed relative
// to the cache; a file without one stays, and so does a file outside the
// cache that a link in it points to (grep -r does not follow links).
// Without grep the script fails and says why.
func TestScrubScriptCache(t *testing.T) {
	if _, err := exec.LookPath("grep"); err != nil {
		t.Skip("needs grep")
	}
	value := strings.Repeat("Cs2", 4) + "-registry-token"
	sc, err := secrets.Default()
	if err != nil {
		t.Fatal(err)
	}
	needles := sc.WithValues(map[string]string{"REG_TOKEN": value}).ValueNeedles()
	home := t.TempDir()
	cache := filepath.Join(home, ".cache")
	outside := filepath.Join(home, "outside")
	files := map[string]string{
		"ro dir/with space": "auth=" + base64.StdEncoding.EncodeToString([]byte("me:"+value)) + "\n",
		"b/hex":             hex.EncodeToString([]byte(value)) + "\n",
		"b/plain":           "nothing secret\n",
	}
	for p, text := range files {
		writeTestFile(t, filepath.Join(cache, p), text)
	}
	writeTestFile(t, outside, value)
	if err := os.Symlink(outside, filepath.Join(cache, "b", "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(cache, "ro dir"), 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(cache, "ro dir"), 0o755) })

	cmd := exec.Command("sh", "-c", scrubScript(nil, needles, true))
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + t.TempDir()}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("script: %v %s", err, out)
	}
	got := strings.Split(strings.TrimSpace(string(out)), "\n")
	slices.Sort(got)
	if want := []string{"b/hex", "ro dir/with space"}; !slices.Equal(got, want) {
		t.Errorf("removed %q, want %q", got, want)
	}
	for p, gone := range map[string]bool{"ro dir/with space": true, "b/hex": true, "b/plain": false, "b/link": false} {
		if _, err := os.Lstat(filepath.Join(cache, p)); (err != nil) != gone {
			t.Errorf("%s: removed %v, want %v", p, err != nil, gone)
		}
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("the file outside the cache was removed: %v", err)
	}

	cmd = exec.Command("/bin/sh", "-c", scrubScript(nil, needles, true))
	cmd.Env = []string{"HOME=" + home, "PATH=/nonexistent"}
	msg, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(msg), "grep is not in the image") {
		t.Errorf("without grep: %v %s", err, msg)
	}
}

func writeTestFile(t *testing.T, p, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
