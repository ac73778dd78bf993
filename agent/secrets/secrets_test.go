package secrets

import (
	"context"
	"encoding/base64"
	"strings"
	"sync"
	"testing"
)

// A key shaped like AWS's documented example, split so that scanners of
// this repository do not flag the test source itself.
var awsKey = "AKIA" + "Z3MPLE7QX4RT2WVB"

func scanner(t *testing.T) *Scanner {
	t.Helper()
	s, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestScanFindsAWSKeyWithoutRevealingIt(t *testing.T) {
	s := scanner(t)
	content := "package cfg\n\n// credentials for the test bucket\nconst key = \"" + awsKey + "\"\n"
	found := s.Scan("cfg/cfg.go", content)
	if len(found) == 0 {
		t.Fatal("no finding for an AWS access key id")
	}
	f := found[0]
	if f.File != "cfg/cfg.go" || f.Line != 4 || f.RuleID != "aws-access-token" {
		t.Errorf("finding = %+v, want cfg/cfg.go line 4 rule aws-access-token", f)
	}
	if strings.Contains(f.String(), awsKey) {
		t.Errorf("finding text reveals the secret: %s", f)
	}
}

func TestScanCleanCode(t *testing.T) {
	s := scanner(t)
	if found := s.Scan("a.go", "package a\n\nfunc Add(a, b int) int { return a + b }\n"); len(found) != 0 {
		t.Errorf("findings in clean code: %v", found)
	}
}

func TestScanChangeIgnoresSecretsAlreadyThere(t *testing.T) {
	s := scanner(t)
	before := "key = \"" + awsKey + "\"\n"
	after := before + "other = 1\n"
	if found := s.ScanChange("x.txt", before, after); len(found) != 0 {
		t.Errorf("pre-existing secret reported as new: %v", found)
	}
	second := "AKIA" + "Q7XR2MBN5TLC4PWE"
	after += "second = \"" + second + "\"\n"
	found := s.ScanChange("x.txt", before, after)
	if len(found) != 1 || found[0].Line != 3 {
		t.Errorf("ScanChange = %v, want the one new key on line 3", found)
	}
}

func TestConcurrentUse(t *testing.T) {
	s := scanner(t)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if len(s.Scan("f", "k = \""+awsKey+"\"")) == 0 {
				t.Error("missed the key under concurrency")
			}
		}()
	}
	wg.Wait()
}

func TestScanContextStops(t *testing.T) {
	s := scanner(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if found := s.ScanContext(ctx, "a", "key = \""+awsKey+"\"\n"); len(found) != 0 {
		t.Errorf("a cancelled scan found %v", found)
	}
	if found := s.ScanContext(context.Background(), "a", "key = \""+awsKey+"\"\n"); len(found) != 1 {
		t.Errorf("findings %v, want one", found)
	}
}

func TestScanDecodesBase64(t *testing.T) {
	s := scanner(t)
	// `base64 .env`, wrapped at 76 columns as base64(1) does.
	enc := base64.StdEncoding.EncodeToString([]byte("AWS_REGION=eu-west-1\nAWS_ACCESS_KEY_ID=" + awsKey + "\n"))
	wrapped := enc[:76] + "\n" + enc[76:] + "\n"
	if found := s.Scan("out", wrapped); len(found) == 0 || found[0].RuleID != "aws-access-token" {
		t.Errorf("findings in base64 output: %v", found)
	}
}
