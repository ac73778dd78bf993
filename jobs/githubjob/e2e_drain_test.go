package githubjob_test

import (
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/jobs/githubjob"
	"github.com/patchwright/patchwright/jobs/interrupt"
	"github.com/patchwright/patchwright/jobs/worker"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// busyTurns is a model that never finishes on its own within the grace
// period: n turns of a command each, after first (when set).
func busyTurns(first []pt.Turn, n int) []pt.Turn {
	turns := append([]pt.Turn(nil), first...)
	for i := range n {
		// Distinct commands: a repeated one would stop the loop first.
		turns = append(turns, call("run", fmt.Sprintf(`{"command":"echo step %d"}`, i)))
	}
	return append(turns, call("finish", `{"summary":"never reached"}`))
}

// drainMidJob starts a worker, labels issue 1, and once the model is in
// its second turn (the first one's tool call has run) shuts the worker
// down as SIGTERM does (asynq's Run calls Shutdown on it). Every model
// request from then on is slowed, so the scripted model keeps working
// well past the moment the interrupt is due. It returns once Shutdown
// has returned, with the number of model requests the run made.
func drainMidJob(t *testing.T, e *e2e, delivery string) int {
	t.Helper()
	mid := make(chan struct{})
	var once sync.Once
	e.gate.before = func(n int) {
		if n >= 2 {
			once.Do(func() { close(mid) })
			time.Sleep(200 * time.Millisecond)
		}
	}
	h := &worker.Handlers{Queue: e.queue, Pipeline: e.pipe, Commenter: e.app, Branches: &githubjob.Branches{GitHub: e.app}, Logger: e.log}
	// The interrupt comes 1 s into the drain; the other 59 s of the grace
	// period are for committing and pushing, far more than needed.
	srv := worker.NewServer(e.rdb, worker.Config{Concurrency: 1, ShutdownTimeout: time.Minute, InterruptMargin: 59 * time.Second, Logger: e.log})
	if err := srv.Start(h.Mux()); err != nil {
		t.Fatal(err)
	}
	if code := e.label(1, delivery); code != http.StatusAccepted {
		t.Fatalf("label: %d, want 202", code)
	}
	select {
	case <-mid:
	case <-time.After(5 * time.Minute):
		t.Fatal("the run never reached its second model turn")
	}
	srv.Shutdown()
	return len(e.model.Requests())
}

// SIGTERM mid-job: the model, which would go on for minutes, is stopped
// between steps when the interrupt margin starts; its partial change is
// committed and pushed as exactly one draft pull request that says it was
// interrupted and how to continue; the status comment says the same; and
// the task is completed, not run again by the next worker.
func TestDrainPushesInterruptedDraft(t *testing.T) {
	sandboxtest.EndToEnd(t)
	const total = 400
	e := newE2E(t, busyTurns([]pt.Turn{call("write_file", `{"path":"NOTES.md","content":"Half done.\n"}`)}, total)...)
	asked := drainMidJob(t, e, "delivery-drain-1")
	if asked >= total {
		t.Fatalf("the model was asked %d times: the run was not interrupted", asked)
	}
	info := e.waitTask("delivery-drain-1", asynq.TaskStateCompleted, asynq.TaskStateArchived, asynq.TaskStateRetry, asynq.TaskStatePending)
	if info.State != asynq.TaskStateCompleted || info.Retried != 0 {
		t.Fatalf("task %s after %d retries (%s), want completed at once: nothing runs twice", info.State, info.Retried, info.LastErr)
	}
	pulls := e.fake.Pulls(owner, repoName)
	if len(pulls) != 1 || !pulls[0].Draft {
		t.Fatalf("pull requests %+v, want one draft", pulls)
	}
	body := pulls[0].Body
	for _, want := range []string{"**Outcome: stopped**", "interrupted", "worker shutdown", "final checks were skipped", "/agent retry", "`NOTES.md`"} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q:\n%s", want, body)
		}
	}
	out, err := exec.Command("git", "--git-dir", e.remote.Dir(owner, repoName), "show", "agent/issue-1:NOTES.md").CombinedOutput()
	if err != nil || string(out) != "Half done.\n" {
		t.Errorf("agent/issue-1's NOTES.md: %q, %v; want the partial change", out, err)
	}
	st := e.statusComments(1)
	if len(st) != 1 || !strings.Contains(st[0].Body, "interrupted") || !strings.Contains(st[0].Body, "/agent retry") || !strings.Contains(st[0].Body, fmt.Sprintf("/pull/%d", pulls[0].Number)) {
		t.Fatalf("status comments %+v: want one, saying interrupted, linking the pull request", st)
	}

	// A worker started afterwards has nothing to run: the model is not
	// asked again.
	e.startWorker()
	e.waitTask("delivery-drain-1", asynq.TaskStateCompleted)
	if n := len(e.model.Requests()); n != asked {
		t.Errorf("%d model requests after the next worker started, want still %d", n, asked)
	}
}

