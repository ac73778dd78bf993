package pipeline

import (
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/provider"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
	"github.com/patchwright/patchwright/verify"
)

// TestRubyBundleNewTestsFailBefore: gems whose Gemfile declares their
// framework and whose Rakefile's test task loads it through a helper
// (ruby/ostruct's shape: test/lib on the load path, -rhelper), so a test
// file run alone by ruby cannot load it. The new test is run by the
// project's own task narrowed to it, and shown failing before;
// test-unit's sub_test_case test is named as test-unit names it.
func TestRubyBundleNewTestsFailBefore(t *testing.T) {
	sandboxtest.EndToEnd(t)
	for name, tc := range map[string]struct{ test, framework string }{
		"ruby-testunit-bundle": {"TestSlug::nil title#test_nil", "test-unit"},
		"ruby-minitest-bundle": {"TestSlug#test_nil", "minitest"},
	} {
		t.Run(name, func(t *testing.T) {
			res, out, _ := scenario{
				repo:  ownRepo(t, name),
				issue: agent.Issue{Title: "Slug.make(nil) raises", Body: "NoMethodError: undefined method `downcase' for nil"},
				wire:  provider.NameOpenAI,
				turns: patchTurns(t, name, "fix"),
			}.run(t)
			body := readBody(t, out)
			if res.Outcome != verify.Verified {
				t.Fatalf("outcome %s (%s), want verified\n%s", res.Outcome, res.Reason, body)
			}
			for _, want := range []string{
				"The new test `" + tc.test + "` fails on the original code and passes with the change",
				"`bundle exec rake test`", "run by " + tc.framework, "2 passed",
			} {
				if !strings.Contains(body, want) {
					t.Errorf("pr.md lacks %q:\n%s", want, body)
				}
			}
			readResult(t, out)
		})
	}
}
