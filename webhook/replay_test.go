package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// A captured signed delivery sent again under a new X-GitHub-Delivery is a
// duplicate: 200, nothing enqueued, nothing replied.
func TestReplayUnderANewDeliveryIDIsADuplicate(t *testing.T) {
	e := newEnv(t)
	body := labeled(t, 7, writerLogin)
	expectStatus(t, e.deliverExact("issues", "d-1", body), http.StatusAccepted)
	// GitHub's redelivery keeps the delivery ID: the delivery-ID dedupe
	// answers it, as before.
	expectStatus(t, e.deliverExact("issues", "d-1", body), http.StatusOK)
	// Free the issue, so a second job could start if the replay got through.
	if _, err := e.queue.Cancel(context.Background(), tasks.Issue{InstallationID: testInstall, Owner: "Codertocat", Repo: "Hello-World", Number: 7}, "test"); err != nil {
		t.Fatal(err)
	}
	rec := e.deliverExact("issues", "d-replay", body)
	expectStatus(t, rec, http.StatusOK)
	if !strings.Contains(rec.Body.String(), "duplicate") {
		t.Errorf("replay answered %q, want a duplicate", rec.Body.String())
	}
	if n := len(e.tasks(tasks.QueueAgent)); n != 0 {
		t.Errorf("%d agent tasks after the replay, want 0 (the first was cancelled)", n)
	}
	if n := len(e.tasks(tasks.QueueReplies)); n != 0 {
		t.Errorf("%d replies enqueued for the replay", n)
	}
}

// A replayed issues.closed must not stop the job a later trigger started.
func TestReplayedCloseDoesNotStopALaterJob(t *testing.T) {
	e := newEnv(t)
	closed := issueEvent(t, "closed", "", 7)
	expectStatus(t, e.deliverExact("issues", "d-close", closed), http.StatusOK)
	expectStatus(t, e.deliver("issues", "d-2", labeled(t, 7, writerLogin)), http.StatusAccepted)
	expectStatus(t, e.deliverExact("issues", "d-close-again", closed), http.StatusOK)
	if id := e.active(7); id != "d-2" {
		t.Fatalf("after the replayed close the active job is %q, want d-2", id)
	}
}

// failingQueue fails its first solve enqueue, as Redis going away would.
type failingQueue struct {
	Queue
	failed bool
}

func (q *failingQueue) EnqueueSolve(ctx context.Context, p tasks.SolveIssue) (jobs.EnqueueResult, error) {
	if !q.failed {
		q.failed = true
		return jobs.EnqueueResult{}, errors.New("redis went away")
	}
	return q.Queue.EnqueueSolve(ctx, p)
}

// A delivery that failed before anything was enqueued claims nothing: its
// redelivery (same ID) is enqueued, and so would a delivery under another ID.
func TestRedeliveryAfterAFailureIsNotADuplicate(t *testing.T) {
	e := newEnv(t)
	h, err := New(Config{Secret: []byte(testSecret), BotLogin: testBot, Logger: testLogger(t), Meanings: e.queue},
		&failingQueue{Queue: e.queue}, githubapi.NewPermissionCache(e.app, 0))
	if err != nil {
		t.Fatal(err)
	}
	e.h = h
	body := labeled(t, 7, writerLogin)
	expectStatus(t, e.deliverExact("issues", "d-1", body), http.StatusServiceUnavailable)
	if keys, _ := e.rdb.Keys(context.Background(), jobs.KeyPrefix+"meaning:*").Result(); len(keys) != 0 {
		t.Fatalf("a failed delivery left its meaning claimed: %v", keys)
	}
	expectStatus(t, e.deliverExact("issues", "d-1", body), http.StatusAccepted)
	if n := len(e.tasks(tasks.QueueAgent)); n != 1 {
		t.Fatalf("%d agent tasks after the redelivery, want 1", n)
	}
}

