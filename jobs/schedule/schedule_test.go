package schedule

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/patchwright/patchwright/agent/config"
	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/githubtest"
	"github.com/patchwright/patchwright/jobs/redistest"
	"github.com/patchwright/patchwright/jobs/tasks"
)

const testRedisDB = 12 // each package its own DB: packages' tests run in parallel

const agentYML = `review: off
schedules:
  - cron: "0 6 * * 1"
    title: Update the changelog
    body: |
      Add the week's merged pull requests to CHANGELOG.md.
`

// env is a scanner on real Redis and the real GitHub client, against the
// fake, with a clock the test moves.
type env struct {
	t    *testing.T
	fake *githubtest.Server
	app  *githubapi.App
	rdb  *redis.Client
	now  time.Time
	repo tasks.Issue
}

func newEnv(t *testing.T) *env {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	fake := githubtest.New(t, &key.PublicKey)
	fake.AddRepo(githubtest.Repo{Owner: "acme", Name: "widgets", DefaultBranch: "main", Installation: 3,
		Files: map[string]string{config.Path: agentYML}})
	fake.AddRepo(githubtest.Repo{Owner: "acme", Name: "plain", DefaultBranch: "main", Installation: 3})
	app, err := githubapi.NewApp(githubtest.AppID, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), fake.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, fake: fake, app: app, rdb: redistest.Client(t, testRedisDB),
		// A Wednesday: the period is Monday 30 November, 06:00 UTC.
		now:  time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC),
		repo: tasks.Issue{InstallationID: 3, Owner: "acme", Repo: "widgets"}}
}

// scanner is one scanning process: its own queue client, the shared
// Redis and GitHub.
func (e *env) scanner() *Scanner {
	return &Scanner{GitHub: e.app, Queue: jobs.NewQueue(e.rdb), Redis: e.rdb, Now: func() time.Time { return e.now }}
}