// SIGTERM while a long command runs (a test suite, here a sleep far
// longer than the grace period): the interrupt cuts the command short, so
// the partial change is still pushed as one draft and the task completes;
// without the cut the job would outlive the grace, be cancelled and run
// again, with nothing pushed.
func TestDrainCutsALongCommand(t *testing.T) {
	sandboxtest.EndToEnd(t)
	e := newE2E(t,
		call("write_file", `{"path":"NOTES.md","content":"Half done.\n"}`),
		call("run", `{"command":"sleep 900"}`),
		call("finish", `{"summary":"never reached"}`))
	drainMidJob(t, e, "delivery-drain-3")
	info := e.waitTask("delivery-drain-3", asynq.TaskStateCompleted, asynq.TaskStateArchived, asynq.TaskStateRetry, asynq.TaskStatePending)
	if info.State != asynq.TaskStateCompleted || info.Retried != 0 {
		t.Fatalf("task %s after %d retries (%s), want completed at once", info.State, info.Retried, info.LastErr)
	}
	pulls := e.fake.Pulls(owner, repoName)
	if len(pulls) != 1 || !pulls[0].Draft || !strings.Contains(pulls[0].Body, "interrupted") || !strings.Contains(pulls[0].Body, "`NOTES.md`") {
		t.Fatalf("pull requests %+v, want one draft, interrupted, with NOTES.md", pulls)
	}
	if n := len(e.model.Requests()); n != 2 {
		t.Errorf("%d model requests, want 2 (the one that asked for the command, none after)", n)
	}
}

// SIGTERM mid-job before the model changed anything: nothing is pushed,
// the job goes back to the queue as the same try (no failure counted),
// and the status comment says it was handed back.
func TestDrainHandsBackJobWithoutChange(t *testing.T) {
	sandboxtest.EndToEnd(t)
	e := newE2E(t, busyTurns(nil, 400)...)
	drainMidJob(t, e, "delivery-drain-2")
	info := e.waitTask("delivery-drain-2", asynq.TaskStateRetry, asynq.TaskStatePending, asynq.TaskStateCompleted, asynq.TaskStateArchived)
	if (info.State != asynq.TaskStateRetry && info.State != asynq.TaskStatePending) || info.Retried != 0 || !strings.Contains(info.LastErr, interrupt.ErrHandedBack.Error()) {
		t.Fatalf("task %s after %d retries (%q), want back in the queue as the same try", info.State, info.Retried, info.LastErr)
	}
	if pulls := e.fake.Pulls(owner, repoName); len(pulls) != 0 {
		t.Fatalf("pull requests %+v, want none", pulls)
	}
	st := e.statusComments(1)
	if len(st) != 1 || !strings.Contains(st[0].Body, "handed back to the queue") {
		t.Fatalf("status comments %+v: want one saying the job was handed back", st)
	}
}
