//go:build e2e

package pipeline

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/provider"
	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
	"github.com/patchwright/patchwright/verify"
)

// TestSetupPyProject (issue 42, from python-slugify): a project declared
// in setup.py alone, whose install_requires names a package only an
// index on a fake host serves, whose tests are all in test.py (which
// pytest collects only when named) and whose .gitignore names env/ but
// not .venv. The detected setup installs the project, and so its
// dependency, into .venv; the checks run `python -m pytest test.py`; the
// new test is shown failing before; .venv stays out of the commit.
func TestSetupPyProject(t *testing.T) {
	sandboxtest.EndToEnd(t)
	idx := newPyPIIndex(t, filepath.Join(sandboxtest.ReposDir(), "py-deps", "package"), "textcase", "1.0.0")
	host := sandboxtest.FakeHost(t, idx)
	files := fixtureFiles(t, "py-setup")
	files["setup.py"] = strings.Replace(files["setup.py"], `["textcase"]`, `["textcase @ http://`+host+`/files/`+idx.wheelName()+`"]`, 1)
	files[".github/agent.yml"] = "network:\n  allow: ['" + host + "']\n"
	repo := gitRepo(t, files)
	res, out, _ := scenario{
		repo:        repo,
		issue:       agent.Issue{Title: "headline keeps stray spaces", Body: "headline(\"  ada   lovelace \") should be \"Ada Lovelace\"."},
		wire:        provider.NameOpenAI,
		cacheVolume: testCacheVolume(t),
		turns:       patchTurns(t, "py-setup", "fix"),
	}.run(t)
	body := readBody(t, out)
	if res.Outcome != verify.Verified {
		t.Fatalf("outcome %s (%s), want verified; index asked %q; body:\n%s\nledger:\n%s", res.Outcome, res.Reason, idx.paths(), body, readLedger(t, out))
	}
	if !slices.Contains(idx.paths(), "/files/"+idx.wheelName()) {
		t.Errorf("the index never served the wheel: %q", idx.paths())
	}
	for _, want := range []string{
		"-e .` (exit 0) because `setup.py` declares dependencies",
		"`python -m pytest test.py`",
		"2 passed",
		"The new test `TestHeadline::test_spaces` fails on the original code and passes with the change",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "Detected setup failed") {
		t.Errorf("body says detected setup failed:\n%s", body)
	}
	if got := gitIn(t, repo, "ls-tree", "-r", "--name-only", res.HeadCommit); strings.Contains(got, ".venv") || strings.Contains(got, "egg-info") {
		t.Errorf("the commit holds setup's output:\n%s", got)
	}
}

// TestPipGroupsInstalledApart: a project whose test extra names a
// package the index serves and whose tox.ini names one it does not. Each
// group is its own pip command, so the missing package does not keep the
// other out: the test that imports it passes, and "Not verified" names
// the group that failed.
func TestPipGroupsInstalledApart(t *testing.T) {
	sandboxtest.EndToEnd(t)
	idx := newPyPIIndex(t, filepath.Join(sandboxtest.ReposDir(), "py-deps", "package"), "textcase", "1.0.0")
	host := sandboxtest.FakeHost(t, idx)
	files := sqlShapedFiles(`"textcase @ http://` + host + `/files/` + idx.wheelName() + `"`)
	files["pyproject.toml"] = strings.Replace(files["pyproject.toml"], "dev = [\"pytest\", \"ruff\"]", "dev = []", 1)
	files["tox.ini"] = "[testenv]\ndeps =\n    gone @ http://" + host + "/files/gone-1.0-py3-none-any.whl\n"
	files["tests/test_title.py"] = "from textcase import title\n\n\ndef test_title():\n    assert title(\"ada\") == \"Ada\"\n"
	files[".github/agent.yml"] = "network:\n  allow: ['" + host + "']\n"
	res, out, _ := scenario{
		repo: gitRepo(t, files), issue: shoutIssue, wire: provider.NameOpenAI,
		cacheVolume: testCacheVolume(t), turns: shoutTurns(t),
	}.run(t)
	body := readBody(t, out)
	if res.Outcome != verify.Verified {
		t.Fatalf("outcome %s (%s), want verified; index asked %q; body:\n%s", res.Outcome, res.Reason, idx.paths(), body)
	}
	for _, want := range []string{
		"2 passed",
		"because `pyproject.toml` declares dependencies in `[project.optional-dependencies] test`",
		"(`tox.ini` `[testenv] deps`)",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q:\n%s", want, body)
		}
	}
	notVerified := body[strings.Index(body, "## Not verified"):]
	if !strings.Contains(notVerified, "Detected setup failed") || !strings.Contains(notVerified, "gone") {
		t.Errorf("Not verified does not name the failed group:\n%s", notVerified)
	}
}

