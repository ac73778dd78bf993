package githubjob

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/hibiken/asynq"

	"github.com/patchwright/patchwright/agent/verify"
	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/pipeline"
)

func TestPRTitleFitsGitHubsLimit(t *testing.T) {
	long := strings.Repeat("ü", 300)
	got := prTitle(long, 3)
	if n := utf8.RuneCountInString(got); n != githubapi.MaxTitle || !strings.HasSuffix(got, "…") {
		t.Fatalf("title of %d characters: %q", n, got)
	}
	if got := prTitle("  Fix\n\tit ", 3); got != "Fix it" {
		t.Fatalf("title %q", got)
	}
	if got := prTitle(" ", 3); got != "Patchwright: issue #3" {
		t.Fatalf("empty title: %q", got)
	}
}

// The note and the marker are added only while the body stays within
// GitHub's limit.
func TestBodyAdditionsStayWithinTheLimit(t *testing.T) {
	sha := strings.Repeat("a", 40)
	if got := withPushed("body", sha); jobs.ParsePushed(got) != sha {
		t.Fatalf("marker missing: %q", got)
	}
	full := strings.Repeat("x", githubapi.MaxBody-10)
	if got := withPushed(full, sha); got != full {
		t.Fatal("the marker took a full body past the limit")
	}
	if got := withPushed("body", ""); got != "body" {
		t.Fatalf("marker without a commit: %q", got)
	}
	res := &pipeline.Result{Body: "## Summary", Outcome: verify.Unverified}
	if got := noDraftBody(res); !strings.Contains(got, "does not allow draft pull requests") || !strings.Contains(got, "**not verified**") || !strings.HasSuffix(got, res.Body) {
		t.Fatalf("no-draft body: %q", got)
	}
	res.Body = full
	if got := noDraftBody(res); got != full {
		t.Fatal("the note took a full body past the limit")
	}
}

func TestRefusalsAreFinalAndSayWhy(t *testing.T) {
	forbidden := &githubapi.Refusal{Status: 403, Message: "Resource not accessible by integration", Accepted: "checks=write"}
	cases := []struct {
		name   string
		err    error
		want   string // in the reason; "" for an error that is not final
		pushed string
	}{
		{"403 with the header", forbidden, "Patchwright cannot post check runs here: the app lacks checks: write", "agent/issue-1"},
		{"403 without it", &githubapi.Refusal{Status: 403, Message: "Resource not accessible by integration"}, "the app lacks pull_requests: write", ""},
		{"422", &githubapi.Refusal{Status: 422, Message: "Validation Failed: body is too long"}, "GitHub refused it (422", ""},
		{"5xx", errors.New("HTTP 502"), "", ""},
	}
	for _, c := range cases {
		need := "pull_requests: write"
		if c.pushed != "" {
			need = "checks: write"
		}
		what := "open pull requests"
		if c.pushed != "" {
			what = "post check runs"
		}
		err := refused(fmt.Errorf("wrapped: %w", c.err), what, need, c.pushed)
		var rf *refusal
		if got := errors.As(err, &rf); got != (c.want != "") || errors.Is(err, asynq.SkipRetry) != got {
			t.Errorf("%s: final=%v (%v)", c.name, got, err)
			continue
		}
		if rf == nil {
			continue
		}
		if r := rf.reason(); !strings.Contains(r, c.want) || strings.HasSuffix(r, ".") || (c.pushed != "" && !strings.Contains(r, "pushed to "+c.pushed)) {
			t.Errorf("%s: reason %q", c.name, r)
		}
	}
	for name, c := range map[string]struct {
		err   error
		final bool
	}{
		"declined by a hook": {errors.New("push agent/issue-1: command error on refs/heads/agent/issue-1: pre-receive hook declined"), true},
		"no access":          {fmt.Errorf("push: %w: 403", transport.ErrAuthorizationFailed), true},
		"network":            {errors.New("push: dial tcp: connection refused"), false},
	} {
		err := pushRefused(c.err, "agent/issue-1")
		if errors.Is(err, asynq.SkipRetry) != c.final {
			t.Errorf("%s: %v, want final=%v", name, err, c.final)
		}
	}
}
