package githubapi_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/githubtest"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// fixture reads a file of testdata/fixtures/github-api.
func fixture(t *testing.T, name string) string {
	return string(githubtest.Fixture(t, "github-api", name))
}

type env struct {
	fake   *githubtest.Server
	app    *githubapi.App
	sleeps *githubtest.Sleeps
	repo   tasks.Issue
}

func newEnv(t *testing.T) *env {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	fake := githubtest.New(t, &key.PublicKey)
	fake.AddRepo(githubtest.Repo{Owner: "acme", Name: "widgets", DefaultBranch: "main", CloneURL: "https://git.example/acme/widgets.git"})
	fake.AddIssue(githubtest.Issue{Owner: "acme", Repo: "widgets", Number: 7, Title: "Fix it", Body: "It is broken.", Author: "maria"})
	s := &githubtest.Sleeps{}
	app, err := githubapi.NewApp(githubtest.AppID, pemKey, fake.URL, &githubapi.RetryTransport{Sleep: s.Sleep})
	if err != nil {
		t.Fatal(err)
	}
	return &env{fake: fake, app: app, sleeps: s, repo: tasks.Issue{InstallationID: 11, Owner: "acme", Repo: "widgets", Number: 7}}
}

func TestBotUser(t *testing.T) {
	e := newEnv(t)
	u, err := e.app.Bot(context.Background(), e.repo)
	if err != nil {
		t.Fatal(err)
	}
	if u.Login != githubtest.BotLogin || u.ID != githubtest.BotUserID {
		t.Fatalf("bot user = %+v", u)
	}
	if want := fmt.Sprintf("%d+%s@users.noreply.github.com", githubtest.BotUserID, githubtest.BotLogin); u.Email() != want {
		t.Fatalf("email = %q, want %q", u.Email(), want)
	}
}

func TestRepoTokenIsScopedToTheRepository(t *testing.T) {
	e := newEnv(t)
	tok, err := e.app.RepoToken(context.Background(), e.repo)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range e.fake.Tokens() {
		if m.Value != tok {
			continue
		}
		if len(m.Repositories) != 1 || m.Repositories[0] != "widgets" {
			t.Errorf("token repositories = %v, want [widgets]", m.Repositories)
		}
		if len(m.Permissions) != 1 || m.Permissions["contents"] != "write" {
			t.Errorf("token permissions = %v, want contents: write only", m.Permissions)
		}
		if m.InstallationID != 11 {
			t.Errorf("installation = %d", m.InstallationID)
		}
		if !e.fake.ValidToken(tok, "acme", "widgets") || e.fake.ValidToken(tok, "acme", "other") {
			t.Error("token scope not enforced by the fake")
		}
		return
	}
	t.Fatalf("token %q was not minted by the fake", tok)
}

func TestCommentsPagesAndEdits(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for i := range 130 {
		e.fake.AddComment("acme", "widgets", 7, "someone", fmt.Sprintf("comment %d", i))
	}
	id, err := e.app.PostComment(ctx, e.repo, "mine")
	if err != nil {
		t.Fatal(err)
	}
	cs, err := e.app.Comments(ctx, e.repo)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 131 || cs[130].ID != id || cs[130].Author != githubtest.BotLogin {
		t.Fatalf("got %d comments, last %+v", len(cs), cs[len(cs)-1])
	}
	if err := e.app.EditComment(ctx, e.repo, id, "edited"); err != nil {
		t.Fatal(err)
	}
	got := e.fake.Comments("acme", "widgets", 7)
	if last := got[len(got)-1]; last.Body != "edited" || last.Edits != 1 {
		t.Fatalf("after edit: %+v", last)
	}
	// Someone else's comment cannot be edited by the app.
	if err := e.app.EditComment(ctx, e.repo, cs[0].ID, "x"); err == nil {
		t.Fatal("editing another user's comment succeeded")
	}
	// An edit is held to GitHub's length limit like a new comment.
	if err := e.app.EditComment(ctx, e.repo, id, strings.Repeat("x", 65537)); err == nil {
		t.Fatal("an edit over 65536 characters was accepted")
	}
}

