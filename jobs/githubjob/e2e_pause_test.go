package githubjob_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// The kill switch end to end: an operator pauses the repository while a
// job runs (the model mid-conversation, a file already changed): the run
// stops at its next step and pushes its work as one draft that says the
// operator paused it. A trigger while paused is answered once, however
// often its job is put back, and runs on resume.
func TestPauseEndToEnd(t *testing.T) {
	sandboxtest.EndToEnd(t)
	ctx := context.Background()
	e := newE2E(t, busyTurns([]pt.Turn{call("write_file", `{"path":"NOTES.md","content":"Half done.\n"}`)}, 400)...)
	scope, err := jobs.ParseScope(0, owner+"/"+repoName)
	if err != nil {
		t.Fatal(err)
	}
	mid := make(chan struct{})
	var once sync.Once
	e.gate.before = func(n int) {
		if n >= 2 {
			// Slowed, so the scripted model is still at work when the
			// pause is read (as in drainMidJob).
			once.Do(func() { close(mid) })
			time.Sleep(200 * time.Millisecond)
		}
	}
	e.pipe.Audit = func(ctx context.Context, a jobs.AuditEntry) error { return e.queue.Audit(ctx, a, 0) }
	e.startWorker()
	if code := e.label(1, "delivery-pause-1"); code != http.StatusAccepted {
		t.Fatalf("label: %d, want 202", code)
	}
	<-mid
	if _, _, err := e.queue.Pause(ctx, scope, "ops"); err != nil {
		t.Fatal(err)
	}
	info := e.waitTask("delivery-pause-1", asynq.TaskStateCompleted, asynq.TaskStateArchived)
	if info.State != asynq.TaskStateCompleted {
		t.Fatalf("task %s (%s), want completed: the draft pushed", info.State, info.LastErr)
	}
	pulls := e.fake.Pulls(owner, repoName)
	if len(pulls) != 1 || !pulls[0].Draft {
		t.Fatalf("pull requests %+v, want one draft", pulls)
	}
	for _, want := range []string{"paused by the operator (repository codertocat/hello-world, by ops)", "`NOTES.md`", "/agent retry"} {
		if !strings.Contains(pulls[0].Body, want) {
			t.Errorf("body lacks %q:\n%s", want, pulls[0].Body)
		}
	}
	if strings.Contains(pulls[0].Body, "worker shutdown") {
		t.Errorf("body blames a worker shutdown:\n%s", pulls[0].Body)
	}
	var audited []jobs.AuditEntry
	if err := e.queue.AuditExport(ctx, jobs.AuditFilter{}, func(a jobs.AuditEntry) error { audited = append(audited, a); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(audited) != 1 || audited[0].Action != "pull request published" || audited[0].Actor != owner || audited[0].Issue != 1 || !strings.Contains(audited[0].Result, "stopped: ") {
		t.Errorf("audit log %+v, want the draft's publication, by %s", audited, owner)
	}

	// A trigger while paused: held (put back three times), answered once.
	asked := len(e.model.Requests())
	if code := e.label(2, "delivery-pause-2"); code != http.StatusAccepted {
		t.Fatalf("label 2: %d, want 202 (kept, held)", code)
	}
	answers := func() (n int) {
		for _, c := range e.fake.Comments(owner, repoName, 2) {
			if strings.Contains(c.Body, "paused by the operator") {
				n++
			}
		}
		return n
	}
	for answers() == 0 {
		time.Sleep(100 * time.Millisecond)
	}
	// Held three more times after the answer was posted.
	seen := map[time.Time]bool{}
	for len(seen) < 3 {
		info := e.waitTask("delivery-pause-2", asynq.TaskStateRetry)
		seen[info.LastFailedAt] = true
	}
	if n := answers(); n != 1 {
		t.Fatalf("%d pause answers on #2, want 1: %+v", n, e.fake.Comments(owner, repoName, 2))
	}
	if n := len(e.model.Requests()); n != asked {
		t.Fatalf("the model was asked %d times while paused", n-asked)
	}

	// Resume: the held job starts (the model is asked again); stop it.
	if ok, err := e.queue.Resume(ctx, scope); err != nil || !ok {
		t.Fatalf("resume = %v, %v", ok, err)
	}
	for len(e.model.Requests()) == asked {
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := e.queue.Cancel(ctx, tasks.Issue{InstallationID: e2eInst, Owner: owner, Repo: repoName, Number: 2}, "ops"); err != nil {
		t.Fatal(err)
	}
}
