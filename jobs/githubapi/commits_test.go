package githubapi_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-github/v62/github"

	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/githubtest"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// pushTo commits files on branch of acme/widgets in remote as a person
// would (git, not the API), with msg, and returns the branch's new head.
// orphan starts the branch with no history.
func pushTo(t *testing.T, remote *githubtest.GitRemote, branch, msg string, orphan bool, files map[string]string) string {
	t.Helper()
	work := t.TempDir()
	githubtest.Git(t, "", "clone", "-q", remote.Dir("acme", "widgets"), work)
	if orphan {
		githubtest.Git(t, work, "checkout", "-q", "--orphan", branch)
	} else {
		githubtest.Git(t, work, "checkout", "-q", branch)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(work, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	githubtest.Git(t, work, "add", "-A")
	githubtest.Git(t, work, "commit", "-q", "-m", msg)
	githubtest.Git(t, work, "push", "-q", "origin", branch)
	return remote.Head(t, "acme", "widgets", branch)
}

// Diverged reads a pull request's head and its moved base from GitHub's
// compare as the fake answers it from its git remote: the head made
// through the Git Data API (as every head Patchwright pushes is), the
// base moved by two pushes. It names their fork point, the base's newest
// commit, and the base's subjects oldest first; the compare says
// "diverged", one ahead and two behind, as GitHub does. Histories with
// nothing in common, and a repository the fake answers from a Log alone
// (which knows no merge base), are errors that say so.
func TestDiverged(t *testing.T) {
	e := newEnv(t)
	remote := githubtest.NewGitRemote(t, e.fake.ValidToken)
	remote.Create(t, "acme", "widgets", "main", map[string]string{"a.txt": "one\n"})
	e.fake.AddRepo(githubtest.Repo{Owner: "acme", Name: "widgets", DefaultBranch: "main", CloneURL: remote.CloneURL("acme", "widgets")})
	fork := remote.Head(t, "acme", "widgets", "main")
	ctx := context.Background()
	head, err := e.app.CreateCommit(ctx, e.repo, githubapi.NewCommit{Branch: "agent/issue-7", Parent: fork,
		BaseTree: strings.TrimSpace(githubtest.Git(t, remote.Dir("acme", "widgets"), "rev-parse", fork+"^{tree}")),
		Message:  "Fix it", Files: []githubapi.CommitFile{{Path: "b.txt", Mode: "100644", Size: 4,
			Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("two\n")), nil }}}})
	if err != nil {
		t.Fatal(err)
	}
	pushTo(t, remote, "main", "docs: say more", false, map[string]string{"c.txt": "three\n"})
	base := pushTo(t, remote, "main", "docs: say more again\n\nA body.", false, map[string]string{"d.txt": "four\n"})

	d, err := e.app.Diverged(ctx, e.repo, head, "main")
	if err != nil {
		t.Fatal(err)
	}
	want := githubapi.Divergence{MergeBase: fork, Base: base, Subjects: []string{"docs: say more", "docs: say more again"}}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("Diverged = %+v, want %+v", d, want)
	}
	gh, err := e.app.Installation(e.repo.InstallationID)
	if err != nil {
		t.Fatal(err)
	}
	cmp, _, err := gh.Repositories.CompareCommits(ctx, "acme", "widgets", "main", head, &github.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cmp.GetStatus() != "diverged" || cmp.GetAheadBy() != 1 || cmp.GetBehindBy() != 2 || cmp.GetTotalCommits() != 1 ||
		cmp.GetBaseCommit().GetSHA() != base || cmp.GetMergeBaseCommit().GetSHA() != fork ||
		len(cmp.Files) != 1 || cmp.Files[0].GetFilename() != "b.txt" || cmp.Files[0].GetStatus() != "added" {
		t.Errorf("compare main...head: status %q, ahead %d, behind %d, total %d, base %s, merge base %s, files %v",
			cmp.GetStatus(), cmp.GetAheadBy(), cmp.GetBehindBy(), cmp.GetTotalCommits(),
			cmp.GetBaseCommit().GetSHA(), cmp.GetMergeBaseCommit().GetSHA(), cmp.Files)
	}

	pushTo(t, remote, "unrelated", "another history", true, map[string]string{"z.txt": "z\n"})
	if _, err := e.app.Diverged(ctx, e.repo, head, "unrelated"); err == nil || !strings.Contains(err.Error(), "No common ancestor") {
		t.Errorf("unrelated histories: %v, want GitHub's 404 naming no common ancestor", err)
	}
	if _, err := e.app.Diverged(ctx, e.repo, head, "no-such-branch"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("a base the repository lacks: %v, want a 404", err)
	}

	e.fake.AddRepo(githubtest.Repo{Owner: "acme", Name: "gadgets", DefaultBranch: "main",
		Log: func(base, head string) []githubtest.GitCommit {
			return []githubtest.GitCommit{{SHA: strings.Repeat("1", 40), Message: "a commit"}}
		}})
	gadgets := tasks.Issue{InstallationID: e.repo.InstallationID, Owner: "acme", Repo: "gadgets", Number: 1}
	if _, err := e.app.Diverged(ctx, gadgets, strings.Repeat("2", 40), "main"); err == nil || !strings.Contains(err.Error(), "no merge base") {
		t.Errorf("a compare without a merge base: %v, want an error that says so", err)
	}
}