func TestReactionIsIdempotent(t *testing.T) {
	e := newEnv(t)
	for range 2 {
		if err := e.app.AddReaction(context.Background(), e.repo, "eyes"); err != nil {
			t.Fatal(err)
		}
	}
	if r := e.fake.Reactions("acme", "widgets", 7); len(r) != 1 || r[0].Content != "eyes" {
		t.Fatalf("reactions = %+v", r)
	}
	if err := e.app.AddReaction(context.Background(), e.repo, "nonsense"); err == nil {
		t.Fatal("invalid reaction accepted")
	}
}

// A reaction to a comment is kept once, on that comment; a comment the
// repository does not have is refused.
func TestCommentReaction(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	id := e.fake.AddComment("acme", "widgets", 7, "stranger", "/agent retry")
	for range 2 {
		if err := e.app.AddCommentReaction(ctx, e.repo, id, "-1"); err != nil {
			t.Fatal(err)
		}
	}
	if r := e.fake.Reactions("acme", "widgets", 7); len(r) != 1 || r[0].Comment != id || r[0].Content != "-1" {
		t.Fatalf("reactions = %+v", r)
	}
	if err := e.app.AddCommentReaction(ctx, e.repo, id+1000, "-1"); err == nil {
		t.Fatal("a reaction to a missing comment succeeded")
	}
}

func TestPullRequests(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if _, ok, err := e.app.FindPullRequest(ctx, e.repo, "agent/issue-7"); err != nil || ok {
		t.Fatalf("find before create: ok=%v err=%v", ok, err)
	}
	np := githubapi.NewPullRequest{Title: "Fix it", Head: "agent/issue-7", Base: "main", Body: "body", Draft: true}
	pr, err := e.app.CreatePullRequest(ctx, e.repo, np)
	if err != nil {
		t.Fatal(err)
	}
	if !pr.Draft || pr.HeadRef != "agent/issue-7" || pr.URL == "" {
		t.Fatalf("created %+v", pr)
	}
	_, err = e.app.CreatePullRequest(ctx, e.repo, np)
	if !errors.Is(err, githubapi.ErrPullRequestExists) {
		t.Fatalf("second create: %v, want ErrPullRequestExists", err)
	}
	found, ok, err := e.app.FindPullRequest(ctx, e.repo, "agent/issue-7")
	if err != nil || !ok || found.Number != pr.Number {
		t.Fatalf("find = %+v %v %v", found, ok, err)
	}
	prIssue := e.repo
	prIssue.Number = pr.Number
	if err := e.app.EditPullRequest(ctx, prIssue, "Fix it (2)", "body 2"); err != nil {
		t.Fatal(err)
	}
	got, err := e.app.GetPullRequest(ctx, prIssue)
	if err != nil || got.Body != "body 2" || got.Title != "Fix it (2)" {
		t.Fatalf("get after edit = %+v, %v", got, err)
	}
	if n := len(e.fake.Pulls("acme", "widgets")); n != 1 {
		t.Fatalf("%d pull requests", n)
	}

	// The draft state changes through GraphQL, by the node ID REST gave.
	if got.NodeID == "" {
		t.Fatal("pull request has no node ID")
	}
	for _, draft := range []bool{false, true} {
		if err := e.app.SetDraft(ctx, prIssue, got.NodeID, draft); err != nil {
			t.Fatal(err)
		}
		if p := e.fake.Pulls("acme", "widgets"); p[0].Draft != draft {
			t.Fatalf("after SetDraft(%v): draft=%v", draft, p[0].Draft)
		}
	}
	if err := e.app.SetDraft(ctx, prIssue, "PR_nonsense", false); err == nil {
		t.Fatal("SetDraft on an unknown node succeeded")
	}
}

func TestReviewCommentsSkipOutdatedAndResolved(t *testing.T) {
	e := newEnv(t)
	e.fake.AddReviewComment("acme", "widgets", 8, "rev", "a.go", 3, "rename this", false)
	e.fake.AddReviewComment("acme", "widgets", 8, "rev", "b.go", 9, "old remark", true)
	// Four open threads and a resolved one, last: it is found only if the
	// GraphQL lookup pages (the fake answers two threads a page).
	for i := range 4 {
		e.fake.AddReviewComment("acme", "widgets", 8, "rev", "c.go", i+1, "open remark", false)
	}
	done := e.fake.AddReviewComment("acme", "widgets", 8, "rev", "d.go", 5, "fixed already", false)
	e.fake.ResolveThread(done)
	e.fake.AddReviewComment("acme", "widgets", 9, "rev", "a.go", 1, "another pull request", false)
	pr := e.repo
	pr.Number = 8
	cs, err := e.app.ReviewComments(context.Background(), pr)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 5 || cs[0].Path != "a.go" || cs[0].Line != 3 || cs[0].Body != "rename this" {
		t.Fatalf("review comments = %+v", cs)
	}
	for _, c := range cs {
		if c.Path != "a.go" && c.Path != "c.go" {
			t.Errorf("comment on %s kept: outdated, resolved or another pull request's", c.Path)
		}
	}
}