// TestNoToolchainOnThePublicImage (issue 42): on an image shaped like
// the public golang one, which has no Python and no Node, a Python
// project (with a detected setup to run) and a Node project are never
// verified, and the body says plainly which program the image lacks,
// for the setup and for the checks, naming the image.
func TestNoToolchainOnThePublicImage(t *testing.T) {
	sandboxtest.EndToEnd(t)
	image := sandboxtest.PublicImage(t)
	for name, tc := range map[string]struct {
		repo  func(t *testing.T) string
		turns func(t *testing.T) []pt.Turn
		wants []string
	}{
		"python": {
			repo:  func(t *testing.T) string { return gitRepo(t, sqlShapedFiles("")) },
			turns: shoutTurns,
			wants: []string{"`/bin/sh: 1: python3: not found`", "`python` not found in the image"},
		},
		"node": {
			repo:  func(t *testing.T) string { return ownRepo(t, "js") },
			turns: func(t *testing.T) []pt.Turn { return patchTurns(t, "js", "fix") },
			wants: []string{"`npm` not found in the image"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			res, out, _ := scenario{
				repo: tc.repo(t), image: image, issue: shoutIssue, wire: provider.NameOpenAI,
				turns: tc.turns(t),
			}.run(t)
			body := readBody(t, out)
			if res.Outcome == verify.Verified {
				t.Fatalf("verified on an image without the toolchain:\n%s", body)
			}
			for _, want := range append(tc.wants, image) {
				if !strings.Contains(body, want) {
					t.Errorf("body lacks %q:\n%s", want, body)
				}
			}
		})
	}
}

// TestSetupVenvTamperedByTheModel: the .venv that setup filled (and the
// repository does not ignore) is where the checks' interpreter and
// dependencies live. A model that adds the new test but, instead of
// fixing the code, rewrites the installed dependency in .venv, with a
// command and with its file tool, must not pass the checks with it or
// commit it: the command's edit is left out as command output, the file
// tool's is vendored code (never verified), and the final check fails.
func TestSetupVenvTamperedByTheModel(t *testing.T) {
	sandboxtest.EndToEnd(t)
	idx := newPyPIIndex(t, filepath.Join(sandboxtest.ReposDir(), "py-deps", "package"), "textcase", "1.0.0")
	host := sandboxtest.FakeHost(t, idx)
	files := fixtureFiles(t, "py-setup")
	files["setup.py"] = strings.Replace(files["setup.py"], `["textcase"]`, `["textcase @ http://`+host+`/files/`+idx.wheelName()+`"]`, 1)
	files[".github/agent.yml"] = "network:\n  allow: ['" + host + "']\n"
	after := t.TempDir()
	sandboxtest.CopyRepo(t, after, "py-setup", "fix")
	testPy, err := os.ReadFile(filepath.Join(after, "test.py"))
	if err != nil {
		t.Fatal(err)
	}
	dep := ".venv/lib/python3.11/site-packages/textcase/__init__.py"
	repo := gitRepo(t, files)
	res, out, _ := scenario{
		repo:        repo,
		issue:       agent.Issue{Title: "headline keeps stray spaces", Body: "headline(\"  ada   lovelace \") should be \"Ada Lovelace\"."},
		wire:        provider.NameOpenAI,
		cacheVolume: testCacheVolume(t),
		turns: []pt.Turn{
			call("read_file", jsonArgs(t, map[string]any{"path": "test.py"})),
			call("write_file", jsonArgs(t, map[string]any{"path": "test.py", "content": string(testPy)})),
			call("run", jsonArgs(t, map[string]any{"command": `sed -i 's/s.split(" ")/s.split()/' ` + dep + ` && grep -c 'split()' ` + dep})),
			call("write_file", jsonArgs(t, map[string]any{"path": dep,
				"content": "def title(s):\n    return \" \".join(w[:1].upper() + w[1:] for w in s.split())\n"})),
			call("finish", `{"summary":"Added the test."}`),
		},
	}.run(t)
	body := readBody(t, out)
	if res.Outcome == verify.Verified || !strings.Contains(body, "❌ failed") {
		t.Fatalf("outcome %s (%s), want the final check failing; body:\n%s", res.Outcome, res.Reason, body)
	}
	if res.HeadCommit != "" {
		if got := gitIn(t, repo, "ls-tree", "-r", "--name-only", res.HeadCommit); strings.Contains(got, ".venv") {
			t.Errorf("the commit holds the tampered .venv:\n%s", got)
		}
	}
}
