package githubjob_test

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/patchwright/patchwright/jobs/githubtest"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// addToMaster commits files, new ones included, to the default branch.
func (e *e2e) addToMaster(t *testing.T, msg string, files map[string]string) {
	work := t.TempDir()
	githubtest.Git(t, "", "clone", "-q", "-b", "master", e.remote.Dir(owner, repoName), work)
	for name, content := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(work, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(work, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	githubtest.Git(t, work, "add", "-A")
	githubtest.Git(t, work, "commit", "-q", "-m", msg)
	githubtest.Git(t, work, "push", "-q", "origin", "master")
}

// The owners of the changed file in .github/CODEOWNERS (the first of
// GitHub's places, so the root one is not read; the last matching rule)
// are asked after the labeller and `reviewers:`, each once: users by
// login, a team by its slug; the bot, an e-mail owner, a team without
// access and the owner of an unchanged folder are not.
func TestCodeOwnersAskedToReview(t *testing.T) {
	sandboxtest.EndToEnd(t)
	e := newE2E(t, fixGreeting()...)
	for _, login := range []string{"octocat", "greeter", "docs-owner", "ignored"} {
		e.fake.SetPermission(owner, repoName, login, "write")
	}
	e.fake.AddTeam(owner, repoName, "greeters")
	e.addToMaster(t, "owners", map[string]string{
		".github/agent.yml": "verify:\n  - name: greeting\n    run: grep -qx hello greeting.txt\nreviewers: [octocat]\n",
		".github/CODEOWNERS": "* @octocat\n" +
			"*.txt @greeter @" + owner + " @" + owner + "/greeters @" + owner + "/no-access " + "@" + githubtest.BotLogin + " owner@example.com\n" +
			"/docs/ @docs-owner\n",
		"CODEOWNERS": "* @ignored\n",
		"docs/a.md":  "Docs.\n",
	})
	e.startWorker()
	if code := e.label(1, "delivery-owners-label"); code != http.StatusAccepted {
		t.Fatalf("label: %d, want 202", code)
	}
	if info := e.waitTask("delivery-owners-label", asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted {
		t.Fatalf("solve ended %s: %s", info.State, info.LastErr)
	}
	pulls := e.fake.Pulls(owner, repoName)
	if len(pulls) != 1 {
		t.Fatalf("pull requests: %+v", pulls)
	}
	if want := []string{owner, "octocat", "greeter"}; !slices.Equal(pulls[0].Reviewers, want) {
		t.Errorf("reviewers asked: %q, want %q", pulls[0].Reviewers, want)
	}
	if want := []string{"greeters"}; !slices.Equal(pulls[0].TeamReviewers, want) {
		t.Errorf("teams asked: %q, want %q", pulls[0].TeamReviewers, want)
	}
}