// A server without GraphQL costs the resolved-thread filter, not the list.
func TestReviewCommentsWithoutGraphQL(t *testing.T) {
	e := newEnv(t)
	e.fake.Fail(githubtest.Fault{Method: http.MethodPost, Path: "/graphql", Status: http.StatusNotFound, Body: `{"message":"Not Found"}`})
	e.fake.AddReviewComment("acme", "widgets", 8, "rev", "a.go", 3, "rename this", false)
	e.fake.ResolveThread(e.fake.AddReviewComment("acme", "widgets", 8, "rev", "d.go", 5, "fixed already", false))
	e.fake.AddReviewComment("acme", "widgets", 8, "rev", "b.go", 9, "old remark", true)
	pr := e.repo
	pr.Number = 8
	cs, err := e.app.ReviewComments(context.Background(), pr)
	if !errors.Is(err, githubapi.ErrThreadsUnknown) {
		t.Fatalf("error %v, want one wrapping ErrThreadsUnknown", err)
	}
	if len(cs) != 2 || cs[0].Path != "a.go" || cs[1].Path != "d.go" {
		t.Fatalf("review comments = %+v, want the two that are not outdated", cs)
	}
}

func TestPutCheckRunBatchesAnnotations(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	sha := strings.Repeat("ab", 20)
	var anns []githubapi.Annotation
	for i := range 120 {
		anns = append(anns, githubapi.Annotation{Path: "a.go", StartLine: i + 1, EndLine: i + 1, Level: "failure", Message: "bad"})
	}
	run := githubapi.CheckRun{Name: "Patchwright / test", HeadSHA: sha,
		Conclusion: "failure", Title: "1 failed", Summary: "s",
		Annotations: [][]githubapi.Annotation{anns[:50], anns[50:100], anns[100:]},
	}
	id, err := e.app.PutCheckRun(ctx, e.repo, 0, run)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := e.app.CheckRunIDs(ctx, e.repo, sha, run.Name)
	if err != nil || len(ids) != 1 || ids[0] != id {
		t.Fatalf("ids = %v, %v", ids, err)
	}
	got := e.fake.CheckRuns("acme", "widgets", sha)
	if len(got) != 1 || got[0].Annotations != 120 || got[0].Writes != 3 || got[0].Conclusion != "failure" || got[0].Status != "completed" {
		t.Fatalf("check runs = %+v", got)
	}
	// An update of the same run (a publish done again) keeps one run and
	// does not append the annotations a second time.
	run.Title = "1 failed, again"
	if _, err := e.app.PutCheckRun(ctx, e.repo, id, run); err != nil {
		t.Fatal(err)
	}
	got = e.fake.CheckRuns("acme", "widgets", sha)
	if len(got) != 1 || got[0].Annotations != 120 || got[0].Title != "1 failed, again" {
		t.Fatalf("after an update with the same annotations = %+v", got)
	}
	run.Conclusion, run.Title, run.Summary, run.Annotations = "success", "passed", "s", nil
	if _, err := e.app.PutCheckRun(ctx, e.repo, id, run); err != nil {
		t.Fatal(err)
	}
	got = e.fake.CheckRuns("acme", "widgets", sha)
	if len(got) != 1 || got[0].Conclusion != "success" {
		t.Fatalf("after update = %+v", got)
	}
	if ids, _ := e.app.CheckRunIDs(ctx, e.repo, sha, "other"); len(ids) != 0 {
		t.Fatalf("other name found %v", ids)
	}
}

