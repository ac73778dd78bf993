package webhook

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// countingQueue is a Queue that counts calls: the seam the fuzzer needs,
// where a real Redis round-trip per input would make it crawl.
type countingQueue struct {
	mu    sync.Mutex
	calls int
}

func (q *countingQueue) add() {
	q.mu.Lock()
	q.calls++
	q.mu.Unlock()
}

func (q *countingQueue) EnqueueSolve(context.Context, tasks.SolveIssue) (jobs.EnqueueResult, error) {
	q.add()
	return jobs.EnqueueResult{Outcome: jobs.Enqueued}, nil
}

func (q *countingQueue) EnqueueSolveBehind(context.Context, tasks.SolveIssue) (jobs.EnqueueResult, error) {
	q.add()
	return jobs.EnqueueResult{Outcome: jobs.Enqueued}, nil
}

func (q *countingQueue) EnqueueRetry(context.Context, tasks.RetryPR) (jobs.EnqueueResult, error) {
	q.add()
	return jobs.EnqueueResult{Outcome: jobs.Enqueued}, nil
}

func (q *countingQueue) DeferUpdate(context.Context, tasks.RetryPR) error {
	q.add()
	return nil
}

func (q *countingQueue) EnqueueReply(context.Context, tasks.Reply) (jobs.EnqueueResult, error) {
	q.add()
	return jobs.EnqueueResult{Outcome: jobs.Enqueued}, nil
}

func (q *countingQueue) Cancel(context.Context, tasks.Issue, string) (string, error) {
	q.add()
	return "", nil
}

func (q *countingQueue) Worked(context.Context, tasks.Issue) (bool, error) { return true, nil }

func (q *countingQueue) SameStart(context.Context, string, string, string) (bool, error) {
	return false, nil
}

func (q *countingQueue) ClaimStrangerReply(context.Context, tasks.Issue, string) (bool, error) {
	q.add()
	return true, nil
}

func (q *countingQueue) ApprovedPin(context.Context, tasks.Issue) (string, bool, error) {
	return tasks.IssueHash("t", "b"), true, nil
}

func (q *countingQueue) EnqueueDeleteBranch(context.Context, tasks.DeleteBranch) (jobs.EnqueueResult, error) {
	q.add()
	return jobs.EnqueueResult{Outcome: jobs.Enqueued}, nil
}

func (q *countingQueue) EnqueueApproval(context.Context, tasks.Approval) (jobs.EnqueueResult, error) {
	q.add()
	return jobs.EnqueueResult{Outcome: jobs.Enqueued}, nil
}

func (q *countingQueue) EnqueueOutcome(context.Context, tasks.Outcome) (jobs.EnqueueResult, error) {
	q.add()
	return jobs.EnqueueResult{Outcome: jobs.Enqueued}, nil
}

func (q *countingQueue) CancelRepo(context.Context, string, string, string) ([]string, error) {
	q.add()
	return nil, nil
}

func (q *countingQueue) LatestPlan(context.Context, tasks.Issue) (jobs.PlanRecord, bool, error) {
	q.add()
	return jobs.PlanRecord{}, false, nil
}

func (q *countingQueue) ApprovePlan(context.Context, tasks.Issue, string, string) (bool, error) {
	q.add()
	return false, nil
}

func (q *countingQueue) SetAsidePlan(context.Context, tasks.Issue, string, string) (bool, error) {
	q.add()
	return false, nil
}

func (q *countingQueue) AddNote(context.Context, tasks.Issue, jobs.Note) (jobs.NoteOutcome, error) {
	q.add()
	return jobs.NoteAdded, nil
}

// writerGitHub says everyone can write and every pull request is Patchwright's.
type writerGitHub struct{}

func (writerGitHub) CanWrite(context.Context, tasks.Issue, string) (bool, string, error) {
	return true, "write", nil
}

func (writerGitHub) GetPullRequest(context.Context, tasks.Issue) (githubapi.PullRequest, error) {
	return githubapi.PullRequest{HeadRef: "agent/issue-1", State: "open"}, nil
}

func (writerGitHub) FindPullRequest(context.Context, tasks.Issue, string) (githubapi.PullRequest, bool, error) {
	return githubapi.PullRequest{}, false, nil
}

func (writerGitHub) AgentPullRequests(context.Context, tasks.Issue, string) ([]githubapi.PullRequest, error) {
	return nil, nil
}

func (writerGitHub) GetIssue(context.Context, tasks.Issue) (githubapi.IssueText, error) {
	return githubapi.IssueText{Title: "t", Body: "b", State: "open"}, nil
}

// FuzzHandler feeds arbitrary bodies, events and signatures to the handler:
// it must not panic, must answer a documented status, and must never touch
// the queue unless the body carries its valid signature.
func FuzzHandler(f *testing.F) {
	for _, name := range []string{"issues.labeled.json", "issue_comment.created.json", "issue_comment.created.on-pull-request.json", "ping.json"} {
		f.Add(fixture(f, fixtureHooks, name), "issues", true, "")
	}
	f.Add([]byte(`{"action":"labeled","label":{"name":"agent"},"issue":{"number":1},"repository":{"name":"r","owner":{"login":"o"}},"sender":{"login":"u"},"installation":{"id":1}}`), "issues", true, "")
	f.Add([]byte(`{"action":"created","comment":{"body":"/agent retry x"},"issue":{"number":1,"pull_request":{},"user":{"login":"`+testBot+`"}},"repository":{"name":"r","owner":{"login":"o"}},"sender":{"login":"u"},"installation":{"id":1}}`), "issue_comment", true, "")
	f.Add([]byte(`{"action":"labeled"}`), "issues", false, "sha256=00")
	f.Add([]byte(`null`), "issue_comment", true, "")
	f.Add([]byte(`[]`), "issues", false, "")
	f.Fuzz(func(t *testing.T, body []byte, event string, signed bool, forged string) {
		q := &countingQueue{}
		h, err := New(Config{Secret: []byte(testSecret), BotLogin: testBot, Logger: discardLogger}, q, writerGitHub{})
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest(http.MethodPost, "/webhook", strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-GitHub-Event", event)
		req.Header.Set("X-GitHub-Delivery", "fuzz-1")
		valid := Signature([]byte(testSecret), body)
		sig := forged
		if signed {
			sig = valid
		}
		req.Header.Set("X-Hub-Signature-256", sig)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK, http.StatusAccepted, http.StatusBadRequest, http.StatusUnauthorized:
		default:
			t.Fatalf("status %d not documented for this input", rec.Code)
		}
		if sig != valid && (q.calls != 0 || rec.Code == http.StatusOK || rec.Code == http.StatusAccepted) {
			t.Fatalf("unsigned body got %d and %d queue calls", rec.Code, q.calls)
		}
	})
}
