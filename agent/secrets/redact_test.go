package secrets

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// pemKey is a private key made for the test, so that the repository
// holds none: an EC key in PEM, which gitleaks' private-key rule matches.
func pemKey(t *testing.T) string {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}))
}

// wrap breaks s into lines of n bytes, as base64(1) prints.
func wrap(s string, n int) string {
	var b strings.Builder
	for len(s) > n {
		b.WriteString(s[:n] + "\n")
		s = s[n:]
	}
	return b.String() + s + "\n"
}

func TestRedactReplacesTheMatchOnly(t *testing.T) {
	s := scanner(t)
	text := "I put the pieces together.\nThe key is " + awsKey + ", see above.\nDone."
	got, found, err := s.Redact(context.Background(), "turn", text)
	if err != nil {
		t.Fatal(err)
	}
	want := "I put the pieces together.\nThe key is [withheld: secret_detected: aws-access-token at turn line 2], see above.\nDone."
	if got != want {
		t.Errorf("Redact =\n%s\nwant\n%s", got, want)
	}
	if len(found) != 1 || found[0].RuleID != "aws-access-token" || found[0].Line != 2 {
		t.Errorf("findings %+v", found)
	}
	clean := "nothing to see here: func Add(a, b int) int"
	if got, found, _ := s.Redact(context.Background(), "turn", clean); got != clean || found != nil {
		t.Errorf("clean text changed: %q %v", got, found)
	}
}

func TestRedactEveryOccurrenceAndEncodings(t *testing.T) {
	s := scanner(t)
	key := pemKey(t)
	b64 := base64.StdEncoding.EncodeToString([]byte("AWS_ACCESS_KEY_ID=" + awsKey))
	cases := map[string]string{
		"twice":          "a " + awsKey + " b " + awsKey + " c",
		"pem":            "here:\n" + key + "end",
		"base64 run":     "token: " + b64 + " (decode it)",
		"hex run":        "hex " + hex.EncodeToString([]byte("id="+awsKey)) + " x",
		"wrapped base64": "out:\n" + wrap(base64.StdEncoding.EncodeToString([]byte(key)), 76) + "tail",
		"gitleaks:allow": "const k = \"" + awsKey + "\" // gitleaks:allow",
	}
	for name, text := range cases {
		t.Run(name, func(t *testing.T) {
			got, found, err := s.Redact(context.Background(), "", text)
			if err != nil {
				t.Fatal(err)
			}
			if len(found) == 0 || !strings.Contains(got, "[withheld: secret_detected: ") {
				t.Fatalf("nothing withheld: %q %v", got, found)
			}
			for _, secret := range []string{awsKey, b64, strings.Split(key, "\n")[1]} {
				if strings.Contains(got, secret) {
					t.Errorf("the text still holds %q:\n%s", secret, got)
				}
			}
			if again := s.Scan("", got); len(again) != 0 {
				t.Errorf("the withheld text still matches: %v\n%s", again, got)
			}
		})
	}
}

func TestRedactCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := scanner(t).Redact(ctx, "", "k "+awsKey); err == nil {
		t.Error("a cancelled scan gave a text")
	}
}

func TestNote(t *testing.T) {
	got := Note(Finding{RuleID: "aws-access-token", Line: 3}, Finding{RuleID: "private-key", File: "cfg/x.go", Line: 9},
		Finding{RuleID: "aws-access-token", Line: 3}, Finding{RuleID: "aws-access-token", File: "docs/" + awsKey + ".md"})
	want := "[withheld: secret_detected: aws-access-token at line 3, private-key at cfg/x.go line 9, aws-access-token]"
	if got != want {
		t.Errorf("Note = %q, want %q", got, want)
	}
	if got := Note(); got != "[withheld: secret_detected]" {
		t.Errorf("Note() = %q", got)
	}
}

