package payload

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-github/v62/github"

	"github.com/patchwright/patchwright/jobs/githubtest"
)

// fixture reads a webhook payload of testdata/fixtures.
func fixture(t testing.TB, name string) []byte {
	return githubtest.Fixture(t, "github-webhooks", name)
}

// withInstallation adds the installation the app's deliveries carry.
func withInstallation(t testing.TB, body []byte) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	m["installation"] = map[string]any{"id": 4242}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The fields must read as go-github reads them from real payloads.
func TestParseIssuesMatchesGoGitHub(t *testing.T) {
	for _, name := range []string{"issues.labeled.json", "issues.unlabeled.json", "issues.opened.json"} {
		body := withInstallation(t, fixture(t, name))
		got, err := ParseIssues(body)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var ev github.IssuesEvent
		if err := json.Unmarshal(body, &ev); err != nil {
			t.Fatal(err)
		}
		want := Issues{
			Action: ev.GetAction(),
			Label:  ev.GetLabel().GetName(),
			Issue:  Issue{Number: ev.GetIssue().GetNumber(), Title: ev.GetIssue().GetTitle(), Body: ev.GetIssue().GetBody()},
			Repo:   Repo{Owner: ev.GetRepo().GetOwner().GetLogin(), Name: ev.GetRepo().GetName()},
			Sender: User{Login: ev.GetSender().GetLogin(), Type: ev.GetSender().GetType()},

			Installation: ev.GetInstallation().GetID(),
		}
		if !equal(got, want) || got.Installation != 4242 || got.Issue.Number == 0 || got.Repo.Owner == "" {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got, want)
		}
	}
}

func TestParseIssueCommentMatchesGoGitHub(t *testing.T) {
	for _, name := range []string{"issue_comment.created.json", "issue_comment.created.on-pull-request.json", "issue_comment.created.with-installation.json", "issue_comment.edited.json"} {
		body := withInstallation(t, fixture(t, name))
		got, err := ParseIssueComment(body)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var ev github.IssueCommentEvent
		if err := json.Unmarshal(body, &ev); err != nil {
			t.Fatal(err)
		}
		gi := ev.GetIssue()
		want := IssueComment{
			Action:    ev.GetAction(),
			Body:      ev.GetComment().GetBody(),
			CommentID: ev.GetComment().GetID(),
			Issue: Issue{
				Number:      gi.GetNumber(),
				Author:      gi.GetUser().GetLogin(),
				PullRequest: gi.IsPullRequest(),
				Title:       gi.GetTitle(),
				Body:        gi.GetBody(),
			},
			Repo:         Repo{Owner: ev.GetRepo().GetOwner().GetLogin(), Name: ev.GetRepo().GetName()},
			Sender:       User{Login: ev.GetSender().GetLogin(), Type: ev.GetSender().GetType()},
			Installation: ev.GetInstallation().GetID(),
		}
		for _, l := range gi.Labels {
			want.Issue.Labels = append(want.Issue.Labels, l.GetName())
		}
		if !equal(got, want) || got.Body == "" {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got, want)
		}
	}
}

func TestParsePullRequestMatchesGoGitHub(t *testing.T) {
	body := withInstallation(t, fixture(t, "pull_request.closed.json"))
	got, err := ParsePullRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	var ev github.PullRequestEvent
	if err := json.Unmarshal(body, &ev); err != nil {
		t.Fatal(err)
	}
	p := ev.GetPullRequest()
	want := PullRequestEvent{
		Action: ev.GetAction(),
		PullRequest: PullRequest{Number: p.GetNumber(), Author: p.GetUser().GetLogin(), State: p.GetState(), Merged: p.GetMerged(),
			Body: p.GetBody(), HeadRef: p.GetHead().GetRef(), HeadSHA: p.GetHead().GetSHA(), HeadRepo: p.GetHead().GetRepo().GetFullName()},
		Repo:         Repo{Owner: ev.GetRepo().GetOwner().GetLogin(), Name: ev.GetRepo().GetName()},
		FullName:     ev.GetRepo().GetFullName(),
		Sender:       User{Login: ev.GetSender().GetLogin(), Type: ev.GetSender().GetType()},
		Installation: ev.GetInstallation().GetID(),
	}
	if !equal(got, want) || got.Action != "closed" || len(got.PullRequest.HeadSHA) != 40 {
		t.Errorf("\n got %+v\nwant %+v", got, want)
	}
	if _, err := ParsePullRequest([]byte(`{"pull_request":{"merged":"yes"}}`)); err == nil {
		t.Error("merged as a string accepted")
	}
}