func TestSecondaryRateLimitIsRetried(t *testing.T) {
	e := newEnv(t)
	body := fixture(t, "secondary-rate-limit.403.body.json")
	// With Retry-After: its value.
	e.fake.Fail(githubtest.Fault{Method: http.MethodPost, Path: "/repos/acme/widgets/issues/7/comments", Status: 429, Body: body,
		Header: http.Header{"Retry-After": {"7"}}})
	// Without Retry-After (as in the recorded headers): at least a minute,
	// and at least twice the last wait; then twice that.
	e.fake.Fail(githubtest.Fault{Method: http.MethodPost, Path: "/repos/acme/widgets/issues/7/comments", Status: 403, Body: body})
	e.fake.Fail(githubtest.SecondaryRateLimit(http.MethodPost, "/repos/acme/widgets/issues/7/comments", 1))
	if _, err := e.app.PostComment(context.Background(), e.repo, "hello"); err != nil {
		t.Fatal(err)
	}
	if got := e.fake.Comments("acme", "widgets", 7); len(got) != 1 || got[0].Body != "hello" {
		t.Fatalf("comments = %+v (the retried POST must carry its body)", got)
	}
	want := []time.Duration{7 * time.Second, githubapi.SecondaryLimitWait, 2 * githubapi.SecondaryLimitWait}
	if w := e.sleeps.All(); fmt.Sprint(w) != fmt.Sprint(want) {
		t.Fatalf("waits = %v, want %v", w, want)
	}
}

// Repeated secondary limits back off exponentially up to MaxWait.
func TestSecondaryRateLimitsBackOffExponentially(t *testing.T) {
	e := newEnv(t)
	e.fake.Fail(githubtest.SecondaryRateLimit(http.MethodGet, "/repos/acme/widgets/issues/7", 4))
	if _, err := e.app.GetIssue(context.Background(), e.repo); err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, githubapi.DefaultMaxWait}
	if w := e.sleeps.All(); fmt.Sprint(w) != fmt.Sprint(want) {
		t.Fatalf("waits = %v, want %v", w, want)
	}
}

