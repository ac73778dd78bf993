package pipeline

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/provider"
	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
	"github.com/patchwright/patchwright/verify"
)

var patchFileRE = regexp.MustCompile(`(?m)^diff --git a/(\S+) b/(\S+)$`)

// patchTurns are the tool calls that make a repository's work tree what
// the patch makes it: each changed file read (when it exists) and written
// whole, each removed file deleted, then finish.
func patchTurns(t *testing.T, name, patch string) []pt.Turn {
	t.Helper()
	after := t.TempDir()
	sandboxtest.CopyRepo(t, after, name, patch)
	data, err := os.ReadFile(sandboxtest.Patch(name, patch))
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(sandboxtest.ReposDir(), name, "repo")
	var turns []pt.Turn
	for _, m := range patchFileRE.FindAllStringSubmatch(string(data), -1) {
		path := m[2]
		content, err := os.ReadFile(filepath.Join(after, path))
		_, baseErr := os.Stat(filepath.Join(base, path))
		switch {
		case err != nil:
			turns = append(turns, call("delete_file", jsonArgs(t, map[string]any{"path": path})))
		case baseErr == nil:
			turns = append(turns, call("read_file", jsonArgs(t, map[string]any{"path": path})),
				call("write_file", jsonArgs(t, map[string]any{"path": path, "content": string(content)})))
		default:
			turns = append(turns, call("write_file", jsonArgs(t, map[string]any{"path": path, "content": string(content)})))
		}
	}
	return append(turns, call("finish", `{"summary":"Applied the change."}`))
}

// TestLanguages runs the test repositories of every language through the
// pipeline of `patchwright run` with a model that applies the upstream-style
// fix (verified) and one that breaks a passing test (failed), on the
// offline image with real go, pytest, node:test, cargo and Maven; the
// body shows what each runner printed.
func TestLanguages(t *testing.T) {
	sandboxtest.EndToEnd(t)
	for name, tc := range map[string]struct {
		fixed, broken []string // in the body after the fix; after the break
	}{
		"go":       {[]string{"2 packages with tests"}, []string{"TestOf"}},
		"python":   {[]string{"4 passed"}, []string{"test_lowercases"}},
		"js":       {[]string{"3 passed"}, []string{"sum adds"}},
		"rust":     {[]string{"4 passed", "`median_even` fails on the original code"}, []string{"clamps"}},
		"java":     {[]string{"✅ passed", "4 passed", "`RomanTest.subtractive` fails on the original code"}, []string{"❌ failed", "RomanTest::rejectsZero"}},
		"go-npm":   {[]string{"test (go)", "test (npm)", "3 passed"}, []string{"TestLess"}},
		"monorepo": {[]string{"covered by `build (lib: go)`"}, []string{"labels a page"}},
		// Issue 27: counts from RSpec's JSON, CTest's and PHPUnit's JUnit
		// reports, and the regression test shown failing on the base.
		"ruby":  {[]string{"3 passed", "`Textkit.truncate stays within the limit` fails on the original code"}, []string{"Textkit.titleize capitalizes every word"}},
		"cmake": {[]string{"3 passed", "`strutil_repeat` fails on the original code"}, []string{"mathutil_gcd"}},
		"php":   {[]string{"3 passed", "`TemperatureTest::boilingInCelsius` fails on the original code"}, []string{"TemperatureTest::testFreezingInFahrenheit"}},
		// Gradle's XML reports, offline with Debian's JUnit as a file repository.
		"gradle": {[]string{"3 passed", "`WordsTest.countsAcrossRunsOfSpaces` fails on the original code"}, []string{"WordsTest::countsWords"}},
		// Meson's JUnit log, the new test() run by name on the base, and
		// (issue 27) why each command was chosen.
		"meson": {[]string{"3 passed", "`percent_part` fails on the original code", "meson.build: meson test runs every test() (`test`)"}, []string{"bounds::clamp"}},
		// Make has no runner: the target's own output, no counts.
		"make": {[]string{"`make test`", "Why these commands: Makefile has a test target", "The new test `tests/test_digits_zero.c` cannot be shown because the Makefile's test target"}, []string{"FAIL: tests/test_sum"}},
	} {
		t.Run(name, func(t *testing.T) {
			for patch, want := range map[string]struct {
				outcome verify.Outcome
				texts   []string
			}{"fix": {verify.Verified, tc.fixed}, "break": {verify.Failed, tc.broken}} {
				t.Run(patch, func(t *testing.T) {
					res, out, _ := scenario{
						repo:  ownRepo(t, name),
						issue: agent.Issue{Title: "Fix " + name, Body: "See the failing case."},
						wire:  provider.NameOpenAI,
						turns: patchTurns(t, name, patch),
					}.run(t)
					body := readBody(t, out)
					if res.Outcome != want.outcome {
						t.Fatalf("outcome %s (%s), want %s\n%s", res.Outcome, res.Reason, want.outcome, body)
					}
					for _, s := range want.texts {
						if !strings.Contains(body, s) {
							t.Errorf("pr.md lacks %q:\n%s", s, body)
						}
					}
					readResult(t, out)
				})
			}
		})
	}
}