func TestParsePullRequestReviewMatchesGoGitHub(t *testing.T) {
	body := withInstallation(t, fixture(t, "pull_request_review.submitted.json"))
	got, err := ParsePullRequestReview(body)
	if err != nil {
		t.Fatal(err)
	}
	var ev github.PullRequestReviewEvent
	if err := json.Unmarshal(body, &ev); err != nil {
		t.Fatal(err)
	}
	p := ev.GetPullRequest()
	if got.Action != ev.GetAction() || got.Review.State != ev.GetReview().GetState() || got.Review.Body != ev.GetReview().GetBody() ||
		got.PullRequest.Number != p.GetNumber() || got.PullRequest.HeadRef != p.GetHead().GetRef() || got.PullRequest.Author != p.GetUser().GetLogin() ||
		got.Sender.Login != ev.GetSender().GetLogin() || got.Installation != 4242 {
		t.Errorf("got %+v", got)
	}
}

func TestParseInstallationEvents(t *testing.T) {
	got, err := ParseInstallation(fixture(t, "installation.deleted.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ev github.InstallationEvent
	if err := json.Unmarshal(fixture(t, "installation.deleted.json"), &ev); err != nil {
		t.Fatal(err)
	}
	if got.Action != "deleted" || got.Installation != ev.GetInstallation().GetID() || got.Account != ev.GetInstallation().GetAccount().GetLogin() ||
		len(got.Repositories) != len(ev.Repositories) || got.Repositories[0] != ev.Repositories[0].GetFullName() {
		t.Errorf("installation: %+v", got)
	}
	raw := fixture(t, "installation_repositories.added.json")
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	m["action"] = "removed"
	m["repositories_removed"] = m["repositories_added"]
	b, _ := json.Marshal(m)
	r, err := ParseInstallationRepositories(b)
	if err != nil {
		t.Fatal(err)
	}
	var rev github.InstallationRepositoriesEvent
	if err := json.Unmarshal(b, &rev); err != nil {
		t.Fatal(err)
	}
	if r.Action != "removed" || len(r.Repositories) == 0 || len(r.Repositories) != len(rev.RepositoriesRemoved) || r.Repositories[0] != rev.RepositoriesRemoved[0].GetFullName() {
		t.Errorf("installation_repositories: %+v", r)
	}
	if _, err := ParseInstallation([]byte(`{"repositories":{}}`)); err == nil {
		t.Error("repositories as an object accepted")
	}
}

func equal(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func TestParseRefusesWrongShapes(t *testing.T) {
	for name, body := range map[string]string{
		"not JSON":              `{"action":"labeled"`,
		"action a number":       `{"action":5}`,
		"issue a string":        `{"action":"labeled","issue":"7"}`,
		"number a string":       `{"issue":{"number":"7"}}`,
		"number a fraction":     `{"issue":{"number":7.5}}`,
		"installation too big":  `{"installation":{"id":99999999999999999999}}`,
		"label an array":        `{"label":["agent"]}`,
		"top level an array":    `[{"action":"labeled"}]`,
		"labels not an array":   `{"issue":{"labels":"agent"}}`,
		"pull_request a string": `{"issue":{"pull_request":"yes"}}`,
	} {
		_, ierr := ParseIssues([]byte(body))
		_, cerr := ParseIssueComment([]byte(body))
		if ierr == nil && cerr == nil {
			t.Errorf("%s: both parsers accepted %s", name, body)
		}
	}
}

func TestParseErrorNamesTheField(t *testing.T) {
	_, err := ParseIssueComment([]byte(`{"action":"created","issue":{"number":"7"},"sender":{"login":"x"}}`))
	if err == nil || !strings.Contains(err.Error(), "issue.number") {
		t.Errorf("error %v; want one naming issue.number", err)
	}
	_, err = ParseIssues([]byte(`{"installation":{"id":"4242"}}`))
	if err == nil || !strings.Contains(err.Error(), "installation.id") {
		t.Errorf("error %v; want one naming installation.id", err)
	}
}

func TestParseDecodesEscapesAndNulls(t *testing.T) {
	e, err := ParseIssueComment([]byte(`{"action":"created","comment":{"body":"/agent retry\r\n> \"q\" \u00e9"},` +
		`"issue":{"number":3,"pull_request":null,"labels":[{"name":"agent"},{"name":"bug"}],"user":null},"sender":null}`))
	if err != nil {
		t.Fatal(err)
	}
	if e.Body != "/agent retry\r\n> \"q\" é" || e.Issue.PullRequest || e.Issue.Author != "" || e.Sender.Login != "" ||
		strings.Join(e.Issue.Labels, ",") != "agent,bug" || e.Issue.Number != 3 {
		t.Errorf("got %+v", e)
	}
	// Invalid UTF-8 reads as encoding/json reads it: replaced, not kept.
	e, err = ParseIssueComment([]byte("{\"comment\":{\"body\":\"a\xffb\"}}"))
	if err != nil || e.Body != "a\uFFFDb" {
		t.Errorf("invalid UTF-8: %q, %v", e.Body, err)
	}
}

// BenchmarkParseIssues compares decoding a real issues.labeled delivery
// into go-github's event with picking the fields Patchwright reads.
//
//	go test -run '^$' -bench ParseIssues ./webhook/payload/
func BenchmarkParseIssues(b *testing.B) {
	body := withInstallation(b, fixture(b, "issues.labeled.json"))
	b.Run("go-github", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			var ev github.IssuesEvent
			if err := json.Unmarshal(body, &ev); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("payload", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if _, err := ParseIssues(body); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// The repository ids a CI event is judged by (is it a fork's?) are the
// ones go-github reads from the same real payloads.
func TestParseCheckEventRepositoriesMatchGoGitHub(t *testing.T) {
	type ids struct {
		repo, head int64
		pulls      []int
		pullRepos  []int64
	}
	fromPulls := func(want *ids, prs []*github.PullRequest) {
		for _, pr := range prs {
			want.pulls = append(want.pulls, pr.GetNumber())
			want.pullRepos = append(want.pullRepos, pr.GetHead().GetRepo().GetID())
		}
	}
	for name, event := range map[string]string{"check_suite.completed.json": "check_suite", "check_run.completed.json": "check_run",
		"workflow_run.completed.with-pull-requests.json": "workflow_run"} {
		body := withInstallation(t, fixture(t, name))
		got, err := ParseCheckEvent(event, body)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var want ids
		switch event {
		case "check_suite":
			var ev github.CheckSuiteEvent
			if err := json.Unmarshal(body, &ev); err != nil {
				t.Fatal(err)
			}
			want.repo = ev.GetRepo().GetID()
			fromPulls(&want, ev.GetCheckSuite().PullRequests)
		case "check_run":
			var ev github.CheckRunEvent
			if err := json.Unmarshal(body, &ev); err != nil {
				t.Fatal(err)
			}
			want.repo = ev.GetRepo().GetID()
			fromPulls(&want, ev.GetCheckRun().PullRequests)
		default:
			var ev github.WorkflowRunEvent
			if err := json.Unmarshal(body, &ev); err != nil {
				t.Fatal(err)
			}
			want.repo, want.head = ev.GetRepo().GetID(), ev.GetWorkflowRun().GetHeadRepository().GetID()
			fromPulls(&want, ev.GetWorkflowRun().PullRequests)
		}
		g := ids{got.RepoID, got.HeadRepoID, got.PullRequests, got.PullHeadRepoIDs}
		if want.repo == 0 || len(want.pulls) == 0 || !equal(g, want) {
			t.Errorf("%s: got %+v, want %+v", name, g, want)
		}
	}
}