// newClockedApp is an App on fake whose transport's clock is now.
func newClockedApp(t *testing.T, now time.Time) (*githubtest.Server, *githubapi.App, *githubtest.Sleeps) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	fake := githubtest.New(t, &key.PublicKey)
	fake.AddRepo(githubtest.Repo{Owner: "acme", Name: "widgets", DefaultBranch: "main"})
	fake.AddIssue(githubtest.Issue{Owner: "acme", Repo: "widgets", Number: 7, Title: "Fix it", Body: "It is broken.", Author: "maria"})
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	s := &githubtest.Sleeps{}
	app, err := githubapi.NewApp(githubtest.AppID, pemKey, fake.URL, &githubapi.RetryTransport{Sleep: s.Sleep, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	return fake, app, s
}

// A primary limit, in either of GitHub's two statuses, waits until
// x-ratelimit-reset.
func TestPrimaryRateLimitFromGitHubWaitsForReset(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	for _, status := range []int{http.StatusForbidden, http.StatusTooManyRequests} {
		fake, app, s := newClockedApp(t, now)
		f := githubtest.PrimaryRateLimit(http.MethodGet, "/repos/acme/widgets/issues/7", now.Add(90*time.Second))
		f.Status = status
		fake.Fail(f)
		if _, err := app.GetIssue(context.Background(), tasks.Issue{InstallationID: 11, Owner: "acme", Repo: "widgets", Number: 7}); err != nil {
			t.Fatalf("%d: %v", status, err)
		}
		if w := s.All(); len(w) != 1 || w[0] != 91*time.Second {
			t.Fatalf("%d: waits = %v, want [1m31s]", status, w)
		}
	}
}

// A reset further off than MaxWait is not waited for: the error comes at
// once, as a rate limit, not a refusal.
func TestPrimaryRateLimitPastMaxWaitFailsAtOnce(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	fake, app, s := newClockedApp(t, now)
	fake.Fail(githubtest.PrimaryRateLimit(http.MethodGet, "/repos/acme/widgets/issues/7", now.Add(40*time.Minute)))
	_, err := app.GetIssue(context.Background(), tasks.Issue{InstallationID: 11, Owner: "acme", Repo: "widgets", Number: 7})
	if err == nil {
		t.Fatal("no error")
	}
	if _, ok := githubapi.AsRefusal(err); ok {
		t.Fatalf("a rate limit was taken for a refusal: %v", err)
	}
	if w := s.All(); len(w) != 0 {
		t.Fatalf("waits = %v, want none", w)
	}
}

// A comment POST answered 502 after GitHub stored it is not sent again;
// a GET after a 502 is.
func TestCommentPostIsNotResentAfterServerError(t *testing.T) {
	e := newEnv(t)
	e.fake.Fail(githubtest.Fault{Method: http.MethodPost, Path: "/repos/acme/widgets/issues/7/comments", Status: 502, Landed: true, Body: `{"message":"Server Error"}`})
	if _, err := e.app.PostComment(context.Background(), e.repo, "once"); err == nil {
		t.Fatal("the 502 was not reported")
	}
	if got := e.fake.Comments("acme", "widgets", 7); len(got) != 1 {
		t.Fatalf("%d comments, want the 1 that landed", len(got))
	}
	e.fake.Fail(githubtest.Fault{Method: http.MethodPost, Path: "/repos/acme/widgets/check-runs", Status: 504, Landed: true})
	run := githubapi.CheckRun{Name: "n", HeadSHA: strings.Repeat("ab", 20), Conclusion: "success", Title: "t", Summary: "s"}
	if _, err := e.app.PutCheckRun(context.Background(), e.repo, 0, run); err == nil {
		t.Fatal("the 504 was not reported")
	}
	if got := e.fake.CheckRuns("acme", "widgets", run.HeadSHA); len(got) != 1 {
		t.Fatalf("%d check runs, want the 1 that landed", len(got))
	}
	if w := e.sleeps.All(); len(w) != 0 {
		t.Fatalf("waits = %v, want none", w)
	}
}

// A permission the installation lacks is a Refusal naming it, from
// GitHub's X-Accepted-GitHub-Permissions header.
func TestMissingPermissionIsARefusal(t *testing.T) {
	e := newEnv(t)
	e.fake.SetInstallationPermissions(11, map[string]string{"contents": "write", "issues": "write", "checks": "write"})
	_, err := e.app.CreatePullRequest(context.Background(), e.repo, githubapi.NewPullRequest{Title: "t", Head: "agent/issue-7", Base: "main", Body: "b"})
	r, ok := githubapi.AsRefusal(err)
	if !ok || !r.Forbidden() || r.Lacks("?") != "pull_requests: write" || !strings.Contains(r.Message, "Resource not accessible by integration") {
		t.Fatalf("refusal %+v (%v) from %v", r, ok, err)
	}
	if w := e.sleeps.All(); len(w) != 0 {
		t.Fatalf("a denial was retried: waits %v", w)
	}
	// What the installation has still works.
	if _, err := e.app.PostComment(context.Background(), e.repo, "fine"); err != nil {
		t.Fatal(err)
	}
	if (&githubapi.Refusal{Status: 403}).Lacks("checks: write") != "checks: write" {
		t.Error("no header: the fallback is not named")
	}
}

// A repository without drafts refuses a draft pull request with 422, and
// the draft mutation with a GraphQL error.
func TestDraftRefusal(t *testing.T) {
	e := newEnv(t)
	e.fake.AddRepo(githubtest.Repo{Owner: "acme", Name: "widgets", DefaultBranch: "main", NoDrafts: true})
	ctx := context.Background()
	np := githubapi.NewPullRequest{Title: "t", Head: "agent/issue-7", Base: "main", Body: "b", Draft: true}
	if _, err := e.app.CreatePullRequest(ctx, e.repo, np); !errors.Is(err, githubapi.ErrDraftUnsupported) {
		t.Fatalf("draft on a repository without drafts: %v", err)
	}
	np.Draft = false
	pr, err := e.app.CreatePullRequest(ctx, e.repo, np)
	if err != nil {
		t.Fatal(err)
	}
	prIssue := e.repo
	prIssue.Number = pr.Number
	if err := e.app.SetDraft(ctx, prIssue, pr.NodeID, true); !errors.Is(err, githubapi.ErrDraftUnsupported) {
		t.Fatalf("convert to draft: %v", err)
	}
}

// GitHub's own 422s for a draft where drafts are not available, byte for
// byte as GitHub sends them (testdata/fixtures/github-api/SOURCES.md): the
// sentence in the errors list under "Validation Failed", and the older
// top-level message. Each is a refusal of the draft, not of pull
// requests, and "already exists" is read from the same list.
func TestDraftRefusalInGitHubsShape(t *testing.T) {
	for _, name := range []string{"draft-unsupported.post-pulls.422.json", "draft-unsupported.top-level.post-pulls.422.json"} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			ctx := context.Background()
			e.fake.Fail(githubtest.Fault{Method: http.MethodPost, Path: "/repos/acme/widgets/pulls", Status: http.StatusUnprocessableEntity, Body: fixture(t, name)})
			np := githubapi.NewPullRequest{Title: "t", Head: "agent/issue-7", Base: "main", Body: "b", Draft: true}
			_, err := e.app.CreatePullRequest(ctx, e.repo, np)
			if !errors.Is(err, githubapi.ErrDraftUnsupported) || errors.Is(err, githubapi.ErrPullRequestExists) {
				t.Fatalf("GitHub's draft refusal: %v, want ErrDraftUnsupported", err)
			}
			if r, ok := githubapi.AsRefusal(err); !ok || !strings.Contains(r.Message, "Draft pull requests are not supported") {
				t.Errorf("refusal %+v, %v: the refusal's sentence is not in it", r, ok)
			}
			// A ready pull request is then accepted.
			np.Draft = false
			if _, err := e.app.CreatePullRequest(ctx, e.repo, np); err != nil {
				t.Fatalf("ready pull request after the refusal: %v", err)
			}
			if _, err := e.app.CreatePullRequest(ctx, e.repo, np); !errors.Is(err, githubapi.ErrPullRequestExists) {
				t.Errorf("second pull request of the head: %v, want ErrPullRequestExists", err)
			}
		})
	}
}

