package report

import (
	"strings"
	"testing"

	"github.com/patchwright/patchwright/verify"
)

// Commits someone else pushed are listed under Changes with their files,
// every value inert (pipes, mentions, references), and named in "Not
// verified"; without them the body has neither.
func TestForeignCommitsInBody(t *testing.T) {
	in := base()
	in.Outcome, in.Reason = verify.Unverified, "every check passed, but the branch holds 3 commits Patchwright did not make"
	in.Foreign = Foreign{More: 1, Commits: []ForeignCommit{
		{SHA: "0123456789abcdef0123456789abcdef01234567", Author: "mallory", Subject: "ping @everyone | fixes #99", Files: []string{".github/agent.yml", "a|b.go"}},
		{SHA: "fedcba9876543210fedcba9876543210fedcba98", Author: "Some Name", Subject: "more", Files: []string{"x.go"}, MoreFiles: 4},
	}}
	body, err := PRBody(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"**Commits on this branch that Patchwright did not make** (3)",
		"| `0123456789ab` | `mallory` | `ping @everyone \\| fixes #99` | `.github/agent.yml` `a\\|b.go` |",
		"`x.go` …and 4 more |",
		"…and 1 earlier commits, not listed.",
		"- The branch holds 3 commits that Patchwright did not make (listed under Changes).",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q:\n%s", want, body)
		}
	}
	if i, j := strings.Index(body, "did not make**"), strings.Index(body, "## Verification"); i < 0 || i > j || i < strings.Index(body, "## Changes") {
		t.Error("the commits are not listed inside Changes")
	}
	clean, err := PRBody(base())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(clean, "did not make") {
		t.Errorf("a body without foreign commits mentions them:\n%s", clean)
	}
}

// A run that moved down its model list says so in the Run section.
func TestFallbackInRunSection(t *testing.T) {
	in := base()
	in.Fallbacks = []string{"step 3: anthropic:claude-sonnet-4-5 failed (anthropic: 529 overloaded_error: the service is overloaded), continued on openai:gpt-4.1"}
	body, err := PRBody(in)
	if err != nil {
		t.Fatal(err)
	}
	run := body[strings.Index(body, "## Run"):]
	if !strings.Contains(run, "Model fallback at step 3: anthropic:claude-sonnet-4-5 failed") || !strings.Contains(run, "continued on openai:gpt-4.1.") {
		t.Errorf("Run section lacks the fallback:\n%s", run)
	}
}