func jsonArgs(t *testing.T, v map[string]any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPublicGoImage: on an image shaped like the public golang one
// (root-owned, no user 1000, no /home/agent, GOPATH=/go), the Go
// repository's fix is verified: the build cache is the sandbox user's.
func TestPublicGoImage(t *testing.T) {
	res, out, _ := scenario{
		repo:  ownRepo(t, "go"),
		image: sandboxtest.PublicImage(t),
		issue: agent.Issue{Title: "Count counts empty words", Body: "Count(\"\") is 1."},
		wire:  provider.NameAnthropic,
		turns: patchTurns(t, "go", "fix"),
	}.run(t)
	if res.Outcome != verify.Verified {
		t.Fatalf("outcome %s (%s), want verified\n%s", res.Outcome, res.Reason, readBody(t, out))
	}
}

// TestRenamedGoTestDemonstrates: a fix that renames the existing test and
// corrects its input (a trailing space) is verified; the renamed test, failing on the
// original code, demonstrates the fix and the body says it was renamed.
func TestRenamedGoTestDemonstrates(t *testing.T) {
	sandboxtest.EndToEnd(t)
	res, out, _ := scenario{
		repo:  ownRepo(t, "go"),
		issue: agent.Issue{Title: "Count counts double spaces", Body: "Count(\"a  b\") is 3."},
		wire:  provider.NameOpenAI,
		turns: patchTurns(t, "go", "rename"),
	}.run(t)
	body := readBody(t, out)
	if res.Outcome != verify.Verified {
		t.Fatalf("outcome %s (%s), want verified\n%s", res.Outcome, res.Reason, body)
	}
	want := "The renamed test `TestCountWords` (was `TestCountSimple`) fails on the original code and passes with the change"
	if !strings.Contains(body, want) {
		t.Errorf("pr.md lacks %q:\n%s", want, body)
	}
	readResult(t, out)
}

// TestRubyXUnitNewTestsFailBefore: a Rakefile test task of a test-unit
// project and of a minitest project, each told apart by its test files;
// the new test, which raises on the original code, is shown failing
// before, and the check is labelled with its framework. test-unit's
// `test "description" do` block is named, run and read as test-unit does.
func TestRubyXUnitNewTestsFailBefore(t *testing.T) {
	sandboxtest.EndToEnd(t)
	for name, framework := range map[string]string{"ruby-testunit": "test-unit", "ruby-minitest": "minitest"} {
		t.Run(name, func(t *testing.T) {
			wants := []string{"The new test `SlugTest#test_nil` fails on the original code and passes with the change", "run by " + framework, "2 passed"}
			if framework == "test-unit" {
				wants = []string{wants[0], "The new test `SlugTest#test: nil title gives an empty slug` fails on the original code and passes with the change", "run by test-unit", "3 passed"}
			}
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
			for _, want := range wants {
				if !strings.Contains(body, want) {
					t.Errorf("pr.md lacks %q:\n%s", want, body)
				}
			}
			readResult(t, out)
		})
	}
}

// TestPHPUnitNamespacedAndImageFallback: a project whose composer.json
// requires phpunit/phpunit but whose vendor/ cannot be installed (no
// network) runs the image's phpunit, and the body says which path was
// missing; its namespaced new test (Html2Text.CharsTest in the JUnit
// report) is matched by name and shown failing before.
func TestPHPUnitNamespacedAndImageFallback(t *testing.T) {
	sandboxtest.EndToEnd(t)
	res, out, _ := scenario{
		repo:  ownRepo(t, "php-ns"),
		issue: agent.Issue{Title: "&laquo; is not converted", Body: "Chars::convert('&laquo;') stays an entity."},
		wire:  provider.NameOpenAI,
		turns: patchTurns(t, "php-ns", "fix"),
	}.run(t)
	body := readBody(t, out)
	if res.Outcome != verify.Verified {
		t.Fatalf("outcome %s (%s), want verified\n%s", res.Outcome, res.Reason, body)
	}
	for _, want := range []string{
		"The new test `CharsTest::testLaquoAndRaquo` fails on the original code and passes with the change",
		"`vendor/bin/phpunit` is missing (", "so the check ran the image's `phpunit`",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("pr.md lacks %q:\n%s", want, body)
		}
	}
	readResult(t, out)
}

// TestChecksReportedForWhatTheyAre: a passing `go vet` is a linter (no
// "No linter is configured" under it) and a passing node:test run tests
// JavaScript through `npm test` (no "no JavaScript/TypeScript test
// command ran").
func TestChecksReportedForWhatTheyAre(t *testing.T) {
	sandboxtest.EndToEnd(t)
	for name, tc := range map[string]struct{ has, lacks string }{
		"go": {"`go vet ./...`", "No linter is configured"},
		"js": {"`npm test`", "no JavaScript/TypeScript test command ran"},
	} {
		t.Run(name, func(t *testing.T) {
			res, out, _ := scenario{
				repo:  ownRepo(t, name),
				issue: agent.Issue{Title: "Fix " + name, Body: "See the failing case."},
				wire:  provider.NameOpenAI,
				turns: patchTurns(t, name, "fix"),
			}.run(t)
			body := readBody(t, out)
			if res.Outcome != verify.Verified || !strings.Contains(body, tc.has) || strings.Contains(body, tc.lacks) {
				t.Errorf("outcome %s; want verified, %q in the body and not %q:\n%s", res.Outcome, tc.has, tc.lacks, body)
			}
		})
	}
}

// ownRepo is sandboxtest.Repo given back to this process's user: Repo
// hands it to the sandbox user, and git refuses to serve a repository its
// user does not own.
func ownRepo(t *testing.T, name string) string {
	t.Helper()
	repo := sandboxtest.Repo(t, name)
	err := filepath.WalkDir(repo, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, os.Getuid(), os.Getgid())
	})
	if err != nil {
		t.Fatal(err)
	}
	return repo
}