// The fake's NoDrafts answer is GitHub's recorded one: the end-to-end
// tests that rely on it meet GitHub's real shape.
func TestFakeDraftRefusalIsGitHubs(t *testing.T) {
	e := newEnv(t)
	e.fake.AddRepo(githubtest.Repo{Owner: "acme", Name: "widgets", DefaultBranch: "main", NoDrafts: true})
	np := githubapi.NewPullRequest{Title: "t", Head: "agent/issue-7", Base: "main", Body: "b", Draft: true}
	_, err := e.app.CreatePullRequest(context.Background(), e.repo, np)
	var got *github.ErrorResponse
	if !errors.As(err, &got) {
		t.Fatalf("fake's draft refusal: %v, want a go-github ErrorResponse", err)
	}
	var want github.ErrorResponse
	if err := json.Unmarshal([]byte(fixture(t, "draft-unsupported.post-pulls.422.json")), &want); err != nil {
		t.Fatal(err)
	}
	if got.Message != want.Message || !reflect.DeepEqual(got.Errors, want.Errors) {
		t.Errorf("fake answered %q %+v, GitHub answers %q %+v", got.Message, got.Errors, want.Message, want.Errors)
	}
}

// Titles, bodies and check-run output over GitHub's limits are refused
// with 422 by the fake, as by GitHub; at the limits they pass.
func TestGitHubLimits(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	np := githubapi.NewPullRequest{Title: strings.Repeat("é", githubtest.MaxTitle+1), Head: "agent/issue-7", Base: "main", Body: "b"}
	if _, err := e.app.CreatePullRequest(ctx, e.repo, np); !refused(err, 422) {
		t.Errorf("title of %d characters: %v", githubtest.MaxTitle+1, err)
	}
	np.Title, np.Body = strings.Repeat("é", githubtest.MaxTitle), strings.Repeat("x", githubtest.MaxBody+1)
	if _, err := e.app.CreatePullRequest(ctx, e.repo, np); !refused(err, 422) {
		t.Errorf("body of %d characters: %v", githubtest.MaxBody+1, err)
	}
	np.Body = strings.Repeat("é", githubtest.MaxBody)
	if _, err := e.app.CreatePullRequest(ctx, e.repo, np); err != nil {
		t.Errorf("body of %d characters: %v", githubtest.MaxBody, err)
	}
	if _, err := e.app.PostComment(ctx, e.repo, strings.Repeat("x", githubtest.MaxBody+1)); !refused(err, 422) {
		t.Errorf("comment over the limit: %v", err)
	}
	sha := strings.Repeat("cd", 20)
	run := githubapi.CheckRun{Name: "n", HeadSHA: sha, Conclusion: "success", Title: "t", Summary: strings.Repeat("x", githubtest.MaxCheckRunText+1)}
	if _, err := e.app.PutCheckRun(ctx, e.repo, 0, run); !refused(err, 422) {
		t.Errorf("summary over the limit: %v", err)
	}
	run.Summary = "s"
	run.Annotations = [][]githubapi.Annotation{make([]githubapi.Annotation, githubtest.MaxAnnotations+1)}
	for i := range run.Annotations[0] {
		run.Annotations[0][i] = githubapi.Annotation{Path: "a", StartLine: 1, EndLine: 1, Level: "notice", Message: "m"}
	}
	if _, err := e.app.PutCheckRun(ctx, e.repo, 0, run); !refused(err, 422) {
		t.Errorf("%d annotations in one request: %v", githubtest.MaxAnnotations+1, err)
	}
}