// Every withholding reads alike: the bracket is Withheld's, the list of
// findings Describe's, in the note, in a whole text's reason and for a
// reason that is no finding (tools, prompt and pipeline use these).
func TestWithheldWording(t *testing.T) {
	found := []Finding{{RuleID: "private-key", File: "cfg/x.go", Line: 9}, {RuleID: "a", Line: 1}, {RuleID: "b", Line: 2},
		{RuleID: "c", Line: 3}, {RuleID: "d", Line: 4}, {RuleID: "a", Line: 1}}
	list := "private-key at cfg/x.go line 9, a at line 1, b at line 2, and 2 more"
	if got := Describe(found...); got != list {
		t.Errorf("Describe = %q, want %q", got, list)
	}
	if got := Note(found...); got != Withheld("secret_detected: "+list) || got != "[withheld: secret_detected: "+list+"]" {
		t.Errorf("Note = %q", got)
	}
	if got := HoldsSecret(found...); got != "it holds what looks like a secret ("+list+")" {
		t.Errorf("HoldsSecret = %q", got)
	}
	if got := HoldsSecret(); got != "it holds what looks like a secret" {
		t.Errorf("HoldsSecret() = %q", got)
	}
	if got := Withheld("a value of a secret file"); got != "[withheld: a value of a secret file]" {
		t.Errorf("Withheld = %q", got)
	}
	if Describe() != "" {
		t.Error("Describe() is not empty")
	}
}

func TestScanPath(t *testing.T) {
	s := scanner(t)
	enc := base64.RawURLEncoding.EncodeToString([]byte("AWS_ACCESS_KEY_ID=" + awsKey))
	for _, p := range []string{"docs/keys/" + awsKey + ".md", awsKey + "/notes.txt", "x/" + enc + "/y.go"} {
		shown, found, err := s.ScanPath(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if len(found) == 0 {
			t.Errorf("%s: no finding", p)
			continue
		}
		if strings.Contains(shown, awsKey) || strings.Contains(shown, enc) || !strings.Contains(shown, "[withheld: secret_detected: aws-access-token") {
			t.Errorf("%s shown as %q", p, shown)
		}
		if found[0].File != shown || found[0].Line != 0 || strings.Contains(found[0].String(), awsKey) {
			t.Errorf("%s: finding %+v", p, found[0])
		}
	}
	if shown, _, _ := s.ScanPath(context.Background(), "docs/keys/"+awsKey+".md"); shown != "docs/keys/[withheld: secret_detected: aws-access-token].md" {
		t.Errorf("the rest of the path is not kept: %q", shown)
	}
}

// TestScanPathOrdinaryNames: no path of this repository is taken for a
// secret, so path scanning does not block ordinary changes.
func TestScanPathOrdinaryNames(t *testing.T) {
	s := scanner(t)
	n := 0
	err := filepath.WalkDir("../..", func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.Name() == ".git" && d.IsDir():
			return fs.SkipDir
		case d.Name() == ".git": // a worktree's pointer file
			return nil
		}
		rel, _ := filepath.Rel("../..", p)
		n++
		if _, found, _ := s.ScanPath(context.Background(), filepath.ToSlash(rel)); len(found) > 0 {
			t.Errorf("%s: %v", rel, found)
		}
		return nil
	})
	if err != nil || n < 100 {
		t.Fatalf("walked %d paths: %v", n, err)
	}
}

func TestScanChangeDecodes(t *testing.T) {
	s := scanner(t)
	key := pemKey(t)
	enc := wrap(base64.StdEncoding.EncodeToString([]byte(key)), 76)
	// A new file holding a base64-encoded key.
	found := s.ScanChange("docs/blob.txt", "", "notes\n"+enc)
	if len(found) != 1 || found[0].RuleID != "private-key" || found[0].Line != 2 || found[0].File != "docs/blob.txt" {
		t.Errorf("new file: %+v", found)
	}
	// Hex on one added line of an existing file.
	before := "a\nb\n"
	after := "a\nid = " + hex.EncodeToString([]byte("AWS_ACCESS_KEY_ID="+awsKey)) + "\nb\n"
	if found := s.ScanChange("x.txt", before, after); len(found) != 1 || found[0].Line != 2 {
		t.Errorf("hex line: %+v", found)
	}
	// The same encoding already in the file is not the change's.
	if found := s.ScanChange("docs/blob.txt", "notes\n"+enc, "notes\n"+enc+"more\n"); len(found) != 0 {
		t.Errorf("pre-existing encoded key reported: %+v", found)
	}
}

func TestAddedLines(t *testing.T) {
	if got := addedLines("a\nb\nc", "a\nx\nb\ny"); got != "\nx\n\ny" {
		t.Errorf("addedLines = %q", got)
	}
	big := strings.Repeat("x", maxDecodedChange+10)
	if got := addedLines("", big); len(got) != maxDecodedChange {
		t.Errorf("not bounded: %d bytes", len(got))
	}
}
