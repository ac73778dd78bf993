package docker_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/docker"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// variants are the states of a testdata/repos repository a toolchain test
// runs, by the workspace directory each is written to: the repository as
// it is, with only the regression test (it fails: the bug is real), with
// the fix (test and code: it passes), and with a change that breaks a test
// that passed. None is named "test": node --test would take every file
// under such a directory for a test file.
var variants = map[string][]string{
	"base":    nil,
	"newtest": {"test"},
	"fixed":   {"fix"},
	"broken":  {"break"},
}

// toolRun is one command in one variant and what the runner must say.
type toolRun struct {
	variant string
	cmd     string
	exit    int
	want    []string // in stdout or stderr
	unwant  []string
}

// TestToolchainsRunRepos runs each language's real test runner in the
// test image on the repositories of testdata/repos (see its README.md),
// with the commands check detection produces, and checks the exit codes
// and the runners' own summary lines that testdata/repos/README.md
// records for the end-to-end tests. Only the variants jobs/pipeline's
// TestLanguages does not check through a whole run are run here (it shows
// each fix passing with its counts, each break failing by test name and,
// for most languages, the regression test failing on the base), so that
// CI does not pay for a compiler's work twice.
func TestToolchainsRunRepos(t *testing.T) {
	sandboxtest.EndToEnd(t)
	d := sandboxtest.NewDocker(t, docker.Options{})
	image := sandboxtest.Image(t)
	cases := map[string][]toolRun{
		"go": {
			{"base", "go test ./...", 0, []string{"ok  \texample.com/textstats/mean", "ok  \texample.com/textstats/words"}, nil},
			{"newtest", "go test ./...", 1, []string{"--- FAIL: TestCountSpaces", "FAIL\texample.com/textstats/words", "ok  \texample.com/textstats/mean"}, nil},
		},
		"python": {
			{"base", "python -m pytest", 0, []string{" 3 passed in "}, nil},
			{"base", "python3 -m pytest -q", 0, []string{"3 passed in "}, nil},
			{"newtest", "python -m pytest", 1, []string{" 1 failed, 3 passed in ", "FAILED tests/test_slugify.py::test_collapses_punctuation"}, nil},
			{"base", "python -m venv /tmp/venv && /tmp/venv/bin/python -c 'print(42)'", 0, []string{"42"}, nil},
		},
		"js": {
			{"base", "npm test", 0, []string{"# tests 2\n", "# pass 2\n", "# fail 0\n"}, nil},
			{"newtest", "npm test", 1, []string{"# tests 3\n", "# pass 2\n", "# fail 1\n", "not ok 3 - chunk keeps a short last chunk"}, nil},
		},
		"rust": {
			{"base", "cargo test --offline", 0, []string{"test result: ok. 3 passed; 0 failed;"}, nil},
		},
		// With -q, as detection runs it, Maven prints nothing on success.
		"java": {
			{"base", "mvn -q -B -o test", 0, nil, []string{"Tests run:"}},
		},
		"go-npm": {
			{"base", "go test ./...", 0, []string{"ok  \texample.com/dual/version"}, nil},
			{"base", "npm test", 0, []string{"# tests 2\n", "# pass 2\n"}, nil},
			{"newtest", "npm test", 1, []string{"# tests 3\n", "# fail 1\n", "not ok 3 - numeric parts compare as numbers"}, nil},
			{"broken", "npm test", 0, []string{"# tests 2\n", "# pass 2\n"}, nil},
		},
		// go.work at a root that is not a module: `go test ./...` there
		// matches nothing, so each module is tested from its own directory.
		"monorepo": {
			{"base", "go test ./...", 1, []string{"directory prefix . does not contain modules listed in go.work"}, nil},
			{"base", "cd lib && go test ./...", 0, []string{"ok  \texample.com/mono/lib/clamp"}, nil},
			{"base", "cd api && go test ./...", 0, []string{"ok  \texample.com/mono/api/handler"}, nil},
			{"base", "npm test", 0, []string{"# tests 1\n", "# pass 1\n"}, nil},
			{"newtest", "cd lib && go test ./...", 1, []string{"--- FAIL: TestIntAbove ", "FAIL\texample.com/mono/lib/clamp"}, nil},
			{"broken", "cd lib && go test ./...", 0, []string{"ok  \texample.com/mono/lib/clamp"}, nil},
		},
		// Issue 27's ecosystems, with the commands detection gives, and
		// one Gradle run (its daemon takes about 30 s to start).
		"ruby": {
			{"newtest", "bundle exec rspec", 1, []string{"3 examples, 1 failure", "rspec ./spec/textkit_spec.rb:15 # Textkit.truncate stays within the limit"}, nil},
			{"base", "bundle exec rspec", 0, []string{"2 examples, 0 failures"}, nil},
		},
		"php": {
			{"newtest", "phpunit", 1, []string{"Tests: 3, Assertions: 3, Failures: 1.", "1) TemperatureTest::boilingInCelsius"}, nil},
			{"base", "phpunit", 0, []string{"OK (2 tests, 2 assertions)"}, nil},
		},
		"cmake": {
			{"newtest", "cmake -S . -B build >/dev/null && cmake --build build --parallel >/dev/null && ctest --test-dir build --output-on-failure", 8,
				[]string{"67% tests passed, 1 tests failed out of 3", "3 - strutil_repeat (Failed)"}, nil},
		},
		"gradle": {
			{"broken", "gradle test --offline --console=plain", 1, []string{"WordsTest > countsWords FAILED", "2 tests completed, 1 failed"}, nil},
		},
	}
	for repo, runs := range cases {
		t.Run(repo, func(t *testing.T) {
			t.Parallel()
			ws := t.TempDir()
			for dir, patches := range variants {
				sandboxtest.CopyRepo(t, filepath.Join(ws, dir), repo, patches...)
			}
			sandboxtest.HandOver(t, ws)
			sb := sandboxtest.New(t, d, sandbox.Spec{Image: image, Workspace: ws})
			for _, r := range runs {
				script := "cd " + r.variant + " && " + r.cmd
				res, err := sb.Exec(context.Background(), sandbox.Command{Script: script, Timeout: 5 * time.Minute})
				if err != nil {
					t.Fatalf("%s: %v", script, err)
				}
				out := string(res.Stdout.Head) + string(res.Stdout.Tail) + string(res.Stderr.Head) + string(res.Stderr.Tail)
				if res.ExitCode != r.exit {
					t.Errorf("%s: exit %d, want %d\n%s", script, res.ExitCode, r.exit, out)
					continue
				}
				for _, w := range r.want {
					if !strings.Contains(out, w) {
						t.Errorf("%s: output lacks %q\n%s", script, w, out)
					}
				}
				for _, w := range r.unwant {
					if strings.Contains(out, w) {
						t.Errorf("%s: output has %q\n%s", script, w, out)
					}
				}
			}
		})
	}
}
