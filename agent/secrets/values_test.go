package secrets

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The value is made at run time so this file holds no secret.
var setupValue = strings.Repeat("s3cr", 3) + "-private-registry"

// TestWithValues: a known value is withheld verbatim, base64-encoded and
// in a change, by name; the scanner it came from is unchanged.
func TestWithValues(t *testing.T) {
	base, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	sc := base.WithValues(map[string]string{"NPM_TOKEN": setupValue, "EMPTY": ""})
	for name, text := range map[string]string{
		"verbatim": "line one\n//registry/:_authToken=" + setupValue + "\n",
		"base64":   "cfg " + base64.StdEncoding.EncodeToString([]byte("token="+setupValue)) + "\n",
	} {
		out, found, err := sc.Redact(t.Context(), "out", text)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out, setupValue) || strings.Contains(out, base64.StdEncoding.EncodeToString([]byte("token="+setupValue))) || len(found) == 0 {
			t.Errorf("%s: not withheld: %q %v", name, out, found)
			continue
		}
		if f := found[0]; f.RuleID != RuleSetupSecret || !strings.Contains(f.Description, "NPM_TOKEN") || strings.Contains(f.String(), setupValue) {
			t.Errorf("%s: finding %v", name, f)
		}
	}
	if got := sc.ScanChange("a.txt", "x\n", "x\n"+setupValue+"\n"); len(got) != 1 || got[0].Line != 2 {
		t.Errorf("ScanChange adding the value: %v", got)
	}
	if got := sc.ScanChange("a.txt", setupValue+"\n", setupValue+"\nmore\n"); len(got) != 0 {
		t.Errorf("ScanChange keeping the value: %v", got)
	}
	if got := base.Scan("f", setupValue); len(got) != 0 {
		t.Errorf("the base scanner knows the value: %v", got)
	}
}

func TestLoadSetupSecrets(t *testing.T) {
	write := func(s string) string {
		p := filepath.Join(t.TempDir(), "secrets.yml")
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	s, err := LoadSetupSecrets(write("acme/widgets:\n  NPM_TOKEN: " + setupValue + "\n/srv/repos/tool:\n  PIP_INDEX_URL: https://u:" + setupValue + "@pypi.corp/simple\n"))
	if err != nil {
		t.Fatal(err)
	}
	for url, want := range map[string]string{
		"https://github.com/acme/widgets":     "NPM_TOKEN",
		"https://github.com/acme/widgets.git": "NPM_TOKEN",
		"https://github.com/acme/widgets/":    "NPM_TOKEN",
		"/srv/repos/tool":                     "PIP_INDEX_URL",
		"https://github.com/other/widgets":    "",
		"https://github.com/xacme/widgets":    "",
	} {
		got := ""
		for k := range s.For(url) {
			got = k
		}
		if got != want {
			t.Errorf("For(%s) = %q, want %q", url, got, want)
		}
	}
	for name, src := range map[string]string{
		"not yaml":      "acme/widgets: [",
		"a list":        "- a\n",
		"bad name":      "acme/w:\n  NPM-TOKEN: " + setupValue + "\n",
		"reserved name": "acme/w:\n  HOME: " + setupValue + "\n",
		"short value":   "acme/w:\n  TOKEN: short\n",
		"empty repo":    "'':\n  TOKEN: " + setupValue + "\n",
	} {
		_, err := LoadSetupSecrets(write(src))
		if err == nil {
			t.Errorf("%s: loaded", name)
		} else if strings.Contains(err.Error(), setupValue) {
			t.Errorf("%s: the error holds the value: %v", name, err)
		}
	}
	if _, err := LoadSetupSecrets(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing file loaded")
	}
}
