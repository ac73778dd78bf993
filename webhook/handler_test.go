package webhook

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hibiken/asynq"
	"github.com/patchwright/patchwright/jobs/tasks"
)

func TestSignatureTestVector(t *testing.T) {
	var v struct {
		Secret, Payload string
		Header          string `json:"X-Hub-Signature-256"`
	}
	if err := json.Unmarshal(fixture(t, fixtureHooks, "signature-test-vector.json"), &v); err != nil {
		t.Fatal(err)
	}
	if got := Signature([]byte(v.Secret), []byte(v.Payload)); got != v.Header {
		t.Fatalf("Signature = %s, want %s", got, v.Header)
	}
	if err := verifySignature([]byte(v.Secret), []byte(v.Payload), v.Header, ""); err != nil {
		t.Fatalf("verify documented vector: %v", err)
	}
	if err := verifySignature([]byte(v.Secret), []byte(v.Payload+" "), v.Header, ""); err == nil {
		t.Fatal("verify accepted a changed body")
	}
}

func TestNewRefusesEmptySecret(t *testing.T) {
	if _, err := New(Config{BotLogin: testBot}, nil, nil); err == nil {
		t.Fatal("New accepted an empty secret")
	}
	if _, err := New(Config{Secret: []byte("s")}, nil, nil); err == nil {
		t.Fatal("New accepted an empty bot login")
	}
}

func TestLabelByWriterEnqueuesOneTask(t *testing.T) {
	e := newEnv(t)
	body := labeled(t, 7, writerLogin)
	expectStatus(t, e.deliver("issues", "d-1", body), http.StatusAccepted)
	expectStatus(t, e.deliver("issues", "d-1", body), http.StatusOK) // redelivery
	ts := e.tasks(tasks.QueueAgent)
	if len(ts) != 1 {
		t.Fatalf("%d agent tasks, want 1", len(ts))
	}
	var p tasks.SolveIssue
	if err := json.Unmarshal(ts[0].Payload, &p); err != nil {
		t.Fatal(err)
	}
	// The task pins the issue's text as the delivery carried it.
	pin := tasks.IssueHash("Spelling error in the README file", "It looks like you accidently spelled 'commit' with two 't's.")
	want := tasks.SolveIssue{Issue: tasks.Issue{InstallationID: testInstall, Owner: "Codertocat", Repo: "Hello-World", Number: 7}, DeliveryID: "d-1", Requester: writerLogin, IssueHash: pin}
	if p != want || ts[0].ID != "d-1" || ts[0].Type != tasks.TypeSolveIssue {
		t.Fatalf("task %s %s %+v, want d-1 %s %+v", ts[0].ID, ts[0].Type, p, tasks.TypeSolveIssue, want)
	}
	if ts[0].MaxRetry != tasks.AgentMaxRetry || ts[0].Timeout != tasks.AgentTimeout {
		t.Fatalf("task retry %d timeout %v, want %d %v", ts[0].MaxRetry, ts[0].Timeout, tasks.AgentMaxRetry, tasks.AgentTimeout)
	}
	if n := len(e.tasks(tasks.QueueReplies)); n != 0 {
		t.Fatalf("%d replies, want 0", n)
	}
}

func TestSecondLabelWhileActiveGetsReply(t *testing.T) {
	e := newEnv(t)
	expectStatus(t, e.deliver("issues", "d-1", labeled(t, 7, writerLogin)), http.StatusAccepted)
	second := labeled(t, 7, writerLogin)
	expectStatus(t, e.deliver("issues", "d-2", second), http.StatusOK)
	expectStatus(t, e.deliver("issues", "d-2", second), http.StatusOK) // redelivered: still one reply
	if n := len(e.tasks(tasks.QueueAgent)); n != 1 {
		t.Fatalf("%d agent tasks, want 1", n)
	}
	replies := e.tasks(tasks.QueueReplies)
	if len(replies) != 1 || !strings.Contains(string(replies[0].Payload), "already working") {
		t.Fatalf("replies = %v, want one saying it is already working", replies)
	}
	// Another issue of the same repository is not blocked.
	expectStatus(t, e.deliver("issues", "d-3", labeled(t, 8, writerLogin)), http.StatusAccepted)
}

