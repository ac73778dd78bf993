package githubjob

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/hibiken/asynq"

	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/pipeline"
	"github.com/patchwright/patchwright/report"
	"github.com/patchwright/patchwright/report/marker"
	"github.com/patchwright/patchwright/verify"
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

// The publisher re-renders the body with report.PRBody: it carries the
// pushed marker marker.ParsePushed reads, the no-draft note opens it, and a body at its largest still fits GitHub's
// limit with both; without a pushed commit there is no marker.
func TestPublishedBodyIsRenderedByReport(t *testing.T) {
	sha := strings.Repeat("a", 40)
	g := &publisher{}
	in := report.Input{RunID: "run.1", Issue: 3, Outcome: verify.Unverified, Reason: "a check could not run",
		Summary: strings.Repeat("Changed it. ", 20000)}
	res := &pipeline.Result{Outcome: verify.Unverified, HeadCommit: sha, Report: in}
	for _, refused := range []bool{false, true} {
		body, err := g.body(res, refused)
		if err != nil {
			t.Fatal(err)
		}
		if marker.ParsePushed(body) != sha {
			t.Errorf("refused=%v: the body does not carry the pushed commit", refused)
		}
		if n := utf8.RuneCountInString(body); n > githubapi.MaxBody {
			t.Errorf("refused=%v: %d characters", refused, n)
		}
		note := strings.Contains(body, "does not allow draft pull requests") && strings.Contains(body, "**not verified**")
		if note != refused {
			t.Errorf("refused=%v: note=%v", refused, note)
		}
		if g.sent != body || res.Report.DraftRefused != refused || res.Report.HeadCommit != sha {
			t.Errorf("refused=%v: what was sent and the facts kept differ", refused)
		}
	}
	res.HeadCommit = ""
	if body, err := g.body(res, false); err != nil || marker.ParsePushed(body) != "" {
		t.Errorf("no commit pushed, yet a marker (%v)", err)
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
