//go:build e2e

package pipeline

import (
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

// sqlShapedFiles are a Python project declared as sqlparse declares
// itself: a hatchling pyproject.toml with no runtime dependencies, pytest
// named only among its development dependencies (a PEP 735 dependency
// group and, when extra is set, the optional-dependencies extra "test"),
// .venv ignored, and no .github/agent.yml.
func sqlShapedFiles(extra string) map[string]string {
	pyproject := "[build-system]\nrequires = [\"hatchling\"]\nbuild-backend = \"hatchling.build\"\n\n" +
		"[project]\nname = \"shout\"\nversion = \"1.0\"\nrequires-python = \">=3.8\"\n\n"
	if extra != "" {
		pyproject += "[project.optional-dependencies]\ntest = [" + extra + "]\n\n"
	}
	pyproject += "[dependency-groups]\ndev = [\"pytest\", \"ruff\"]\n\n[tool.pytest.ini_options]\npythonpath = [\".\"]\n"
	return map[string]string{
		".gitignore":          ".venv/\n*.egg-info/\n",
		"pyproject.toml":      pyproject,
		"shout/__init__.py":   "\"\"\"Shouting.\"\"\"\n\n\ndef shout(s):\n    \"\"\"S in capitals.\"\"\"\n    return s.upper()\n",
		"tests/test_shout.py": "from shout import shout\n\n\ndef test_shout():\n    assert shout(\"hi\") == \"HI\"\n",
	}
}

var shoutIssue = agent.Issue{Title: "Say what shout does", Body: "Its docstring should say it returns a new string."}

func shoutTurns(t *testing.T) []pt.Turn {
	code := "\"\"\"Shouting.\"\"\"\n\n\ndef shout(s):\n    \"\"\"A new string: s in capitals.\"\"\"\n    return s.upper()\n"
	return rewriteTurns(t, "shout/__init__.py", code, "The docstring says shout returns a new string.")
}

// TestPytestOnlyInTheImage: a project shaped like sqlparse, whose pytest
// is the image's alone (its development dependencies cannot be fetched:
// no index is allowed). The detected setup's .venv sees the image's
// packages, so the baseline and final checks run its tests with the
// image's pytest, their records say so, and the run is verified.
func TestPytestOnlyInTheImage(t *testing.T) {
	sandboxtest.EndToEnd(t)
	res, out, _ := scenario{
		repo: gitRepo(t, sqlShapedFiles("")), issue: shoutIssue, wire: provider.NameOpenAI,
		cacheVolume: testCacheVolume(t), turns: shoutTurns(t),
	}.run(t)
	if res.Outcome != verify.Verified {
		t.Fatalf("outcome %s (%s), want verified; ledger:\n%s", res.Outcome, res.Reason, readLedger(t, out))
	}
	body := readBody(t, out)
	if !strings.Contains(body, "✅ passed (1 passed)") {
		t.Errorf("body does not show the test passing:\n%s", body)
	}
	// The checks' notes reach the ledger, not the body.
	if l := readLedger(t, out); strings.Count(l, "`pytest` is the image's, as `.venv` does not install it") != 2 {
		t.Errorf("the baseline's and final check's records do not say pytest is the image's:\n%s", l)
	}
}

// TestPytestDevExtraFromIndex: the tests import a package that only the
// project's test extra declares (by a direct reference to a wheel on an
// index on a fake host, which network.allow names; there is no
// `setup:`). The detected setup installs the extra into .venv before
// the editable install (which fails: its build backend cannot be
// fetched), so the baseline and final checks import it and pass.
func TestPytestDevExtraFromIndex(t *testing.T) {
	sandboxtest.EndToEnd(t)
	idx := newPyPIIndex(t, filepath.Join(sandboxtest.ReposDir(), "py-deps", "package"), "textcase", "1.0.0")
	host := sandboxtest.FakeHost(t, idx)
	files := sqlShapedFiles(`"textcase @ http://` + host + `/files/` + idx.wheelName() + `"`)
	// Its group would name packages only the real index has.
	files["pyproject.toml"] = strings.Replace(files["pyproject.toml"], "dev = [\"pytest\", \"ruff\"]", "dev = []", 1)
	files["tests/test_title.py"] = "from textcase import title\n\n\ndef test_title():\n    assert title(\"ada\") == \"Ada\"\n"
	files[".github/agent.yml"] = "network:\n  allow: ['" + host + "']\n"
	res, out, _ := scenario{
		repo: gitRepo(t, files), issue: shoutIssue, wire: provider.NameOpenAI,
		cacheVolume: testCacheVolume(t), turns: shoutTurns(t),
	}.run(t)
	if res.Outcome != verify.Verified {
		t.Fatalf("outcome %s (%s), want verified; index asked %q; ledger:\n%s", res.Outcome, res.Reason, idx.paths(), readLedger(t, out))
	}
	if !slices.Contains(idx.paths(), "/files/"+idx.wheelName()) {
		t.Errorf("the index never served the wheel: %q", idx.paths())
	}
	body := readBody(t, out)
	for _, want := range []string{"2 passed", "because `pyproject.toml` declares dependencies"} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q:\n%s", want, body)
		}
	}
}

// TestPytestToxDepsFromIndex: a project whose tests' dependency is
// declared only in tox.ini's [testenv] deps (pyproject.toml's test groups
// name none of it). The detected setup installs it from an index the
// network allows, and the test that imports it runs.
func TestPytestToxDepsFromIndex(t *testing.T) {
	sandboxtest.EndToEnd(t)
	idx := newPyPIIndex(t, filepath.Join(sandboxtest.ReposDir(), "py-deps", "package"), "textcase", "1.0.0")
	host := sandboxtest.FakeHost(t, idx)
	files := sqlShapedFiles("")
	files["pyproject.toml"] = strings.Replace(files["pyproject.toml"], "dev = [\"pytest\", \"ruff\"]", "dev = []", 1) +
		"\n[project.optional-dependencies]\ndocs = [\"sphinx\"]\n"
	files["tox.ini"] = "[tox]\nenvlist = py3\n\n[testenv]\ndeps =\n    textcase @ http://" + host + "/files/" + idx.wheelName() + "\n    py27: mock\ncommands = pytest\n"
	files["tests/test_title.py"] = "from textcase import title\n\n\ndef test_title():\n    assert title(\"ada\") == \"Ada\"\n"
	files[".github/agent.yml"] = "network:\n  allow: ['" + host + "']\n"
	res, out, _ := scenario{
		repo: gitRepo(t, files), issue: shoutIssue, wire: provider.NameOpenAI,
		cacheVolume: testCacheVolume(t), turns: shoutTurns(t),
	}.run(t)
	if res.Outcome != verify.Verified {
		t.Fatalf("outcome %s (%s), want verified; index asked %q; ledger:\n%s", res.Outcome, res.Reason, idx.paths(), readLedger(t, out))
	}
	if !slices.Contains(idx.paths(), "/files/"+idx.wheelName()) {
		t.Errorf("the index never served the wheel: %q", idx.paths())
	}
	if body := readBody(t, out); !strings.Contains(body, "2 passed") {
		t.Errorf("body lacks the two tests passing:\n%s", body)
	}
}