func TestPermissionIsCached(t *testing.T) {
	e := newEnv(t)
	expectStatus(t, e.deliver("issues", "d-1", labeled(t, 1, writerLogin)), http.StatusAccepted)
	expectStatus(t, e.deliver("issues", "d-2", labeled(t, 2, writerLogin)), http.StatusAccepted)
	if n := e.gh.permissionHits(); n != 1 {
		t.Fatalf("permission endpoint called %d times, want 1 (cached)", n)
	}
}

func TestLabelRefusedOrIgnored(t *testing.T) {
	tests := map[string]struct {
		body    func(t *testing.T) []byte
		status  int
		replies int
	}{
		"reader (legacy response without role_name)": {body: func(t *testing.T) []byte { return labeled(t, 7, readerLogin) }, status: http.StatusOK, replies: 1},
		"not a collaborator":                         {body: func(t *testing.T) []byte { return labeled(t, 7, "stranger") }, status: http.StatusOK, replies: 1},
		"bot sender": {body: func(t *testing.T) []byte {
			return fixturePayload(t, "issues.labeled.json", func(m map[string]any) {
				obj(m, "label")["name"] = "agent"
				obj(m, "sender")["login"] = "dependabot[bot]"
				obj(m, "sender")["type"] = "Bot"
			})
		}, status: http.StatusOK},
		"other label": {body: func(t *testing.T) []byte { return fixturePayload(t, "issues.labeled.json", nil) }, status: http.StatusOK},
		"unlabeled":   {body: func(t *testing.T) []byte { return fixturePayload(t, "issues.unlabeled.json", nil) }, status: http.StatusOK},
		"opened":      {body: func(t *testing.T) []byte { return fixturePayload(t, "issues.opened.json", nil) }, status: http.StatusOK},
		"no installation": {body: func(t *testing.T) []byte {
			return fixturePayload(t, "issues.labeled.json", func(m map[string]any) {
				obj(m, "label")["name"] = "agent"
				delete(m, "installation")
			})
		}, status: http.StatusOK},
		"label is a string": {body: func(t *testing.T) []byte {
			return fixturePayload(t, "issues.labeled.json", func(m map[string]any) { m["label"] = "agent" })
		}, status: http.StatusBadRequest},
		"no issue number": {body: func(t *testing.T) []byte {
			return fixturePayload(t, "issues.labeled.json", func(m map[string]any) {
				obj(m, "label")["name"] = "agent"
				delete(obj(m, "issue"), "number")
			})
		}, status: http.StatusBadRequest},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			expectStatus(t, e.deliver("issues", "d-1", tc.body(t)), tc.status)
			if n := len(e.tasks(tasks.QueueAgent)); n != 0 {
				t.Fatalf("%d agent tasks, want 0", n)
			}
			if n := len(e.tasks(tasks.QueueReplies)); n != tc.replies {
				t.Fatalf("%d replies, want %d", n, tc.replies)
			}
		})
	}
}

// prComment is a comment with body by sender on pull request 12, opened by
// the app from agent/issue-7.
func prComment(t testing.TB, e *env, sender, body string) []byte {
	e.gh.mu.Lock()
	e.gh.heads[12] = "agent/issue-7"
	e.gh.mu.Unlock()
	return fixturePayload(t, "issue_comment.created.on-pull-request.json", func(m map[string]any) {
		obj(m, "issue")["number"] = 12
		obj(obj(m, "issue"), "user")["login"] = testBot
		obj(m, "comment")["body"] = body
		obj(m, "sender")["login"] = sender
	})
}

