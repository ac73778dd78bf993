package githubapi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/jobs/githubapi"
)

// A comment is hidden as outdated through GraphQL by the node ID its
// listing carries; an unknown node is an error, not a silent success.
func TestMinimizeComment(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	id, err := e.app.PostComment(ctx, e.repo, "old news")
	if err != nil {
		t.Fatal(err)
	}
	cs, err := e.app.Comments(ctx, e.repo)
	if err != nil || len(cs) != 1 || cs[0].ID != id || cs[0].NodeID == "" {
		t.Fatalf("comments %+v, %v: want one with a node ID", cs, err)
	}
	if err := e.app.MinimizeComment(ctx, e.repo, cs[0].NodeID); err != nil {
		t.Fatal(err)
	}
	if got := e.fake.Comments("acme", "widgets", 7)[0]; got.Minimized != "OUTDATED" || got.Minimizes != 1 {
		t.Errorf("after MinimizeComment: hidden %q, %d times; want OUTDATED once", got.Minimized, got.Minimizes)
	}
	if err := e.app.MinimizeComment(ctx, e.repo, "IC_nonsense"); err == nil || !strings.Contains(err.Error(), "Could not resolve") {
		t.Errorf("unknown node: %v, want GitHub's error", err)
	}
}

// A check run without a conclusion is left in progress (pending), and
// LatestCheckRun reads it back; completing it updates the same run.
func TestPendingCheckRun(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	sha := strings.Repeat("a", 40)
	if id, _, err := e.app.LatestCheckRun(ctx, e.repo, sha, "patchwright/approval"); err != nil || id != 0 {
		t.Fatalf("before any run: %d, %v", id, err)
	}
	run := githubapi.CheckRun{Name: "patchwright/approval", HeadSHA: sha, Title: "Waiting", Summary: "Pending."}
	id, err := e.app.PutCheckRun(ctx, e.repo, 0, run)
	if err != nil {
		t.Fatal(err)
	}
	got, conclusion, err := e.app.LatestCheckRun(ctx, e.repo, sha, "patchwright/approval")
	if err != nil || got != id || conclusion != "" {
		t.Fatalf("LatestCheckRun = %d, %q, %v; want %d pending", got, conclusion, err, id)
	}
	if c := e.fake.CheckRuns("acme", "widgets", sha)[0]; c.Status != "in_progress" {
		t.Errorf("pending run's status %q, want in_progress", c.Status)
	}
	run.Conclusion = "success"
	if _, err := e.app.PutCheckRun(ctx, e.repo, id, run); err != nil {
		t.Fatal(err)
	}
	if got, conclusion, err := e.app.LatestCheckRun(ctx, e.repo, sha, "patchwright/approval"); err != nil || got != id || conclusion != "success" {
		t.Errorf("after completing: %d, %q, %v", got, conclusion, err)
	}
}
