package githubjob

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"testing"
	"time"

	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/githubtest"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// An organisation's default is read once per OrgConfigTTL for all the
// jobs of its installation, absence included; another organisation, or
// the same after the TTL, is read again.
func TestOrgConfigCached(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	fake := githubtest.New(t, &key.PublicKey)
	file := "draft: always\n"
	fake.AddRepo(githubtest.Repo{Owner: "acme", Name: ".github", DefaultBranch: "main",
		File: func(ref, p string) ([]byte, bool) { return []byte(file), ref == "main" && p == ".github/agent.yml" }})
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	app, err := githubapi.NewApp(githubtest.AppID, pemKey, fake.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	p := &Pipeline{GitHub: app, Now: func() time.Time { return now }}
	reads := func() int {
		n := 0
		for _, r := range fake.Requests() {
			if r.Method == "GET" && len(r.Path) > 20 && r.Path[len(r.Path)-len("contents/.github/agent.yml"):] == "contents/.github/agent.yml" {
				n++
			}
		}
		return n
	}
	ctx := context.Background()
	acme := tasks.Issue{InstallationID: 3, Owner: "acme", Repo: "widgets", Number: 1}
	for i, want := range []struct {
		issue tasks.Issue
		later time.Duration
		data  string
		reads int
	}{
		{acme, 0, "draft: always\n", 1},
		{tasks.Issue{InstallationID: 3, Owner: "ACME", Repo: "gadgets", Number: 2}, time.Second, "draft: always\n", 1},
		{tasks.Issue{InstallationID: 3, Owner: "other", Repo: "x", Number: 1}, 0, "", 2},
		{tasks.Issue{InstallationID: 3, Owner: "other", Repo: "y", Number: 1}, 0, "", 2},
		{acme, OrgConfigTTL, "draft: never\n", 3},
	} {
		now = now.Add(want.later)
		if want.reads == 3 {
			file = "draft: never\n"
		}
		got, err := p.orgConfig(ctx, want.issue)
		if err != nil || string(got) != want.data || reads() != want.reads {
			t.Errorf("step %d: %q, %v after %d reads; want %q after %d", i, got, err, reads(), want.data, want.reads)
		}
	}
}
