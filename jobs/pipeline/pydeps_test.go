package pipeline

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// sqlparsePyproject is the part of sqlparse's pyproject.toml that
// declares dependencies: a dev extra without pytest, and pytest in a
// PEP 735 dev group.
const sqlparsePyproject = `[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "sqlparse"
dynamic = ["version"]

[project.optional-dependencies]
dev = [
    "build",
]
doc = [
    "sphinx",
]

[dependency-groups]
dev = [
    "pytest",
    "coverage",
    "build",
]
`

func TestPyTestRequirements(t *testing.T) {
	for name, tc := range map[string]struct {
		src  string
		want []string
	}{
		"sqlparse":       {sqlparsePyproject, []string{"build", "pytest", "coverage"}},
		"test extra":     {"[project]\nname='a'\n[project.optional-dependencies]\ntest = ['pytest>=7', 'hypothesis']\ndocs = ['sphinx']\n", []string{"pytest>=7", "hypothesis"}},
		"tests, testing": {"[project.optional-dependencies]\ntests = ['a']\ntesting = ['b']\n", []string{"a", "b"}},
		"include-group":  {"[dependency-groups]\ntest = ['pytest']\ndev = [{include-group = 'test'}, 'ruff']\n", []string{"pytest", "ruff"}},
		"runtime only":   {"[project]\ndependencies = ['requests']\n", nil},
		"no toml":        {"[project\n", nil},
		// What pip would read as an option, or a local path it would
		// build, is not passed.
		"options and paths": {"[project.optional-dependencies]\ntest = ['--index-url=http://x/', '-e .', './local', '/abs', 'x @ file:///tmp/x', ' ', 'ok']\n", []string{"ok"}},
	} {
		if got := pyTestRequirements([]byte(tc.src)); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", name, got, tc.want)
		}
	}
}

func TestPyprojectInstall(t *testing.T) {
	if got := pyprojectInstall([]byte("[project]\ndependencies = ['requests']\n")); got != pipInstall+"-e ." {
		t.Errorf("without test requirements: %q", got)
	}
	got := pyprojectInstall([]byte(sqlparsePyproject))
	first, second, ok := strings.Cut(got, " && "+pipInstall)
	if !ok || second != "-e ." {
		t.Fatalf("%q: want the test requirements, then %q", got, pipInstall+"-e .")
	}
	if !strings.HasSuffix(first, "'build' 'pytest' 'coverage'") || !strings.Contains(first, "--system-site-packages") {
		t.Errorf("first command %q", first)
	}
	if strings.Count(got, "/tmp/.patchwright-pip-$$-test.json") != 1 || strings.Count(got, "/tmp/.patchwright-pip-$$.json") != 1 {
		t.Errorf("the two installs must write two reports: %q", got)
	}
}

func TestImagePytest(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{".venv/lib/python3.11/site-packages/pip", "api/.venv/lib/python3.12/site-packages/pytest"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	got := imagePytest(dir, map[string]string{".": ".venv", "api": "api/.venv"})
	if !maps.Equal(got, map[string]bool{".": true}) {
		t.Errorf("imagePytest = %v, want the root's alone", got)
	}
}
