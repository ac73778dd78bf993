package pipeline

import (
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/patchwright/patchwright/report"
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

func TestPyTestGroups(t *testing.T) {
	for name, tc := range map[string]struct {
		src  string
		want []pyGroup
	}{
		"sqlparse": {sqlparsePyproject, []pyGroup{
			{"pyproject.toml", "[project.optional-dependencies] dev", []string{"build"}},
			{"pyproject.toml", "[dependency-groups] dev", []string{"pytest", "coverage"}},
		}},
		"test extra": {"[project]\nname='a'\n[project.optional-dependencies]\ntest = ['pytest>=7', 'hypothesis']\ndocs = ['sphinx']\n",
			[]pyGroup{{"pyproject.toml", "[project.optional-dependencies] test", []string{"pytest>=7", "hypothesis"}}}},
		"tests, testing": {"[project.optional-dependencies]\ntests = ['a']\ntesting = ['b']\n", []pyGroup{
			{"pyproject.toml", "[project.optional-dependencies] tests", []string{"a"}},
			{"pyproject.toml", "[project.optional-dependencies] testing", []string{"b"}},
		}},
		"include-group": {"[dependency-groups]\ntest = ['pytest']\ndev = [{include-group = 'test'}, 'ruff']\n", []pyGroup{
			{"pyproject.toml", "[dependency-groups] test", []string{"pytest"}},
			{"pyproject.toml", "[dependency-groups] dev", []string{"ruff"}},
		}},
		"runtime only": {"[project]\ndependencies = ['requests']\n", nil},
		"no toml":      {"[project\n", nil},
		// What pip would read as an option, or a local path it would
		// build, is not passed.
		"options and paths": {"[project.optional-dependencies]\ntest = ['--index-url=http://x/', '-e .', './local', '/abs', 'x @ file:///tmp/x', ' ', 'ok']\n",
			[]pyGroup{{"pyproject.toml", "[project.optional-dependencies] test", []string{"ok"}}}},
	} {
		read := func(p string) []byte {
			if p == "pyproject.toml" {
				return []byte(tc.src)
			}
			return nil
		}
		if got := pyTestGroups(read, "."); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %q, want %q", name, got, tc.want)
		}
	}
}

// TestPyInstalls: one pip install per group of test requirements, each
// with its own report file and the group it installs, then the project
// itself; a project without test requirements gets the project alone.
func TestPyInstalls(t *testing.T) {
	files := map[string]string{"a/pyproject.toml": "[project]\ndependencies = ['requests']\n", "b/pyproject.toml": sqlparsePyproject, "b/tox.ini": "[testenv]\ndeps = pytest-mock\n"}
	read := func(p string) []byte {
		if s, ok := files[p]; ok {
			return []byte(s)
		}
		return nil
	}
	want := []report.DetectedCommand{{Command: pipInstall + "-e .", Manifest: "pyproject.toml"}}
	if got := pyInstalls(read, "a/pyproject.toml"); !slices.Equal(got, want) {
		t.Errorf("without test requirements: %+v, want %+v", got, want)
	}
	want = []report.DetectedCommand{
		{Command: pipInstall + "'build'", Manifest: "pyproject.toml", Group: "[project.optional-dependencies] dev"},
		{Command: pipInstall + "'pytest' 'coverage'", Manifest: "pyproject.toml", Group: "[dependency-groups] dev"},
		{Command: pipInstall + "'pytest-mock'", Manifest: "tox.ini", Group: "[testenv] deps"},
		{Command: pipInstall + "-e .", Manifest: "pyproject.toml"},
	}
	if got := pyInstalls(read, "b/pyproject.toml"); !slices.Equal(got, want) {
		t.Errorf("pyInstalls =\n%+v\nwant\n%+v", got, want)
	}
}

// TestPyDeclares: a setup.py or setup.cfg project calls for a detected
// install when it names install_requires or extras_require, or declares
// test requirements elsewhere; a bare one does not.
func TestPyDeclares(t *testing.T) {
	for name, tc := range map[string]struct {
		files map[string]string
		want  bool
	}{
		"setup.py install_requires":   {map[string]string{"setup.py": "from setuptools import setup\nsetup(name='s', install_requires=['text-unidecode>=1.3'])\n"}, true},
		"setup.py bare":               {map[string]string{"setup.py": "from setuptools import setup\nsetup(name='s')\n"}, false},
		"setup.py with tox deps":      {map[string]string{"setup.py": "from setuptools import setup\nsetup(name='s')\n", "tox.ini": "[testenv]\ndeps = pytest-mock\n"}, true},
		"setup.cfg install_requires":  {map[string]string{"setup.cfg": "[metadata]\nname = s\n[options]\ninstall_requires =\n    attrs\n"}, true},
		"pyproject build-system only": {map[string]string{"pyproject.toml": "[build-system]\nrequires = ['setuptools']\n"}, false},
	} {
		read := func(p string) []byte {
			if s, ok := tc.files[p]; ok {
				return []byte(s)
			}
			return nil
		}
		var m string
		for _, f := range pyProjectFiles {
			if _, ok := tc.files[f]; ok {
				m = f
				break
			}
		}
		if got := pyDeclares(read, m, read(m)); got != tc.want {
			t.Errorf("%s: pyDeclares = %v, want %v", name, got, tc.want)
		}
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
