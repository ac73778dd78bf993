package secrets

import (
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
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

func valueScanner(t *testing.T) *Scanner {
	t.Helper()
	return scanner(t).WithValues(map[string]string{"NPM_TOKEN": setupValue})
}

// TestScanChangeStreamFindsValues: the streamed scan of a change finds
// the operator's values as the whole-file scan does (one rule, two
// readers): in a file larger than several windows, past chunk edges, on
// its line; a value the file already had before is not the change's.
func TestScanChangeStreamFindsValues(t *testing.T) {
	windowSizes(t, 16<<10, 4<<10)
	sc := valueScanner(t)
	filler := strings.Repeat("just some text of a line\n", 3000) // 75 KB: five windows
	after := filler + "//registry/:_authToken=" + setupValue + "\n" + filler
	found := streamChange(t, sc, nil, after)
	if len(found) != 1 || found[0].RuleID != RuleSetupSecret || found[0].Line != 3001 || !strings.Contains(found[0].Description, "NPM_TOKEN") {
		t.Errorf("a new file: %v, want the setup secret on line 3001", found)
	}
	if whole := sc.ScanChange("f", "", after); !slices.Equal(whole, found) {
		t.Errorf("the whole-file scan found %v, the streamed one %v", whole, found)
	}
	before := "token " + setupValue + "\n"
	if found := streamChange(t, sc, &before, before+after); len(found) != 0 {
		t.Errorf("a value the file had before: %v", found)
	}
	if found := streamChange(t, scanner(t), nil, after); len(found) != 0 {
		t.Errorf("a scanner without values: %v", found)
	}
}

// TestValuesIn: the values are found verbatim and encoded, across window
// edges, and nothing else is (a gitleaks rule's key is a dependency's
// fixture, not the operator's secret).
func TestValuesIn(t *testing.T) {
	windowSizes(t, 16<<10, 4<<10)
	sc := valueScanner(t)
	filler := strings.Repeat("filler line of text\n", 2000)
	for name, text := range map[string]string{
		"verbatim":          filler + setupValue + "\n",
		"base64":            filler + "_auth=" + base64.StdEncoding.EncodeToString([]byte("me:"+setupValue)) + "\n",
		"hex":               filler + fmt.Sprintf("%x", "x"+setupValue) + "\n",
		"no newline at all": strings.Repeat("y", 40<<10) + setupValue + strings.Repeat("y", 40<<10),
	} {
		found, err := sc.ValuesIn(t.Context(), "f", iotest.HalfReader(strings.NewReader(text)))
		if err != nil {
			t.Fatal(err)
		}
		if len(found) != 1 || found[0].RuleID != RuleSetupSecret {
			t.Errorf("%s: %v, want the setup secret once", name, found)
		}
	}
	found, err := sc.ValuesIn(t.Context(), "f", strings.NewReader("key = "+awsKey+"\n"))
	if err != nil || len(found) != 0 {
		t.Errorf("a rule's key: %v %v, want nothing", found, err)
	}
	if found, err := scanner(t).ValuesIn(t.Context(), "f", iotest.ErrReader(io.ErrUnexpectedEOF)); err != nil || found != nil {
		t.Errorf("a scanner without values read its input: %v %v", found, err)
	}
	if _, err := sc.ValuesIn(t.Context(), "f", iotest.ErrReader(io.ErrUnexpectedEOF)); err == nil {
		t.Error("a read error is not returned")
	}
}

// TestValueNeedles: wherever the value sits in an encoded text (each
// alignment, each alphabet, hex in either case), one needle is in that
// text, and ValuesIn finds the value there too: the needles say no more
// and no less than the scanner on one line.
func TestValueNeedles(t *testing.T) {
	sc := valueScanner(t)
	needles := sc.ValueNeedles()
	var texts []string
	for _, prefix := range []string{"", "u", "us", "use"} {
		plain := prefix + ":" + setupValue + ":tail"
		texts = append(texts, plain,
			base64.StdEncoding.EncodeToString([]byte(plain)),
			base64.URLEncoding.EncodeToString([]byte(plain)),
			fmt.Sprintf("%x", plain), fmt.Sprintf("%X", plain))
	}
	for _, text := range texts {
		hit := slices.ContainsFunc(needles, func(n string) bool { return strings.Contains(text, n) })
		found, err := sc.ValuesIn(t.Context(), "f", strings.NewReader("cfg "+text+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		if !hit || len(found) == 0 {
			t.Errorf("%q: a needle in it %v, ValuesIn %v", text, hit, found)
		}
	}
	for _, n := range needles {
		if strings.Contains("cfg "+base64.StdEncoding.EncodeToString([]byte("another token entirely")), n) {
			t.Errorf("needle %q is in an unrelated text", n)
		}
	}
	if got := scanner(t).ValueNeedles(); got != nil {
		t.Errorf("a scanner without values has needles %q", got)
	}
}