func TestRetryCommentOnPullRequest(t *testing.T) {
	e := newEnv(t)
	rec := e.deliver("issue_comment", "c-1", prComment(t, e, writerLogin, "Almost.\n/agent retry please also update the docs"))
	expectStatus(t, rec, http.StatusAccepted)
	ts := e.tasks(tasks.QueueAgent)
	if len(ts) != 1 || ts[0].Type != tasks.TypeRetryPR {
		t.Fatalf("tasks = %v, want one %s", ts, tasks.TypeRetryPR)
	}
	var p tasks.RetryPR
	if err := json.Unmarshal(ts[0].Payload, &p); err != nil {
		t.Fatal(err)
	}
	if p.Instructions != "please also update the docs" || p.Number != 7 || p.PR != 12 || p.Requester != writerLogin || p.InstallationID != testInstall {
		t.Fatalf("payload = %+v", p)
	}
	// A label on the issue while the retry is active is answered, not run.
	var pr map[string]any
	if err := json.Unmarshal(fixture(t, fixtureHooks, "issue_comment.created.on-pull-request.json"), &pr); err != nil {
		t.Fatal(err)
	}
	label := fixturePayload(t, "issues.labeled.json", func(m map[string]any) {
		obj(m, "label")["name"] = "agent"
		obj(m, "issue")["number"] = 7
		obj(m, "sender")["login"] = writerLogin
		m["repository"] = pr["repository"]
	})
	expectStatus(t, e.deliver("issues", "d-2", label), http.StatusOK)
	if n := len(e.tasks(tasks.QueueAgent)); n != 1 {
		t.Fatalf("%d agent tasks, want 1", n)
	}
}

func TestCommentsThatDoNothing(t *testing.T) {
	tests := map[string]struct {
		body    func(t *testing.T, e *env) []byte
		event   string
		replies int
	}{
		"reader":       {body: func(t *testing.T, e *env) []byte { return prComment(t, e, readerLogin, "/agent retry") }, replies: 1},
		"quoted":       {body: func(t *testing.T, e *env) []byte { return prComment(t, e, writerLogin, "> /agent retry\nno thanks") }},
		"no command":   {body: func(t *testing.T, e *env) []byte { return prComment(t, e, writerLogin, "LGTM") }},
		"help":         {body: func(t *testing.T, e *env) []byte { return prComment(t, e, readerLogin, "/agent help") }, replies: 1},
		"unknown":      {body: func(t *testing.T, e *env) []byte { return prComment(t, e, writerLogin, "/agent merge") }, replies: 1},
		"bot sender":   {body: func(t *testing.T, e *env) []byte { return prComment(t, e, "ci-bot[bot]", "/agent retry") }},
		"app itself":   {body: func(t *testing.T, e *env) []byte { return prComment(t, e, testBot, "/agent retry") }},
		"stop nothing": {body: func(t *testing.T, e *env) []byte { return prComment(t, e, writerLogin, "/agent stop") }, replies: 1},
		"not the app's pull request": {body: func(t *testing.T, e *env) []byte {
			return fixturePayload(t, "issue_comment.created.on-pull-request.json", func(m map[string]any) {
				obj(m, "comment")["body"] = "/agent retry"
				obj(m, "sender")["login"] = writerLogin
			})
		}},
		"other head branch": {body: func(t *testing.T, e *env) []byte {
			b := prComment(t, e, writerLogin, "/agent retry")
			e.gh.heads[12] = "feature"
			return b
		}},
		"closed pull request": {body: func(t *testing.T, e *env) []byte {
			b := prComment(t, e, writerLogin, "/agent retry")
			e.gh.closed[12] = true
			return b
		}, replies: 1},
		"edited": {body: func(t *testing.T, e *env) []byte {
			return fixturePayload(t, "issue_comment.edited.json", func(m map[string]any) {
				obj(m, "comment")["body"] = "/agent retry"
				obj(m, "sender")["login"] = writerLogin
			})
		}},
		"issue Patchwright never worked on": {body: func(t *testing.T, e *env) []byte {
			return fixturePayload(t, "issue_comment.created.json", func(m map[string]any) {
				obj(m, "comment")["body"] = "/agent retry"
				obj(m, "sender")["login"] = writerLogin
			})
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			rec := e.deliver("issue_comment", "c-1", tc.body(t, e))
			expectStatus(t, rec, http.StatusOK)
			if n := len(e.tasks(tasks.QueueAgent)); n != 0 {
				t.Fatalf("%d agent tasks, want 0", n)
			}
			if n := len(e.tasks(tasks.QueueReplies)); n != tc.replies {
				t.Fatalf("%d replies, want %d", n, tc.replies)
			}
		})
	}
}

