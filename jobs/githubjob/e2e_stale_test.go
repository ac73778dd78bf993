package githubjob_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/patchwright/patchwright/jobs/githubjob"
	"github.com/patchwright/patchwright/jobs/githubtest"
	"github.com/patchwright/patchwright/report/marker"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// fakeClock is the time GitHub's fake and the stale pass share.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// Two agent pull requests go quiet under stale_after_days: 10. Both are
// warned once; the one nobody touched is closed (branch deleted) a week
// after its warning; a person's comment after the warning keeps the
// other, and its quiet spell starts again from that comment. Passes that
// find nothing new do nothing, and stale_after_days: 0 stops it all.
func TestStalePullRequests(t *testing.T) {
	sandboxtest.EndToEnd(t)
	e := newE2E(t, append(fixGreeting(), fixGreeting()...)...)
	e.fake.AddInstallation(e2eInst, owner+"/"+repoName)
	cfg := "verify:\n  - name: greeting\n    run: grep -qx hello greeting.txt\n"
	e.pushMaster(t, "stale", map[string]string{".github/agent.yml": cfg + "stale_after_days: 10\n"})
	e.startWorker()
	for _, n := range []int{1, 2} {
		delivery := "delivery-stale-" + string(rune('0'+n))
		if code := e.label(n, delivery); code != http.StatusAccepted {
			t.Fatalf("label %d: %d, want 202", n, code)
		}
		if info := e.waitTask(delivery, asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted {
			t.Fatalf("solve %d ended %s: %s", n, info.State, info.LastErr)
		}
	}
	prs := map[int]int{} // issue -> pull request
	for _, p := range e.fake.Pulls(owner, repoName) {
		prs[int(p.Head[len("agent/issue-"):][0]-'0')] = p.Number
	}
	start := time.Now()
	clock := &fakeClock{now: start}
	e.fake.SetClock(clock.Now)
	stale := &githubjob.Stale{GitHub: e.app, Branches: &githubjob.Branches{GitHub: e.app}, Claims: e.queue, Now: clock.Now, Logger: e.log}
	pass := func(day int, wantWarned, wantClosed int) {
		t.Helper()
		clock.set(start.Add(time.Duration(day) * 24 * time.Hour))
		w, c, err := stale.Pass(context.Background())
		if err != nil || w != wantWarned || c != wantClosed {
			t.Fatalf("day %d: warned %d, closed %d, %v; want %d, %d", day, w, c, err, wantWarned, wantClosed)
		}
	}
	warnings := func(pr int) int {
		n := 0
		for _, c := range e.fake.Comments(owner, repoName, pr) {
			if c.Author == githubtest.BotLogin && strings.Contains(c.Body, marker.Stale(pr)) {
				n++
			}
		}
		return n
	}

	pass(5, 0, 0)
	// Two workers make the pass at once: each pull request is warned once.
	clock.set(start.Add(11 * 24 * time.Hour))
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, _, err := stale.Pass(context.Background())
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			total += w
			mu.Unlock()
		}()
	}
	wg.Wait()
	if total != 2 {
		t.Fatalf("two passes at once warned %d times, want 2 (one a pull request)", total)
	}
	pass(11, 0, 0) // the same pass again: nothing twice
	clock.set(start.Add(12 * 24 * time.Hour))
	e.fake.AddComment(owner, repoName, prs[2], "octocat", "Still wanted; I will look this week.")
	pass(17, 0, 0) // six days after the warning: not yet
	pass(18, 0, 1)
	pass(18, 0, 0)
	var kept githubtest.Pull
	for _, p := range e.fake.Pulls(owner, repoName) {
		switch p.Number {
		case prs[1]:
			if p.State != "closed" {
				t.Errorf("the untouched pull request is %s, want closed", p.State)
			}
		case prs[2]:
			kept = p
		}
	}
	if kept.State != "open" {
		t.Errorf("the pull request with a comment after its warning is %s, want open", kept.State)
	}
	if h := e.remote.Head(t, owner, repoName, "agent/issue-1"); h != "" {
		t.Errorf("the closed pull request's branch is still at %s", h)
	}
	if h := e.remote.Head(t, owner, repoName, "agent/issue-2"); h == "" {
		t.Error("the kept pull request's branch was deleted")
	}
	if warnings(prs[1]) != 1 || warnings(prs[2]) != 1 {
		t.Errorf("warnings: %d and %d, want one each", warnings(prs[1]), warnings(prs[2]))
	}
	// Ten quiet days after the comment: warned again.
	pass(21, 0, 0)
	pass(23, 1, 0)
	if warnings(prs[2]) != 2 {
		t.Errorf("the kept pull request has %d warnings, want 2", warnings(prs[2]))
	}
	// Off: nothing more, however long it waits.
	e.pushMaster(t, "stale off", map[string]string{".github/agent.yml": cfg + "stale_after_days: 0\n"})
	pass(60, 0, 0)
	for _, p := range e.fake.Pulls(owner, repoName) {
		if p.Number == prs[2] && p.State != "open" {
			t.Errorf("with stale_after_days: 0 the pull request is %s", p.State)
		}
	}
}
