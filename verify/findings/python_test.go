package findings

import "testing"

const pyCode1 = `
def greet(name):
    # say hello
    return "hello " + name
`

const pyTest1 = `
import pytest

from app.greet import greet


def test_hello():
    assert greet("a") == "hello a"


class TestTable:
    def test_b(self):
        assert greet("b") == "hello b"

    def test_c(self):
        assert greet("c") == "hello c"
`

func pythonCases() map[string]analysisCase {
	return map[string]analysisCase{
		"python/test removed": {
			files: []File{mod("tests/test_greet.py", pyTest1, replace(pyTest1, "\n\ndef test_hello():\n    assert greet(\"a\") == \"hello a\"\n", ""))},
			want:  []string{"tests_removed tests/test_greet.py:6"},
		},
		"python/method removed from a test class": {
			files: []File{mod("tests/test_greet.py", pyTest1, replace(pyTest1, "\n    def test_c(self):\n        assert greet(\"c\") == \"hello c\"\n", ""))},
			want:  []string{"tests_removed tests/test_greet.py:14"},
		},
		"python/new test beside the old ones": {
			files: []File{mod("tests/test_greet.py", pyTest1, pyTest1+"\n\ndef test_empty():\n    assert greet(\"\") == \"hello \"\n")},
		},
		"python/test moved to another file": {
			files: []File{
				mod("tests/test_greet.py", pyTest1, replace(pyTest1, "\n\ndef test_hello():\n    assert greet(\"a\") == \"hello a\"\n", "")),
				add("tests/test_hello.py", "from app.greet import greet\n\n\ndef test_hello():\n    assert greet(\"a\") == \"hello a\"\n"),
			},
		},
		"python/test file deleted": {
			files: []File{del("tests/test_greet.py", pyTest1)},
			want:  []string{"tests_removed tests/test_greet.py:0"},
		},
		"python/test renamed so pytest no longer collects it": {
			files: []File{mod("tests/test_greet.py", pyTest1, replace(pyTest1, "def test_hello", "def check_hello"))},
			want:  []string{"tests_removed tests/test_greet.py:6"},
		},
		"python/pytest.mark.skip added": {
			files: []File{mod("tests/test_greet.py", pyTest1, replace(pyTest1, "\ndef test_hello", "\n@pytest.mark.skip(reason=\"flaky\")\ndef test_hello"))},
			want:  []string{"test_skipped tests/test_greet.py:6"},
		},
		"python/skipif added": {
			files: []File{mod("tests/test_greet.py", pyTest1, replace(pyTest1, "    def test_b", "    @pytest.mark.skipif(True, reason=\"later\")\n    def test_b"))},
			want:  []string{"test_skipped tests/test_greet.py:11"},
		},
		"python/xfail added": {
			files: []File{mod("tests/test_greet.py", pyTest1, replace(pyTest1, "    def test_c", "    @pytest.mark.xfail\n    def test_c"))},
			want:  []string{"test_skipped tests/test_greet.py:14"},
		},
		"python/skip on the class": {
			files: []File{mod("tests/test_greet.py", pyTest1, replace(pyTest1, "class TestTable", "@pytest.mark.skip\nclass TestTable"))},
			want:  []string{"test_skipped tests/test_greet.py:10"},
		},
		"python/pytestmark skips the module": {
			files: []File{mod("tests/test_greet.py", pyTest1, replace(pyTest1, "import pytest\n", "import pytest\n\npytestmark = pytest.mark.skip(\"broken\")\n"))},
			want:  []string{"test_skipped tests/test_greet.py:3"},
		},
		"python/skipTest call added": {
			files: []File{mod("tests/test_greet.py", pyTest1, replace(pyTest1, "    def test_b(self):\n", "    def test_b(self):\n        self.skipTest(\"later\")\n"))},
			want:  []string{"test_skipped tests/test_greet.py:12"},
		},
		"python/parametrize is not a skip": {
			files: []File{
				mod("app/greet.py", pyCode1, replace(pyCode1, `"hello "`, `"hi "`)),
				mod("tests/test_greet.py", pyTest1, replace(replace(pyTest1, "\ndef test_hello():", "\n@pytest.mark.parametrize(\"skip_empty\", [True])\ndef test_hello(skip_empty):"), "hello a", "hi a")),
			},
		},
		"python/skip removed": {
			files: []File{mod("tests/test_greet.py", replace(pyTest1, "\ndef test_hello", "\n@pytest.mark.skipif(\n    True,\n    reason=\"flaky\",\n)\ndef test_hello"), pyTest1)},
		},
		"python/expected value edited, code unchanged": {
			files: []File{mod("tests/test_greet.py", pyTest1, replace(pyTest1, `== "hello b"`, `== "hello B"`))},
			want:  []string{"assertion_changed tests/test_greet.py:12"},
		},
		"python/assertion loosened, code changed only in a comment": {
			files: []File{
				mod("app/greet.py", pyCode1, replace(pyCode1, "# say hello", "# say hello politely")),
				mod("tests/test_greet.py", pyTest1, replace(pyTest1, `assert greet("a") == "hello a"`, `assert greet("a")`)),
			},
			want: []string{"assertion_changed tests/test_greet.py:7"},
		},
		"python/early return added": {
			files: []File{mod("tests/test_greet.py", pyTest1, replace(pyTest1, "    def test_c(self):\n", "    def test_c(self):\n        if True: return\n"))},
			want:  []string{"assertion_changed tests/test_greet.py:15"},
		},
		"python/expected value edited with the code": {
			files: []File{
				mod("app/greet.py", pyCode1, replace(pyCode1, `"hello "`, `"hi "`)),
				mod("tests/test_greet.py", pyTest1, replace(pyTest1, `"hello `, `"hi `)),
			},
		},
		"python/indentation is code": {
			files: []File{
				mod("app/greet.py", "def greet(name):\n    if name:\n        name = name.strip()\n    return name\n", "def greet(name):\n    if name:\n        name = name.strip()\n        return name\n"),
				mod("tests/test_greet.py", pyTest1, replace(pyTest1, "hello a", "a")),
			},
		},
		"python/only tests changed for a bug": {
			title: "greet() returns the wrong greeting",
			files: []File{mod("tests/test_greet.py", pyTest1, pyTest1+"\n\ndef test_empty():\n    assert greet(\"\") == \"hello \"\n")},
			want:  []string{"only_tests_changed tests/test_greet.py:16"},
		},
		"python/addopts deselects tests": {
			files: []File{mod("pytest.ini", "[pytest]\naddopts = -q\n", "[pytest]\naddopts = -q -k 'not greet'\n")},
			want:  []string{"harness_changed pytest.ini:2", "test_skipped pytest.ini:2"},
		},
		"python/setup.cfg testpaths added": {
			files: []File{mod("setup.cfg", "[metadata]\nname = app\n", "[metadata]\nname = app\n\n[tool:pytest]\ntestpaths =\n    tests/unit\n")},
			want:  []string{"harness_changed setup.cfg:3", "test_skipped setup.cfg:5"},
		},
		"python/pyproject pytest options changed": {
			files: []File{mod("pyproject.toml", "[project]\nname = \"app\"\n\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n", "[project]\nname = \"app\"\n\n[tool.pytest.ini_options]\ntestpaths = [\"tests/unit\"]\n")},
			want:  []string{"harness_changed pyproject.toml:5", "test_skipped pyproject.toml:5"},
		},
		"python/pyproject unrelated change": {
			files: []File{mod("pyproject.toml", "[project]\nname = \"app\"\n\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n", "[project]\nname = \"app\"\ndescription = \"x\"\n\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n")},
		},
		"python/conftest ignores a file": {
			files: []File{mod("tests/conftest.py", "import pytest\n", "import pytest\n\ncollect_ignore = [\"test_greet.py\"]\n")},
			want:  []string{"harness_changed tests/conftest.py:2", "test_skipped tests/conftest.py:3"},
		},
		"python/conftest hook added": {
			files: []File{add("conftest.py", "import pytest\n\n\ndef pytest_collection_modifyitems(config, items):\n    items.sort(key=str)\n")},
			// test_skipped is testconfig.go's reading of the same line.
			want: []string{"harness_changed conftest.py:4", "test_skipped conftest.py:4"},
		},
		"python/conftest hook unchanged but for a comment": {
			files: []File{mod("conftest.py", "def pytest_sessionstart(session):\n    pass\n", "def pytest_sessionstart(session):\n    pass  # nothing to do\n")},
		},
		"python/conftest plugins added": {
			files: []File{mod("tests/conftest.py", "import pytest\n", "import pytest\n\npytest_plugins = [\"tests.plugin\"]\n")},
			want:  []string{"harness_changed tests/conftest.py:3"},
		},
		"python/conftest fixture added": {
			files: []File{mod("tests/conftest.py", "import pytest\n", "import pytest\n\n\n@pytest.fixture\ndef name():\n    return \"a\"\n")},
			// Any change to a conftest.py changes how the tests run.
			want: []string{"harness_changed tests/conftest.py:2"},
		},
	}
}

func TestPython(t *testing.T) { golden(t, "python", runCases(t, pythonCases())) }