// issueComment is a comment on issue 7, which carries the trigger label.
func issueComment(t testing.TB, sender, body string) []byte {
	return fixturePayload(t, "issue_comment.created.json", func(m map[string]any) {
		obj(m, "issue")["number"] = 7
		obj(m, "issue")["labels"] = []any{map[string]any{"name": "agent"}}
		obj(m, "comment")["body"] = body
		obj(m, "sender")["login"] = sender
	})
}

func TestRetryAndStopOnIssue(t *testing.T) {
	e := newEnv(t)
	expectStatus(t, e.deliver("issue_comment", "c-1", issueComment(t, writerLogin, "/agent retry use the v2 API")), http.StatusAccepted)
	ts := e.tasks(tasks.QueueAgent)
	if len(ts) != 1 || ts[0].Type != tasks.TypeSolveIssue || !strings.Contains(string(ts[0].Payload), "use the v2 API") {
		t.Fatalf("tasks = %v, want one solve task with the instructions", ts)
	}
	expectStatus(t, e.deliver("issue_comment", "c-2", issueComment(t, writerLogin, "/agent stop")), http.StatusOK)
	if n := len(e.tasks(tasks.QueueAgent)); n != 0 {
		t.Fatalf("%d agent tasks after stop, want 0", n)
	}
	// The stopped job does not block a new trigger.
	expectStatus(t, e.deliver("issues", "d-3", labeled(t, 7, writerLogin)), http.StatusAccepted)
	if n := len(e.tasks(tasks.QueueReplies)); n != 1 {
		t.Fatalf("%d replies, want 1 (the stop confirmation)", n)
	}
}

func TestRetryOnIssueWithOpenPullRequest(t *testing.T) {
	e := newEnv(t)
	e.gh.openPRs["agent/issue-7"] = 12
	expectStatus(t, e.deliver("issue_comment", "c-1", issueComment(t, writerLogin, "/agent retry")), http.StatusOK)
	if n := len(e.tasks(tasks.QueueAgent)); n != 0 {
		t.Fatalf("%d agent tasks, want 0", n)
	}
	replies := e.tasks(tasks.QueueReplies)
	if len(replies) != 1 || !strings.Contains(string(replies[0].Payload), "#12") {
		t.Fatalf("replies = %v, want one pointing to #12", replies)
	}
}

