package githubapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/githubtest"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// OrgFile reads the organisation's `.github` repository's default branch
// through the real git data in the fake's remote, and takes GitHub's
// 404 (no such repository, no such file) as no file.
func TestOrgFile(t *testing.T) {
	e := newEnv(t)
	remote := githubtest.NewGitRemote(t, e.fake.ValidToken)
	remote.Create(t, "acme", ".github", "trunk", map[string]string{".github/agent.yml": "draft: always\n", "README.md": "hi\n"})
	e.fake.AddRepo(githubtest.Repo{Owner: "acme", Name: ".github", DefaultBranch: "trunk",
		File: func(ref, p string) ([]byte, bool) { return remote.File(t, "acme", ".github", ref, p) }})
	ctx := context.Background()
	got, err := e.app.OrgFile(ctx, e.repo, ".github/agent.yml")
	if err != nil || string(got) != "draft: always\n" {
		t.Fatalf("OrgFile = %q, %v", got, err)
	}
	if got, err := e.app.OrgFile(ctx, e.repo, ".github/missing.yml"); err != nil || got != nil {
		t.Errorf("absent file = %q, %v; want nil, nil", got, err)
	}
	other := tasks.Issue{InstallationID: 11, Owner: "nobody", Repo: "thing", Number: 1}
	if got, err := e.app.OrgFile(ctx, other, ".github/agent.yml"); err != nil || got != nil {
		t.Errorf("no .github repository = %q, %v; want nil, nil", got, err)
	}
	e.fake.Fail(githubtest.Fault{Method: http.MethodGet, Path: "/repos/acme/.github/contents/.github/agent.yml", Status: http.StatusForbidden, Body: `{"message":"Resource not accessible by integration"}`})
	if _, err := e.app.OrgFile(ctx, e.repo, ".github/agent.yml"); err == nil {
		t.Error("a 403 is not an absent file")
	}
	var asked bool
	for _, r := range e.fake.Requests() {
		asked = asked || r.Path == "/repos/acme/.github/contents/.github/agent.yml"
	}
	if !asked || githubapi.OrgRepo != ".github" {
		t.Error("the contents endpoint of acme/.github was not asked")
	}
}
