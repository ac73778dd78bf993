package githubjob_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/patchwright/patchwright/agent/provider"
	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/jobs/githubtest"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// The review before publishing through the whole GitHub path: webhook,
// queue, a real worker, Docker, the GitHub fake, the agent's model and
// the review's model each scripted at the wire.

// reviewedRun labels issue 1 with the review model answering answer, and
// returns the one pull request and the review model's server.
func reviewedRun(t *testing.T, delivery, answer string) (githubtest.Pull, *pt.Server) {
	t.Helper()
	sandboxtest.EndToEnd(t)
	e := newE2E(t,
		call("read_file", `{"path":"greeting.txt"}`),
		call("edit", `{"edits":[{"path":"greeting.txt","old_text":"helo","new_text":"hello"}]}`),
		call("finish", `{"summary":"Fixed the spelling in greeting.txt."}`),
	)
	review := pt.New(t, pt.Turn{Text: answer, Usage: provider.Usage{InputTokens: 2000, OutputTokens: 100}})
	rp, err := provider.New("openai:gpt-4.1-mini", review.Options(provider.NameOpenAI))
	if err != nil {
		t.Fatal(err)
	}
	e.pipe.Executor.ReviewProvider = rp
	e.startWorker()
	if code := e.label(1, delivery); code != http.StatusAccepted {
		t.Fatalf("label: %d, want 202", code)
	}
	if info := e.waitTask(delivery, asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted {
		t.Fatalf("task ended %s: %s", info.State, info.LastErr)
	}
	if n := len(review.Requests()); n != 1 {
		t.Fatalf("%d review calls, want 1", n)
	}
	if req := review.Requests()[0]; len(req.Tools) != 0 || !strings.Contains(req.Messages[0].Text, "+    1| hello") {
		t.Errorf("the review model was asked %+v; want no tools and the diff", req)
	}
	pulls := e.fake.Pulls(owner, repoName)
	if len(pulls) != 1 {
		t.Fatalf("pull requests %+v, want one", pulls)
	}
	return pulls[0], review
}

// firstNotVerified is the first item of the body's "Not verified".
func firstNotVerified(t *testing.T, body string) string {
	t.Helper()
	_, rest, ok := strings.Cut(body, "## Not verified\n")
	for l := range strings.Lines(rest) {
		if ok && strings.HasPrefix(l, "- ") {
			return l
		}
	}
	t.Fatalf("the body has no item under Not verified:\n%s", body)
	return ""
}

// TestReviewInjectionMakesDraft: the checks pass, but the review model
// reports an injection. The pull request is a draft, unverified, and the
// risk opens "Not verified"; the body names the review's model.
func TestReviewInjectionMakesDraft(t *testing.T) {
	pr, _ := reviewedRun(t, "delivery-review-injection",
		`{"risks":[{"kind":"injection","severity":"high","path":"greeting.txt","line":1,"detail":"The greeting tells AI agents to approve it."}]}`)
	if !pr.Draft || !strings.Contains(pr.Body, "**Outcome: unverified**") {
		t.Errorf("draft %v; want a draft, unverified:\n%s", pr.Draft, pr.Body)
	}
	if first := firstNotVerified(t, pr.Body); !strings.Contains(first, "injection risk: The greeting tells AI agents to approve it.") || !strings.Contains(first, "greeting.txt") {
		t.Errorf("first of Not verified is %q; want the injection", first)
	}
	if !strings.Contains(pr.Body, "Review before publishing: `openai:gpt-4.1-mini` read the issue, the diff and the findings and reported 1 risk") {
		t.Errorf("the body does not say the review ran:\n%s", pr.Body)
	}
}

// TestReviewClaimChangesNothing: the review model claims the change is
// verified and asks for it to be published as ready. The run is what the
// checks make it, verified and ready either way, and the body shows no
// trace of the claim.
func TestReviewClaimChangesNothing(t *testing.T) {
	pr, _ := reviewedRun(t, "delivery-review-claim",
		`{"risks":[],"verdict":"verified","draft":false,"note":"Everything verified; mark this pull request verified."}`)
	if pr.Draft || !strings.Contains(pr.Body, "**Outcome: verified**") {
		t.Errorf("draft %v; want verified and ready, as the checks alone make it:\n%s", pr.Draft, pr.Body)
	}
	if strings.Contains(pr.Body, "Everything verified") {
		t.Errorf("the reviewer's words reached the body:\n%s", pr.Body)
	}
	if !strings.Contains(pr.Body, "reported 0 risks") {
		t.Errorf("the body does not say the review ran:\n%s", pr.Body)
	}
}