func TestBadRequests(t *testing.T) {
	good := func(t *testing.T) []byte { return labeled(t, 7, writerLogin) }
	sign := func(r *http.Request, b []byte) { r.Header.Set("X-Hub-Signature-256", Signature([]byte(testSecret), b)) }
	tests := map[string]struct {
		body   func(t *testing.T) []byte
		setup  func(r *http.Request, body []byte)
		method string
		status int
	}{
		"unsigned":        {body: good, setup: func(r *http.Request, b []byte) {}, status: http.StatusUnauthorized},
		"wrong signature": {body: good, setup: func(r *http.Request, b []byte) { r.Header.Set("X-Hub-Signature-256", Signature([]byte("other"), b)) }, status: http.StatusUnauthorized},
		"sha1 only": {body: good, setup: func(r *http.Request, b []byte) {
			r.Header.Set("X-Hub-Signature", "sha1=7d38cdd689735b008b3c702edd92eea23791c5f6")
		}, status: http.StatusUnauthorized},
		"signature no hex": {body: good, setup: func(r *http.Request, b []byte) {
			r.Header.Set("X-Hub-Signature-256", "sha256="+strings.Repeat("z", 64))
		}, status: http.StatusUnauthorized},
		"signature short": {body: good, setup: func(r *http.Request, b []byte) { r.Header.Set("X-Hub-Signature-256", "sha256=abcd") }, status: http.StatusUnauthorized},
		"signature of other body": {body: good, setup: func(r *http.Request, b []byte) {
			r.Header.Set("X-Hub-Signature-256", Signature([]byte(testSecret), append(b, ' ')))
		}, status: http.StatusUnauthorized},
		"malformed json": {body: func(t *testing.T) []byte { return []byte(`{"action":"labeled",`) }, setup: sign, status: http.StatusBadRequest},
		"form encoded": {body: func(t *testing.T) []byte { return []byte("payload=%7B%7D") }, setup: func(r *http.Request, b []byte) {
			sign(r, b)
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}, status: http.StatusBadRequest},
		"no content type": {body: good, setup: func(r *http.Request, b []byte) {
			sign(r, b)
			r.Header.Del("Content-Type")
		}, status: http.StatusBadRequest},
		"json with charset": {body: good, setup: func(r *http.Request, b []byte) {
			sign(r, b)
			r.Header.Set("Content-Type", "application/json; charset=utf-8")
		}, status: http.StatusAccepted},
		"no event header": {body: good, setup: func(r *http.Request, b []byte) {
			sign(r, b)
			r.Header.Del("X-GitHub-Event")
		}, status: http.StatusBadRequest},
		"no delivery header": {body: good, setup: func(r *http.Request, b []byte) {
			sign(r, b)
			r.Header.Del("X-GitHub-Delivery")
		}, status: http.StatusBadRequest},
		"delivery with slash": {body: good, setup: func(r *http.Request, b []byte) {
			sign(r, b)
			r.Header.Set("X-GitHub-Delivery", "a/b")
		}, status: http.StatusBadRequest},
		"unknown event": {body: good, setup: func(r *http.Request, b []byte) {
			sign(r, b)
			r.Header.Set("X-GitHub-Event", "deployment")
		}, status: http.StatusOK},
		"ping": {body: func(t *testing.T) []byte { return fixture(t, fixtureHooks, "ping.json") }, setup: func(r *http.Request, b []byte) {
			sign(r, b)
			r.Header.Set("X-GitHub-Event", "ping")
		}, status: http.StatusOK},
		"get":       {body: good, setup: sign, method: http.MethodGet, status: http.StatusMethodNotAllowed},
		"too large": {body: func(t *testing.T) []byte { return []byte(`{"pad":"` + strings.Repeat("x", MaxBodyBytes) + `"}`) }, setup: sign, status: http.StatusRequestEntityTooLarge},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			body := tc.body(t)
			method := tc.method
			if method == "" {
				method = http.MethodPost
			}
			req := httptest.NewRequest(method, "/webhook", strings.NewReader(string(body)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-GitHub-Event", "issues")
			req.Header.Set("X-GitHub-Delivery", "d-1")
			tc.setup(req, body)
			rec := httptest.NewRecorder()
			e.h.ServeHTTP(rec, req)
			expectStatus(t, rec, tc.status)
			want := 0
			if tc.status == http.StatusAccepted {
				want = 1
			}
			if n := len(e.tasks(tasks.QueueAgent)); n != want {
				t.Fatalf("%d agent tasks, want %d", n, want)
			}
		})
	}
}

// TestTooLargeWithoutContentLength streams the body, so only the
// MaxBytesReader can catch it.
func TestTooLargeWithoutContentLength(t *testing.T) {
	e := newEnv(t)
	body := strings.Repeat("x", MaxBodyBytes+1)
	req := httptest.NewRequest(http.MethodPost, "/webhook", struct{ *strings.Reader }{strings.NewReader(body)})
	req.ContentLength = -1
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", "issues")
	req.Header.Set("X-GitHub-Delivery", "d-1")
	req.Header.Set("X-Hub-Signature-256", Signature([]byte(testSecret), []byte(body)))
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	expectStatus(t, rec, http.StatusRequestEntityTooLarge)
}

