//go:build e2e

package pipeline

import (
	"slices"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/provider"
	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
	"github.com/patchwright/patchwright/verify"
)

// withCommand is turns (ending with finish) with the model running
// command before it finishes.
func withCommand(turns []pt.Turn, command string) []pt.Turn {
	run := call("run", `{"command":`+jsonString(command)+`}`)
	return append(turns[:len(turns)-1:len(turns)-1], run, turns[len(turns)-1])
}

// assertLeftOut checks that the run left out each of paths (none in
// files_changed, each named in the body under what was left out) and
// kept each of kept.
func assertLeftOut(t *testing.T, res *Result, out string, paths, kept []string) {
	t.Helper()
	body := readBody(t, out)
	for _, p := range paths {
		if slices.Contains(res.FilesChanged, p) {
			t.Errorf("%s was committed: files changed %q", p, res.FilesChanged)
		}
		if !strings.Contains(body, "`"+p+"`") {
			t.Errorf("body does not name %s:\n%s", p, body)
		}
	}
	for _, p := range kept {
		if !slices.Contains(res.FilesChanged, p) {
			t.Errorf("%s was left out: files changed %q", p, res.FilesChanged)
		}
	}
	if !strings.Contains(body, "was left out of the commit") {
		t.Errorf("body says nothing was left out:\n%s", body)
	}
	found := 0
	readResult(t, out)
	for _, f := range res.Findings {
		if f.Kind == KindCommandOutput {
			found++
		}
	}
	if found != len(paths) {
		t.Errorf("result.json has %d command_output findings, want %d", found, len(paths))
	}
}

// TestMakeTestExecutablesLeftOut: a C project with a plain Makefile and
// no .gitignore. The model fixes the bug with its file tools and runs
// `make test`, which leaves the test executables, the object file and
// the library in the tree. None is committed, each is listed in the
// body, the fix is, and the run is verified by the final checks, which
// build them again on the committed tree.
func TestMakeTestExecutablesLeftOut(t *testing.T) {
	sandboxtest.EndToEnd(t)
	files := fixtureFiles(t, "make")
	delete(files, ".gitignore")
	res, out, _ := scenario{
		repo:  gitRepo(t, files),
		issue: agent.Issue{Title: "digits(0) is 0", Body: "It should be 1."},
		wire:  provider.NameOpenAI,
		turns: withCommand(patchTurns(t, "make", "fix"), "make test"),
	}.run(t)
	if res.Outcome != verify.Verified {
		t.Fatalf("outcome %s (%s), want verified\n%s", res.Outcome, res.Reason, readBody(t, out))
	}
	assertLeftOut(t, res, out,
		[]string{"tests/test_digits", "tests/test_digits_zero", "tests/test_sum", "src/num.o", "libnum.a"},
		[]string{"Makefile", "src/num.c", "tests/test_digits_zero.c"})
}

// TestPythonCachesLeftOut: the model runs pytest in a Python project
// that ignores nothing, leaving __pycache__ directories (and a
// .pytest_cache, which holds its own .gitignore, so it is never a
// change). None is committed; each directory is one entry of the body.
func TestPythonCachesLeftOut(t *testing.T) {
	sandboxtest.EndToEnd(t)
	res, out, _ := scenario{
		repo:  ownRepo(t, "python"),
		issue: agent.Issue{Title: "Fix python", Body: "See the failing case."},
		wire:  provider.NameOpenAI,
		turns: withCommand(patchTurns(t, "python", "fix"), "python3 -m pytest -q"),
	}.run(t)
	if res.Outcome != verify.Verified {
		t.Fatalf("outcome %s (%s), want verified\n%s", res.Outcome, res.Reason, readBody(t, out))
	}
	assertLeftOut(t, res, out,
		[]string{"slugify_lite/__pycache__/", "tests/__pycache__/"}, []string{"tests/test_slugify.py"})
	for _, p := range res.FilesChanged {
		if strings.Contains(p, "__pycache__") || strings.Contains(p, ".pytest_cache") {
			t.Errorf("committed %s", p)
		}
	}
}

// TestGoTestBinaryLeftOut, on both image shapes: the model builds a test
// binary with `go test -c` (left out) and writes a file into an
// untracked build/ directory with write_file (kept: the model's own
// file, whatever its kind).
func TestGoTestBinaryLeftOut(t *testing.T) {
	sandboxtest.EndToEnd(t)
	for name, image := range map[string]string{"ours": "", "public": sandboxtest.PublicImage(t)} {
		t.Run(name, func(t *testing.T) {
			turns := patchTurns(t, "go", "fix")
			turns = withCommand(turns, "go test -c -o words.test ./words")
			note := call("write_file", jsonArgs(t, map[string]any{"path": "build/NOTES.txt", "content": "Count(\"\") is 1.\n"}))
			turns = append(turns[:1:1], append([]pt.Turn{note}, turns[1:]...)...)
			res, out, _ := scenario{
				repo: ownRepo(t, "go"), image: image,
				issue: agent.Issue{Title: "Count counts empty words", Body: "Count(\"\") is 1."},
				wire:  provider.NameAnthropic,
				turns: turns,
			}.run(t)
			if res.Outcome != verify.Verified {
				t.Fatalf("outcome %s (%s), want verified\n%s", res.Outcome, res.Reason, readBody(t, out))
			}
			assertLeftOut(t, res, out, []string{"words.test"}, []string{"build/NOTES.txt", "words/words.go"})
		})
	}
}

// TestPHPUnitResultCacheLeftOut: the model runs phpunit in a PHP project
// that ignores nothing; the .phpunit.result.cache phpunit writes is not
// committed and is listed in the body, the fix is.
func TestPHPUnitResultCacheLeftOut(t *testing.T) {
	sandboxtest.EndToEnd(t)
	res, out, _ := scenario{
		repo:  ownRepo(t, "php"),
		issue: agent.Issue{Title: "Fix php", Body: "See the failing case."},
		wire:  provider.NameOpenAI,
		turns: withCommand(patchTurns(t, "php", "fix"), "phpunit"),
	}.run(t)
	if res.Outcome != verify.Verified {
		t.Fatalf("outcome %s (%s), want verified\n%s", res.Outcome, res.Reason, readBody(t, out))
	}
	assertLeftOut(t, res, out, []string{".phpunit.result.cache"}, []string{"src/Temperature.php", "tests/TemperatureTest.php"})
}
