package githubapi_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/githubtest"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// TestGHESPaths runs the adapter's REST, GraphQL and Actions-log calls
// against a fake shaped like GitHub Enterprise Server, configured with
// the API root as an operator writes it (https://HOST/api/v3, with or
// without the slash). Every request must land on a GHES path: GraphQL at
// /api/graphql (the review-thread lookup swallows a failure, so only the
// fake's strays show a wrong path), the log's download on the GHES host.
func TestGHESPaths(t *testing.T) {
	for _, suffix := range []string{"/api/v3", "/api/v3/"} {
		t.Run(suffix, func(t *testing.T) {
			key, err := rsa.GenerateKey(rand.Reader, 2048)
			if err != nil {
				t.Fatal(err)
			}
			g := githubtest.NewGHES(t, key)
			g.AddRepo(githubtest.Repo{Owner: "o", Name: "r", DefaultBranch: "main"})
			g.AddIssue(githubtest.Issue{Owner: "o", Repo: "r", Number: 1, Title: "t", Body: "b", Author: "o"})
			pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
			app, err := githubapi.NewApp(githubtest.AppID, pemKey, g.Web+suffix, nil)
			if err != nil {
				t.Fatal(err)
			}
			ghesCalls(t, g, app)
			if s := g.Strays(); len(s) > 0 {
				t.Errorf("requests outside GHES's shape: %+v", s)
			}
			var graphql bool
			for _, r := range g.Requests() {
				graphql = graphql || r.Path == "/api/graphql" && r.Status == 200
			}
			if !graphql {
				t.Errorf("no GraphQL request reached /api/graphql: %+v", g.Requests())
			}
		})
	}
}

func ghesCalls(t *testing.T, g *githubtest.GHES, app *githubapi.App) {
	ctx := context.Background()
	repo := tasks.Issue{InstallationID: 11, Owner: "o", Repo: "r", Number: 1}
	if _, err := app.GetIssue(ctx, repo); err != nil {
		t.Fatalf("get issue: %v", err)
	}
	pr, err := app.CreatePullRequest(ctx, repo, githubapi.NewPullRequest{Title: "t", Head: "agent/issue-1", Base: "main", Body: "b"})
	if err != nil {
		t.Fatalf("create pull request: %v", err)
	}
	prIssue := repo
	prIssue.Number = pr.Number
	if err := app.SetDraft(ctx, prIssue, pr.NodeID, true); err != nil {
		t.Errorf("set draft (GraphQL): %v", err)
	}
	if _, err := app.ReviewComments(ctx, prIssue); err != nil {
		t.Errorf("review comments: %v", err)
	}
	sha := strings.Repeat("a", 40)
	g.AddForeignCheckRun(githubtest.CheckRun{Owner: "o", Repo: "r", Name: "ci", HeadSHA: sha, App: "github-actions",
		Conclusion: "failure", Log: "##[error]boom\n"})
	failed, err := app.FailedChecks(ctx, repo, sha)
	if err != nil || len(failed) != 1 || failed[0].Log != "##[error]boom\n" || failed[0].LogErr != "" {
		t.Errorf("failed checks: %+v, %v; want the job's log read from the GHES host", failed, err)
	}
	if len(failed) == 1 && !strings.HasPrefix(failed[0].URL, g.Web+"/o/r/runs/") {
		t.Errorf("check run's page %q is not on the GHES host", failed[0].URL)
	}
}
