package githubjob

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/githubtest"
	"github.com/patchwright/patchwright/jobs/pipeline"
	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/patchwright/patchwright/report"
	"github.com/patchwright/patchwright/verify"
)

// The largest body a retry can render (a long history, long failing
// output, many files, a long summary), with the publisher's note and
// marker, is one GitHub takes: the fake refuses what GitHub would.
func TestLargestBodyIsAcceptedByGitHub(t *testing.T) {
	in := report.Input{RunID: "run.3", Attempt: 40, Issue: 7, Outcome: verify.Unverified, Reason: strings.Repeat("why ", 2000),
		Summary: strings.Repeat("Changed everything. ", 5000)}
	for i := range 400 {
		in.Files = append(in.Files, report.FileStat{Path: fmt.Sprintf("pkg/%03d/%s.go", i, strings.Repeat("long", 20)), Added: i, Deleted: 1})
	}
	for i := range 12 {
		c := verify.CheckResult{Name: fmt.Sprintf("check-%d", i), Command: "make " + strings.Repeat("x", 300), Ran: true, ExitCode: 1,
			Output: strings.Repeat("FAIL: a very long line of test output ✗\n", 3000)}
		in.Baseline, in.Final = append(in.Baseline, c), append(in.Final, c)
	}
	for i := range 40 {
		in.Attempts = append(in.Attempts, report.Attempt{Number: i + 1, Started: time.Unix(1_800_000_000, 0).Add(time.Duration(i) * time.Hour),
			TriggeredBy: "maintainer", Trigger: "/agent retry", Outcome: verify.Unverified, Reason: strings.Repeat("reason ", 300)})
	}
	res := &pipeline.Result{Report: in, Outcome: verify.Unverified, HeadCommit: strings.Repeat("b", 40)}
	g := &publisher{}
	var bodies []string
	for _, refused := range []bool{false, true} {
		b, err := g.body(res, refused)
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, b)
	}

	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	fake := githubtest.New(t, &key.PublicKey)
	fake.AddRepo(githubtest.Repo{Owner: "acme", Name: "widgets", DefaultBranch: "main"})
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	app, err := githubapi.NewApp(githubtest.AppID, pemKey, fake.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	repo := tasks.Issue{InstallationID: 1, Owner: "acme", Repo: "widgets"}
	for _, b := range bodies {
		if _, err := app.CreatePullRequest(context.Background(), repo, githubapi.NewPullRequest{Title: prTitle(strings.Repeat("t", 400), 7),
			Head: "agent/issue-7", Base: "main", Body: b}); err != nil {
			t.Fatalf("GitHub refused a body of %d bytes: %v", len(b), err)
		}
		fake.SetPullState("acme", "widgets", len(fake.Pulls("acme", "widgets")), "closed")
	}
	if h := report.ParseHistory(fake.Pulls("acme", "widgets")[0].Body); len(h.Attempts) == 0 {
		t.Error("the history did not survive")
	}
}
