package pipeline

import (
	"slices"
	"strings"
	"testing"
)

// TestPySideRequirements: the test requirements a Python project declares
// beside pyproject.toml are read where static (setup.cfg's extras, tox's
// [testenv] deps, nox's literal installs, pytest's required_plugins) and
// left out where computed or conditional.
func TestPySideRequirements(t *testing.T) {
	files := map[string]string{
		"lib/setup.cfg": "[metadata]\nname = lib\n\n[options.extras_require]\ntest =\n    pytest-mock\n    freezegun\ndocs =\n    sphinx\n\n[tool:pytest]\nrequired_plugins = pytest-timeout\n",
		"lib/tox.ini": "[tox]\nenvlist = py311\n\n[testenv]\ndeps =\n    pytest>=7  # the runner\n    -rrequirements-dev.txt\n    {[base]deps}\n    py38: mock\n    .[test]\n    hypothesis\n" +
			"commands = pytest\n\n[pytest]\nrequired_plugins = pytest-xdist\n",
		"lib/pytest.ini": "[pytest]\nrequired_plugins = pytest-randomly\n",
		"lib/noxfile.py": "import nox\n\n@nox.session\ndef tests(session):\n    session.install(\"pytest\", 'responses')\n    session.install(*DEPS)\n    session.install(\"-e\", \".\")\n    session.install(extra)\n",
	}
	read := func(p string) []byte {
		if s, ok := files[p]; ok {
			return []byte(s)
		}
		return nil
	}
	pyproject := "[project]\nname = 'lib'\n[project.optional-dependencies]\ndev = ['ruff']\n[tool.pytest.ini_options]\nrequired_plugins = ['pytest-cov']\n"
	files["lib/pyproject.toml"] = pyproject
	var got []string
	for _, g := range pyTestGroups(read, "lib") {
		got = append(got, g.File+" "+g.Where+": "+strings.Join(g.Reqs, " "))
	}
	want := []string{
		"pyproject.toml [project.optional-dependencies] dev: ruff",
		"setup.cfg [options.extras_require] test: pytest-mock freezegun",
		"setup.cfg [tool:pytest] required_plugins: pytest-timeout",
		"tox.ini [testenv] deps: pytest>=7 hypothesis",
		"tox.ini [pytest] required_plugins: pytest-xdist",
		"pytest.ini [pytest] required_plugins: pytest-randomly",
		"noxfile.py session.install: pytest responses",
		"pyproject.toml [tool.pytest.ini_options] required_plugins: pytest-cov",
	}
	if !slices.Equal(got, want) {
		t.Errorf("groups\n%q\nwant\n%q", got, want)
	}
	if got := pySideGroups(read, "other", nil); len(got) != 0 {
		t.Errorf("a project with no side files: %q", got)
	}
	// A broken file is no requirement and no failure.
	files["x/tox.ini"] = "[testenv\ndeps = a\n"
	files["x/pyproject.toml"] = "[tool.pytest.ini_options\n"
	if got := pySideGroups(read, "x", []byte(files["x/pyproject.toml"])); len(got) != 0 {
		t.Errorf("broken files: %q", got)
	}
}