// The meaning of every acting event: the same body has one key; bodies of
// two different occurrences (each identifying field changed) have two; a
// body that cannot be told apart, or an action that cannot act, has none.
func TestMeaningKeys(t *testing.T) {
	cases := []struct {
		event  string
		body   []byte
		fields [][2]string // object, field changed for another occurrence
	}{
		{"issues", labeled(t, 7, writerLogin), [][2]string{{"issue", "updated_at"}, {"issue", "id"}, {"label", "name"}, {"repository", "id"}}},
		{"issues", issueEvent(t, "closed", "", 7), [][2]string{{"issue", "updated_at"}, {"issue", "id"}}},
		{"issue_comment", fixturePayload(t, "issue_comment.created.json", nil), [][2]string{{"comment", "id"}, {"repository", "id"}}},
		{"pull_request", closedPR(t, func(map[string]any) {}), [][2]string{{"pull_request", "updated_at"}, {"pull_request", "closed_at"}, {"pull_request", "id"}}},
		{"pull_request_review", review(t, "changes_requested", "/agent retry", writerLogin), [][2]string{{"review", "id"}, {"review", "submitted_at"}}},
	}
	for _, c := range cases {
		key := meaningKey(c.event, c.body)
		if key == "" {
			t.Errorf("%s: no meaning key for %.80s", c.event, c.body)
			continue
		}
		if again := meaningKey(c.event, append([]byte(nil), c.body...)); again != key {
			t.Errorf("%s: the same body has two keys", c.event)
		}
		for _, f := range c.fields {
			other := editPayload(t, c.body, func(m map[string]any) { obj(m, f[0])[f[1]] = "another-" + f[1] })
			if meaningKey(c.event, other) == key {
				t.Errorf("%s: another %s.%s has the same key", c.event, f[0], f[1])
			}
		}
	}
	// An ignored action claims nothing; a body without the issue's ID
	// cannot be told from another one and is not deduplicated by meaning.
	if k := meaningKey("issues", issueEvent(t, "opened", "", 7)); k != "" {
		t.Errorf("issues.opened has a meaning key")
	}
	noID := editPayload(t, labeled(t, 7, writerLogin), func(m map[string]any) { delete(obj(m, "issue"), "id") })
	if k := meaningKey("issues", noID); k != "" {
		t.Errorf("a body without issue.id has a meaning key")
	}
	if k := meaningKey("ping", []byte(`{"zen":"x"}`)); k != "" {
		t.Errorf("ping has a meaning key")
	}
}

func editPayload(t *testing.T, body []byte, edit func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// countingHook counts the commands a client sends Redis.
type countingHook struct{ n atomic.Int64 }

func (c *countingHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *countingHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmd)
	}
}
func (c *countingHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.n.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

// A delivery that starts a job makes one Redis command: the replay check,
// the lock, the worked record and the task are one script. The audit
// log's append is one more round trip (XADD and XTRIM, pipelined).
func TestSolveDeliveryIsOneRedisCommand(t *testing.T) {
	e := newEnv(t)
	hook := &countingHook{}
	e.rdb.AddHook(hook)
	audit := e.h.cfg.Audit
	e.h.cfg.Audit = nil
	// The first loads the script and fills the permission cache.
	expectStatus(t, e.deliver("issues", "d-1", labeled(t, 7, writerLogin)), http.StatusAccepted)
	before := hook.n.Load()
	expectStatus(t, e.deliver("issues", "d-2", labeled(t, 8, writerLogin)), http.StatusAccepted)
	if n := hook.n.Load() - before; n != 1 {
		t.Errorf("%d Redis commands for a solve delivery, want 1", n)
	}
	e.h.cfg.Audit = audit
	before = hook.n.Load()
	expectStatus(t, e.deliver("issues", "d-3", labeled(t, 9, writerLogin)), http.StatusAccepted)
	if n := hook.n.Load() - before; n != 3 {
		t.Errorf("%d Redis commands for an audited solve delivery, want 3 (the script, then XADD and XTRIM)", n)
	}
}

// A refused trigger replayed under a new ID is a duplicate like any other:
// one refusal comment, not two.
func TestReplayedRefusalIsADuplicate(t *testing.T) {
	e := newEnv(t)
	body := labeled(t, 7, readerLogin)
	expectStatus(t, e.deliverExact("issues", "r-1", body), http.StatusOK)
	rec := e.deliverExact("issues", "r-replay", body)
	expectStatus(t, rec, http.StatusOK)
	if !strings.Contains(rec.Body.String(), "duplicate") {
		t.Errorf("replay answered %q, want a duplicate", rec.Body.String())
	}
	if n := len(e.tasks(tasks.QueueReplies)); n != 1 {
		t.Errorf("%d replies enqueued, want 1", n)
	}
}