func refused(err error, status int) bool {
	r, ok := githubapi.AsRefusal(err)
	return ok && r.Status == status
}

// Review-comment IDs past 2^31: the fake answers databaseId on them with
// GitHub's coercion error, so the lookup must use fullDatabaseId.
func TestReviewCommentIDsPast32Bits(t *testing.T) {
	e := newEnv(t)
	e.fake.SetNextID(3_000_000_000)
	open := e.fake.AddReviewComment("acme", "widgets", 8, "rev", "a.go", 3, "rename this", false)
	e.fake.ResolveThread(e.fake.AddReviewComment("acme", "widgets", 8, "rev", "d.go", 5, "fixed already", false))
	e.fake.AddReviewComment("acme", "widgets", 8, "rev", "b.go", 9, "old remark", true)
	pr := e.repo
	pr.Number = 8
	cs, err := e.app.ReviewComments(context.Background(), pr)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 || cs[0].ID != open || cs[0].ID <= 1<<31 {
		t.Fatalf("review comments = %+v, want only %d", cs, open)
	}
	// The fake does refuse the 32-bit field, as GitHub does.
	c, err := e.app.Installation(11)
	if err != nil {
		t.Fatal(err)
	}
	req, err := c.NewRequest(http.MethodPost, "graphql", map[string]any{"query": "query { reviewThreads { nodes { comments { nodes { databaseId } } } } }",
		"variables": map[string]any{"owner": "acme", "repo": "widgets", "number": 8}})
	if err != nil {
		t.Fatal(err)
	}
	var answer struct {
		Errors []struct{ Message string } `json:"errors"`
	}
	if _, err := c.Do(context.Background(), req, &answer); err != nil || len(answer.Errors) == 0 || !strings.Contains(answer.Errors[0].Message, "32-bit") {
		t.Fatalf("databaseId on a large ID: %+v, %v", answer, err)
	}
}

func TestReviews(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.fake.AddReview("acme", "widgets", 8, "rev", "CHANGES_REQUESTED", "Please add a test.")
	e.fake.AddReview("acme", "widgets", 8, "rev", "APPROVED", "")
	pr := e.repo
	pr.Number = 8
	rs, err := e.app.Reviews(ctx, pr)
	if err != nil || len(rs) != 1 || rs[0].State != "CHANGES_REQUESTED" || rs[0].Body != "Please add a test." || rs[0].Author != "rev" {
		t.Fatalf("reviews = %+v, %v (want the one with a body)", rs, err)
	}
}

func TestServerErrorsBackOffThenGiveUp(t *testing.T) {
	e := newEnv(t)
	e.fake.Fail(githubtest.Fault{Path: "/repos/acme/widgets/issues/7", Status: 502, Times: 100})
	_, err := e.app.GetIssue(context.Background(), e.repo)
	if err == nil || !strings.Contains(err.Error(), "502") {
		t.Fatalf("err = %v, want the 502 after the retries", err)
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}
	if w := e.sleeps.All(); fmt.Sprint(w) != fmt.Sprint(want) {
		t.Fatalf("waits = %v, want %v", w, want)
	}
}

func TestForbiddenWithoutRateLimitIsNotRetried(t *testing.T) {
	e := newEnv(t)
	e.fake.Fail(githubtest.Fault{Path: "/repos/acme/widgets/issues/7", Status: 403, Body: `{"message":"Resource not accessible by integration"}`})
	if _, err := e.app.GetIssue(context.Background(), e.repo); err == nil {
		t.Fatal("403 denial did not fail")
	}
	if w := e.sleeps.All(); len(w) != 0 {
		t.Fatalf("waits = %v, want none", w)
	}
}