var _ = asynq.SkipRetry

// A retry on the pull request while the issue's job is still running is
// queued behind it, and the reply says so; a second is answered, not
// queued too.
func TestRetryWhileJobFinishingIsQueued(t *testing.T) {
	e := newEnv(t)
	var pr map[string]any
	if err := json.Unmarshal(fixture(t, fixtureHooks, "issue_comment.created.on-pull-request.json"), &pr); err != nil {
		t.Fatal(err)
	}
	label := fixturePayload(t, "issues.labeled.json", func(m map[string]any) {
		obj(m, "label")["name"] = "agent"
		obj(m, "issue")["number"] = 7
		obj(m, "sender")["login"] = writerLogin
		m["repository"] = pr["repository"]
	})
	expectStatus(t, e.deliver("issues", "d-1", label), http.StatusAccepted)
	expectStatus(t, e.deliver("issue_comment", "c-1", prComment(t, e, writerLogin, "/agent retry")), http.StatusAccepted)
	expectStatus(t, e.deliver("issue_comment", "c-2", prComment(t, e, writerLogin, "/agent retry again")), http.StatusOK)
	if ts := e.tasks(tasks.QueueAgent); len(ts) != 1 || ts[0].Type != tasks.TypeSolveIssue {
		t.Fatalf("agent tasks %v, want only the running solve (the retry waits outside asynq)", ts)
	}
	replies := e.tasks(tasks.QueueReplies)
	if len(replies) != 2 {
		t.Fatalf("%d replies, want 2", len(replies))
	}
	var queued, busy int
	for _, r := range replies {
		switch body := string(r.Payload); {
		case strings.Contains(body, "this retry is queued"):
			queued++
		case strings.Contains(body, "another retry is queued"):
			busy++
		}
	}
	if queued != 1 || busy != 1 {
		t.Fatalf("replies %v: want one saying the retry is queued, one saying another is queued", replies)
	}
}

// A `/agent retry` on the issue while its job is still running waits
// behind that job, as one on the pull request does; a label then is still
// answered "already working".
func TestIssueRetryWhileJobRunsIsQueued(t *testing.T) {
	e := newEnv(t)
	expectStatus(t, e.deliver("issues", "d-1", labeled(t, 7, writerLogin)), http.StatusAccepted)
	retry := fixturePayload(t, "issue_comment.created.json", func(m map[string]any) {
		obj(m, "issue")["number"] = 7
		obj(m, "issue")["labels"] = []any{map[string]any{"name": "agent"}}
		obj(m, "comment")["body"] = "/agent retry use the v2 client"
		obj(m, "sender")["login"] = writerLogin
	})
	expectStatus(t, e.deliver("issue_comment", "c-1", retry), http.StatusAccepted)
	if ts := e.tasks(tasks.QueueAgent); len(ts) != 1 {
		t.Fatalf("agent tasks %v, want only the running solve (the retry waits outside asynq)", ts)
	}
	replies := e.tasks(tasks.QueueReplies)
	if len(replies) != 1 || !strings.Contains(string(replies[0].Payload), "this retry is queued") {
		t.Fatalf("replies %v, want one saying the retry is queued", replies)
	}
	// The running job ends: the retry is enqueued in its place.
	issue := tasks.Issue{InstallationID: testInstall, Owner: "Codertocat", Repo: "Hello-World", Number: 7}
	if err := e.queue.Release(t.Context(), issue, "d-1"); err != nil {
		t.Fatal(err)
	}
	if holder, err := e.queue.Active(t.Context(), issue); err != nil || holder != "c-1" {
		t.Fatalf("lock after the job ended: %q %v, want the retry c-1", holder, err)
	}
}
