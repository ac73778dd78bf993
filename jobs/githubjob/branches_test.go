package githubjob

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"testing"

	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/githubtest"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// DeleteBranchAt deletes over git, only while the branch is at the
// commit given: a branch that moved, or is gone, stays as it is.
func TestDeleteBranchAtIsCompareAndSwap(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	fake := githubtest.New(t, &key.PublicKey)
	remote := githubtest.NewGitRemote(t, fake.ValidToken)
	remote.Create(t, "acme", "widgets", "main", map[string]string{"a.txt": "a\n"})
	fake.AddRepo(githubtest.Repo{Owner: "acme", Name: "widgets", DefaultBranch: "main", CloneURL: remote.CloneURL("acme", "widgets")})
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	app, err := githubapi.NewApp(githubtest.AppID, pemKey, fake.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := remote.Dir("acme", "widgets")
	main := remote.Head(t, "acme", "widgets", "main")
	githubtest.Git(t, dir, "branch", "agent/issue-1", main)
	githubtest.Git(t, dir, "branch", "agent/issue-2", main)
	b := &Branches{GitHub: app}
	repo := tasks.Issue{InstallationID: 1, Owner: "acme", Repo: "widgets"}
	ctx := context.Background()
	other := "1111111111111111111111111111111111111111"

	if ok, err := b.DeleteBranchAt(ctx, repo, "agent/issue-2", other); err != nil || ok {
		t.Fatalf("branch elsewhere: deleted=%v, %v", ok, err)
	}
	if remote.Head(t, "acme", "widgets", "agent/issue-2") != main {
		t.Fatal("a branch that moved was deleted")
	}
	if ok, err := b.DeleteBranchAt(ctx, repo, "agent/issue-1", main); err != nil || !ok {
		t.Fatalf("branch at its commit: deleted=%v, %v", ok, err)
	}
	if remote.Head(t, "acme", "widgets", "agent/issue-1") != "" {
		t.Fatal("the branch is still there")
	}
	if ok, err := b.DeleteBranchAt(ctx, repo, "agent/issue-1", main); err != nil || ok {
		t.Fatalf("branch gone: deleted=%v, %v", ok, err)
	}
	if remote.Head(t, "acme", "widgets", "main") != main {
		t.Fatal("main moved")
	}
}