func TestPrimaryRateLimitWaitsForReset(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	s := &githubtest.Sleeps{}
	rt := &githubapi.RetryTransport{Sleep: s.Sleep, Now: func() time.Time { return now },
		Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if len(s.All()) == 0 {
				h := http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {fmt.Sprint(now.Unix() + 30)}}
				return &http.Response{StatusCode: 403, Header: h, Body: http.NoBody, Request: r}, nil
			}
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})}
	req, _ := http.NewRequest(http.MethodGet, "http://x/", nil)
	resp, err := rt.RoundTrip(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("resp %v err %v", resp, err)
	}
	if w := s.All(); len(w) != 1 || w[0] != 31*time.Second {
		t.Fatalf("waits = %v, want [31s]", w)
	}
}

func TestRetryStopsWhenContextEnds(t *testing.T) {
	e := newEnv(t)
	e.fake.Fail(githubtest.Fault{Path: "/repos/acme/widgets/issues/7", Status: 503, Times: 100})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.app.GetIssue(ctx, e.repo); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// After a rate limit, the next request with the same token waits out the
// pause before it is sent at all.
func TestRateLimitPausesOtherRequests(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	fake, app, s := newClockedApp(t, now)
	fake.Fail(githubtest.SecondaryRateLimit(http.MethodGet, "/repos/acme/widgets/issues/7", 1))
	repo := tasks.Issue{InstallationID: 11, Owner: "acme", Repo: "widgets", Number: 7}
	if _, err := app.GetIssue(context.Background(), repo); err != nil {
		t.Fatal(err)
	}
	before := len(fake.Requests())
	if _, err := app.Repository(context.Background(), repo); err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{time.Minute, time.Minute}
	if w := s.All(); fmt.Sprint(w) != fmt.Sprint(want) {
		t.Fatalf("waits = %v, want %v (the retry's, then the other request's pause)", w, want)
	}
	if n := len(fake.Requests()) - before; n != 1 {
		t.Fatalf("%d requests for the second call, want 1 (sent once, after the pause)", n)
	}
}

// CommitsBetween lists the range's commits oldest first, each with its
// own files from the commit endpoint, the login when GitHub links one and
// the git name when not, and only the subject line; past MaxCommits the
// newest are kept and the rest counted.
func TestCommitsBetween(t *testing.T) {
	e := newEnv(t)
	var all []githubtest.GitCommit
	for i := range githubapi.MaxCommits + 2 {
		all = append(all, githubtest.GitCommit{SHA: fmt.Sprintf("%040d", i+1), Name: "Some Name", Message: fmt.Sprintf("commit %d\n\nbody", i+1), Files: []string{fmt.Sprintf("f%d.go", i+1)}})
	}
	all[len(all)-1].Login, all[len(all)-1].Files = "mallory", []string{".github/agent.yml", "b.go"}
	e.fake.AddRepo(githubtest.Repo{Owner: "acme", Name: "widgets", DefaultBranch: "main", Log: func(base, head string) []githubtest.GitCommit {
		if base == "" {
			for _, c := range all {
				if c.SHA == head {
					return []githubtest.GitCommit{c}
				}
			}
			return nil
		}
		return all
	}})
	cs, more, err := e.app.CommitsBetween(context.Background(), e.repo, "base", all[len(all)-1].SHA)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != githubapi.MaxCommits || more != 2 {
		t.Fatalf("%d commits and %d more, want %d and 2", len(cs), more, githubapi.MaxCommits)
	}
	if cs[0].SHA != all[2].SHA || cs[0].Author != "Some Name" || cs[0].Subject != "commit 3" || !reflect.DeepEqual(cs[0].Files, []string{"f3.go"}) {
		t.Errorf("oldest listed: %+v", cs[0])
	}
	if last := cs[len(cs)-1]; last.Author != "mallory" || !reflect.DeepEqual(last.Files, []string{".github/agent.yml", "b.go"}) {
		t.Errorf("newest: %+v", last)
	}
	e.fake.AddRepo(githubtest.Repo{Owner: "acme", Name: "widgets", DefaultBranch: "main"})
	if _, _, err := e.app.CommitsBetween(context.Background(), e.repo, "a", "b"); err == nil {
		t.Error("a 404 from compare is not an error")
	}
}
