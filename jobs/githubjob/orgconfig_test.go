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

// The passes outside a run (stale, approval, mergeable) read the
// configuration a run trusts: the default branch's file over the
// organisation's default, so an organisation that turns the stale pass
// off or asks for independent approval is heard there too; a repository
// key still wins, and a file that does not parse is the default.
func TestTrustedConfigLayersTheOrganisation(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	fake := githubtest.New(t, &key.PublicKey)
	remote := githubtest.NewGitRemote(t, fake.ValidToken)
	fake.AddRepo(githubtest.Repo{Owner: "acme", Name: ".github", DefaultBranch: "main",
		File: func(ref, p string) ([]byte, bool) {
			return []byte("stale_after_days: 0\napproval: independent\nmerge_conflicts: off\n"), p == ".github/agent.yml"
		}})
	for name, file := range map[string]string{"plain": "draft: always\n", "own": "merge_conflicts: auto\n", "bad": "limits: [\n"} {
		remote.Create(t, "acme", name, "main", map[string]string{".github/agent.yml": file})
		fake.AddRepo(githubtest.Repo{Owner: "acme", Name: name, DefaultBranch: "main", CloneURL: remote.CloneURL("acme", name)})
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	app, err := githubapi.NewApp(githubtest.AppID, pemKey, fake.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	repo := func(name string) tasks.Issue { return tasks.Issue{InstallationID: 1, Owner: "acme", Repo: name} }
	cfg, err := trustedConfig(ctx, app, repo("plain"))
	if err != nil || cfg.StaleAfter() != 0 || !cfg.IndependentApproval() {
		t.Errorf("plain: stale after %v, independent %v, %v: want the organisation's 0 and independent", cfg.StaleAfter(), cfg.IndependentApproval(), err)
	}
	p := &Pipeline{GitHub: app}
	if keep, err := p.keepsMergeable(ctx, repo("plain")); err != nil || keep {
		t.Errorf("plain: keeps mergeable %v, %v: want the organisation's off", keep, err)
	}
	if keep, err := p.keepsMergeable(ctx, repo("own")); err != nil || !keep {
		t.Errorf("own: keeps mergeable %v, %v: want the repository's auto", keep, err)
	}
	if cfg, err := trustedConfig(ctx, app, repo("bad")); err != nil || cfg.StaleAfter() == 0 {
		t.Errorf("bad: stale after %v, %v: want the default", cfg.StaleAfter(), err)
	}
	if keep, err := p.keepsMergeable(ctx, repo("bad")); err != nil || keep {
		t.Errorf("bad: keeps mergeable %v, %v: want the pull request left alone", keep, err)
	}
}