func (e *env) scan() []Outcome {
	e.t.Helper()
	out, err := e.scanner().Scan(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

// solves are the solve tasks enqueued.
func (e *env) solves() []tasks.SolveIssue {
	e.t.Helper()
	insp := asynq.NewInspectorFromRedisClient(e.rdb)
	pending, err := insp.ListPendingTasks(tasks.QueueAgent)
	if err != nil && !strings.Contains(err.Error(), "not found") {
		e.t.Fatal(err)
	}
	var out []tasks.SolveIssue
	for _, ti := range pending {
		var p tasks.SolveIssue
		if err := json.Unmarshal(ti.Payload, &p); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// A schedule found due twice in one period (two scanners, or one that
// scans again) opens one issue and enqueues one run of it, pinned to the
// text it was opened with; the next period opens the next.
func TestScheduleFiresOncePerPeriod(t *testing.T) {
	e := newEnv(t)
	first := e.scan()
	if len(first) != 1 || !first[0].Started || first[0].Issue != 1 || !first[0].Period.Equal(time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)) {
		t.Fatalf("first scan = %+v, want issue 1 started for Monday's period", first)
	}
	e.now = e.now.Add(time.Hour)
	if again := e.scan(); len(again) != 0 {
		t.Fatalf("second scan in the period = %+v, want nothing", again)
	}
	issue, ok := e.fake.Issue("acme", "widgets", 1)
	if !ok || issue.Title != "Update the changelog" || !strings.Contains(issue.Body, "Add the week's merged pull requests") {
		t.Fatalf("issue 1 = %+v", issue)
	}
	if _, two := e.fake.Issue("acme", "widgets", 2); two {
		t.Fatal("a second issue was opened in one period")
	}
	s := e.solves()
	if len(s) != 1 || s[0].Number != 1 || s[0].Trigger != tasks.TriggerSchedule || s[0].IssueHash != tasks.IssueHash(issue.Title, issue.Body) {
		t.Fatalf("solves = %+v, want one pinned run of issue 1", s)
	}
	e.now = e.now.Add(7 * 24 * time.Hour)
	if next := e.scan(); len(next) != 1 || next[0].Issue != 2 || !next[0].Started {
		t.Fatalf("next period = %+v, want issue 2", next)
	}
}

// While the last scheduled run's pull request is open, the next period
// opens nothing and says so on the last run's issue, once; once the pull
// request is closed the period after runs again.
func TestScheduleSkippedWhileItsPullRequestIsOpen(t *testing.T) {
	e := newEnv(t)
	if out := e.scan(); len(out) != 1 || out[0].Issue != 1 {
		t.Fatalf("first scan = %+v", out)
	}
	pr, err := e.app.CreatePullRequest(context.Background(), e.repo, githubapi.NewPullRequest{Title: "Update the changelog", Head: jobs.AgentBranch(1), Base: "main"})
	if err != nil {
		t.Fatal(err)
	}
	e.now = e.now.Add(7 * 24 * time.Hour)
	out := e.scan()
	if len(out) != 1 || !out[0].Skipped || out[0].Started || out[0].Issue != 1 || out[0].PR != pr.Number {
		t.Fatalf("scan with the pull request open = %+v, want skipped on issue 1", out)
	}
	e.scan()
	cs := e.fake.Comments("acme", "widgets", 1)
	if len(cs) != 1 || !strings.Contains(cs[0].Body, "was skipped") || !strings.Contains(cs[0].Body, "#"+strconv.Itoa(pr.Number)) {
		t.Fatalf("comments on issue 1 = %+v, want one saying the period was skipped", cs)
	}
	if _, opened := e.fake.Issue("acme", "widgets", pr.Number+1); opened || len(e.solves()) != 1 {
		t.Fatalf("a run started while the pull request was open (%d solves)", len(e.solves()))
	}
	e.fake.SetPullState("acme", "widgets", pr.Number, "closed")
	e.now = e.now.Add(7 * 24 * time.Hour)
	if out := e.scan(); len(out) != 1 || !out[0].Started {
		t.Fatalf("scan after the pull request closed = %+v, want a run", out)
	}
}

// A GitHub refusal to open the issue gives the period back: the next scan
// opens it, and nothing was enqueued in between.
func TestScheduleFailureGivesThePeriodBack(t *testing.T) {
	e := newEnv(t)
	e.fake.Fail(githubtest.Fault{Method: http.MethodPost, Path: "/repos/acme/widgets/issues", Status: http.StatusUnprocessableEntity, Body: `{"message":"Validation Failed"}`})
	if _, err := e.scanner().Scan(context.Background()); err == nil {
		t.Fatal("scan with GitHub refusing the issue: no error")
	}
	if n := len(e.solves()); n != 0 {
		t.Fatalf("%d solves after the refusal, want 0", n)
	}
	if out := e.scan(); len(out) != 1 || !out[0].Started || out[0].Issue != 1 {
		t.Fatalf("scan after the refusal = %+v, want issue 1 started", out)
	}
}

// An issue GitHub created although its answer was lost (a 502 after it
// landed) is the period's issue: the next scan adopts it and opens no
// second one. A stranger's issue with the same text is not adopted.
func TestScheduleAdoptsTheIssueItOpened(t *testing.T) {
	e := newEnv(t)
	title, body := text(config.Schedule{Cron: "0 6 * * 1", Title: "Update the changelog",
		Body: "Add the week's merged pull requests to CHANGELOG.md.\n"}, time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC))
	e.fake.AddIssue(githubtest.Issue{Owner: "acme", Repo: "widgets", Number: 1, Title: title, Body: body, Author: "mallory"})
	e.fake.Fail(githubtest.Fault{Method: http.MethodPost, Path: "/repos/acme/widgets/issues", Status: http.StatusBadGateway, Landed: true})
	if _, err := e.scanner().Scan(context.Background()); err == nil {
		t.Fatal("scan with the create's answer lost: no error")
	}
	out := e.scan()
	if len(out) != 1 || !out[0].Started || out[0].Issue != 2 {
		t.Fatalf("scan after the lost answer = %+v, want issue 2 (the one that landed) started", out)
	}
	if _, three := e.fake.Issue("acme", "widgets", 3); three || len(e.solves()) != 1 {
		t.Fatalf("a second issue or run for one period: %d solves", len(e.solves()))
	}
}

// Of several workers ticking in one interval, one scans: the others read
// nothing from GitHub.
func TestOneScanPerInterval(t *testing.T) {
	e := newEnv(t)
	listings := func() int {
		n := 0
		for _, r := range e.fake.Requests() {
			if r.Method == http.MethodGet && r.Path == "/app/installations" {
				n++
			}
		}
		return n
	}
	if scanned, err := e.scanner().Tick(context.Background(), time.Minute); !scanned || err != nil {
		t.Fatalf("first tick: %v, %v; want a scan", scanned, err)
	}
	if scanned, err := e.scanner().Tick(context.Background(), time.Minute); scanned || err != nil {
		t.Fatalf("second tick in the interval: %v, %v; want none", scanned, err)
	}
	if n := listings(); n != 1 {
		t.Fatalf("%d installation listings, want 1", n)
	}
	if err := e.rdb.Del(context.Background(), scanKey).Err(); err != nil { // the interval ended
		t.Fatal(err)
	}
	if scanned, _ := e.scanner().Tick(context.Background(), time.Minute); !scanned || listings() != 2 {
		t.Fatal("the next interval did not scan")
	}
}

// A scanner that dies between claiming the period and opening its issue
// (here: stuck in the request, then killed) holds the period only for the
// claim's lease: another scan meanwhile opens nothing, one after the
// lease opens the issue, and the dead scanner's late failure does not
// give back the claim it no longer holds.
func TestScheduleClaimOfDeadScanner(t *testing.T) {
	e := newEnv(t)
	reached, release := make(chan struct{}), make(chan struct{})
	var freed sync.Once
	free := func() { freed.Do(func() { close(release) }) }
	t.Cleanup(free) // before the fake closes, which waits for its handlers
	e.fake.Fail(githubtest.Fault{Method: "POST", Path: "/repos/acme/widgets/issues", Status: http.StatusBadGateway,
		Before: func() { close(reached); <-release }})
	dead, kill := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = e.scanner().Scan(dead)
	}()
	<-reached
	if out := e.scan(); len(out) != 0 {
		t.Fatalf("a scan while the claim is held = %+v, want nothing", out)
	}
	e.now = e.now.Add(claimLease + time.Minute)
	out := e.scan()
	if len(out) != 1 || !out[0].Started || out[0].Issue != 1 {
		t.Fatalf("a scan after the lease = %+v, want issue 1 started", out)
	}
	kill()
	<-done
	free()
	if again := e.scan(); len(again) != 0 {
		t.Fatalf("a scan after the dead scanner failed = %+v, want nothing", again)
	}
	if _, two := e.fake.Issue("acme", "widgets", 2); two || len(e.solves()) != 1 {
		t.Fatalf("a second issue or run for one period: %d solves", len(e.solves()))
	}
}
