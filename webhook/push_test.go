package webhook

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// push is a push of ref to after, as GitHub sends it to the app.
func push(t testing.TB, ref, after string, deleted bool) []byte {
	return fixturePayload(t, "push.json", func(m map[string]any) {
		m["ref"], m["after"], m["deleted"] = ref, after, deleted
	})
}

// Pushes that do not move the default branch start nothing and need no
// GitHub call; bad ones are 400.
func TestPushesThatDoNothing(t *testing.T) {
	e := newEnv(t)
	cases := map[string]struct {
		body []byte
		want int
		msg  string
	}{
		"tag":              {push(t, "refs/tags/v1", someSHA, false), http.StatusOK, "not a branch"},
		"deleted branch":   {push(t, "refs/heads/master", "0000000000000000000000000000000000000000", true), http.StatusOK, "not a branch that moved"},
		"other branch":     {push(t, "refs/heads/feature", someSHA, false), http.StatusOK, "not the default branch"},
		"agent branch":     {push(t, "refs/heads/agent/issue-7", someSHA, false), http.StatusOK, "not the default branch"},
		"bad after":        {push(t, "refs/heads/master", "nope", false), http.StatusBadRequest, "after"},
		"ref not a string": {fixturePayload(t, "push.json", func(m map[string]any) { m["ref"] = 5 }), http.StatusBadRequest, "malformed"},
		"no installation": {fixturePayload(t, "push.json", func(m map[string]any) {
			m["ref"], m["after"], m["deleted"] = "refs/heads/master", someSHA, false
			delete(m, "installation")
		}), http.StatusOK, "no installation"},
	}
	i := 0
	for name, tc := range cases {
		i++
		t.Run(name, func(t *testing.T) {
			rec := e.deliver("push", fmt.Sprintf("push-%d", i), tc.body)
			expectStatus(t, rec, tc.want)
			if !strings.Contains(rec.Body.String(), tc.msg) {
				t.Errorf("answer %q, want it to say %q", rec.Body.String(), tc.msg)
			}
		})
	}
	if n := len(e.tasks(tasks.QueueAgent)); n != 0 {
		t.Errorf("%d agent tasks, want none", n)
	}
}

// A push to the default branch starts at most jobs.MaxUpdatesPerPush
// updates of Patchwright's pull requests; the rest are deferred, not
// dropped, and its redelivery starts none of them twice. Each deferred
// one starts as a job of the repository ends.
func TestPushUpdatesAreBounded(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	n := jobs.MaxUpdatesPerPush + 2
	for i := 1; i <= n; i++ {
		branch := jobs.AgentBranch(i)
		e.gh.openPRs[branch], e.gh.pushed[branch] = 100+i, someSHA
		issue := tasks.Issue{InstallationID: testInstall, Owner: "Codertocat", Repo: "Hello-World", Number: i}
		// A writer's label approved the issue's text (the pin); that job
		// ended.
		id := fmt.Sprintf("label-%d", i)
		if _, err := e.queue.EnqueueSolve(ctx, tasks.SolveIssue{Issue: issue, DeliveryID: id, Requester: writerLogin, IssueHash: "pin"}); err != nil {
			t.Fatal(err)
		}
		if err := e.queue.Release(ctx, issue, id); err != nil {
			t.Fatal(err)
		}
	}
	updates := func() int {
		c := 0
		for _, ti := range e.tasks(tasks.QueueAgent) {
			if strings.HasPrefix(ti.ID, "rebase-") {
				c++
			}
		}
		return c
	}
	base := strings.Repeat("c", 40)
	rec := e.deliver("push", "push-bounded", push(t, "refs/heads/master", base, false))
	expectStatus(t, rec, http.StatusAccepted)
	if got := updates(); got != jobs.MaxUpdatesPerPush {
		t.Fatalf("%d updates enqueued, want %d (%s)", got, jobs.MaxUpdatesPerPush, rec.Body.String())
	}
	if !strings.Contains(rec.Body.String(), "2 deferred") {
		t.Errorf("answer %q does not say 2 were deferred", rec.Body.String())
	}
	e.deliver("push", "push-bounded", push(t, "refs/heads/master", base, false))
	if got := updates(); got != jobs.MaxUpdatesPerPush {
		t.Fatalf("after the redelivery %d updates, want still %d", got, jobs.MaxUpdatesPerPush)
	}
	repo := tasks.Issue{InstallationID: testInstall, Owner: "Codertocat", Repo: "Hello-World"}
	for want := jobs.MaxUpdatesPerPush + 1; want <= n+1; want++ {
		_, ok, err := e.queue.StartDeferredUpdate(ctx, repo)
		if err != nil {
			t.Fatal(err)
		}
		if got := updates(); ok != (want <= n) || got != min(want, n) {
			t.Fatalf("after a deferred start: %d updates (started %v), want %d", got, ok, min(want, n))
		}
	}
}
