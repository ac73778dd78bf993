package testsrc

import (
	"strings"
	"testing"
)

// TestHarness: every rule of Harness by file kind, with the files next to
// each rule that are not part of the harness, so a rule that grows too
// wide fails here.
func TestHarness(t *testing.T) {
	const (
		goHelper   = "package assert\n\nimport \"testing\"\n\nfunc Equal(t testing.TB, got, want int) {\n\tif got != want {\n\t\tt.Fatalf(\"got %d, want %d\", got, want)\n\t}\n}\n"
		goCode     = "package calc\n\nfunc Add(a, b int) int { return a + b }\n"
		goTest     = "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {}\n"
		goHelperT  = "package calc\n\nimport \"testing\"\n\nfunc check(t *testing.T, got, want int) {}\n"
		pyTest     = "from calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n"
		pyHelper   = "def assert_sum(got, want):\n    assert got == want\n"
		jsTest     = "test('adds', () => { expect(1).toBe(1) })\n"
		rubyHelper = "require 'minitest/autorun'\n"
	)
	cases := []struct {
		path, src string
		harness   bool
	}{
		// conftest and runner configuration, whole
		{"conftest.py", "from helpers import pytest_collection_modifyitems\n", true},
		{"tests/conftest.py", "import pytest\n", true},
		{"pytest.ini", "[pytest]\naddopts = -q\n", true},
		{"tox.ini", "[tox]\n", true},
		{"noxfile.py", "import nox\n", true},
		{"jest.config.js", "module.exports = {}\n", true},
		{"vitest.config.ts", "export default {}\n", true},
		{".mocharc.yml", "spec: test\n", true},
		{"babel.config.js", "module.exports = {}\n", true},
		{"phpunit.xml", "<phpunit/>\n", true},
		{".rspec", "--require spec_helper\n", true},
		{"Makefile", "test:\n\tgo test ./...\n", false}, // it builds the code too
		{"tests/CMakeLists.txt", "add_test(NAME a COMMAND a)\n", false},
		// runner sections of shared files
		{"pyproject.toml", "[tool.pytest.ini_options]\naddopts = \"-p helpers\"\n", true},
		{"pyproject.toml", "[project]\nname = \"calc\"\n", false},
		{"setup.cfg", "[tool:pytest]\naddopts = -q\n", true},
		{"setup.cfg", "[metadata]\nname = calc\n", false},
		{"package.json", `{"scripts":{"test":"jest"}}`, true},
		{"package.json", `{"name":"calc","scripts":{"build":"tsc"}}`, false},
		{"gradle.properties", "org.gradle.jvmargs=-javaagent:x.jar\n", true},
		{"gradle.properties", "version=1.0\n", false},
		// files that shadow the runner or the interpreter, and tools
		{"pytest.py", "import sys\nsys.exit(0)\n", true},
		{"sitecustomize.py", "", true},
		{"usercustomize.py", "", true},
		{"lib/x.pth", "import os\n", true},
		{"unittest.py", "", true},
		{"pytest/__init__.py", "", true},
		{".venv/bin/go", "#!/bin/sh\nexit 0\n", true},
		{"bin/python", "#!/bin/sh\n", true},
		{"gradlew", "#!/bin/sh\n", true},
		{"cmd/go/main.go", goCode, false},
		// vendored code
		{"vendor/github.com/x/assert/assert.go", goCode, true},
		{"third_party/lib/x.py", "", true},
		{"node_modules/chai/index.js", "", true},
		// configuration that names programs or registries
		{".npmrc", "registry=https://example.com/\n", true},
		{".yarnrc.yml", "yarnPath: x.js\n", true},
		{".cargo/config.toml", "[build]\nrustc = \"./x\"\n", true},
		{".mvn/jvm.config", "-javaagent:x.jar\n", true},
		{"init.gradle", "", true},
		{"gradle/init.d/x.init.gradle.kts", "", true},
		{".bundle/config", "BUNDLE_PATH: x\n", true},
		{"pip.conf", "[global]\n", true},
		{"rust-toolchain.toml", "", true},
		{"go.work", "go 1.22\n\nuse .\n", true},
		{"sub/go.work", "go 1.22\n\nreplace example.com/x => ../x\n", true},
		// test helpers
		{"internal/assert/assert.go", goHelper, true},
		{"internal/testutil/util.go", goCode, true},
		{"calc/check.go", goHelperT, true},
		{"helpers_test.go", goHelperT, true},
		{"calc_test.go", goTest, false},
		{"calc.go", goCode, false},
		{"tests/helpers.py", pyHelper, true},
		{"tests/test_calc.py", pyTest, false},
		{"testing.py", pyHelper, true},
		{"tests.py", pyTest, false},
		{"calc.py", pyHelper, false},
		{"tests/__init__.py", "", false},
		{"test/helpers.js", "module.exports = {}\n", true},
		{"test/calc.js", jsTest, false},
		{"src/calc.test.js", jsTest, false},
		{"__mocks__/fs.js", "module.exports = {}\n", true},
		{"src/calc.js", "module.exports = {}\n", false},
		{"test/test_helper.rb", rubyHelper, true},
		{"tests/common/mod.rs", "pub fn setup() {}\n", true},
		{"src/lib.rs", "pub fn add() {}\n", false},
		{"src/test/java/calc/Util.java", "class Util {}\n", true},
		{"tests/bootstrap.php", "<?php\n", true},
		// test data is judged as test data, not harness
		{"testdata/x.go", goHelper, false},
		{"fixtures/data.py", pyHelper, false},
		{"README.md", "tests\n", false},
	}
	for _, c := range cases {
		h := Harness(c.path, []byte(c.src))
		if (h.Role != "") != c.harness {
			t.Errorf("Harness(%s, %q) = %q, want harness %v", c.path, c.src, h.Role, c.harness)
		}
		if h.Role == "" && h.Part != "" {
			t.Errorf("Harness(%s) has a part %q and no role", c.path, h.Part)
		}
	}
}

// TestHarnessParts: a change outside a shared file's runner sections
// leaves its part unchanged; a change inside changes it.
func TestHarnessParts(t *testing.T) {
	cases := []struct {
		path, before, after string
		changed             bool
	}{
		{"pyproject.toml", "[project]\nname = \"a\"\n[tool.pytest.ini_options]\naddopts = \"-q\"\n", "[project]\nname = \"b\"\n[tool.pytest.ini_options]\naddopts = \"-q\"\n", false},
		{"pyproject.toml", "[tool.pytest.ini_options]\naddopts = \"-q\"\n", "[tool.pytest.ini_options]\naddopts = \"-q -p x\"\n", true},
		{"setup.cfg", "[metadata]\nname = a\n[tool:pytest]\naddopts = -q\n", "[metadata]\nname = b\n[tool:pytest]\naddopts = -q\n", false},
		{"package.json", `{"version":"1","scripts":{"test":"jest"}}`, `{"version":"2","scripts":{"test":"jest"}}`, false},
		{"package.json", `{"scripts":{"test":"jest"}}`, `{"scripts":{"test":"jest","pretest":"node x.js"}}`, true},
		{"gradle.properties", "version=1\n", "version=1\norg.gradle.jvmargs=-javaagent:x.jar\n", true},
	}
	for _, c := range cases {
		b, a := Harness(c.path, []byte(c.before)), Harness(c.path, []byte(c.after))
		if (b != a) != c.changed {
			t.Errorf("%s: %q -> %q: changed %v, want %v (%+v, %+v)", c.path, c.before, c.after, b != a, c.changed, b, a)
		}
	}
}

// TestHarnessUnread: a file that was not read is judged by its path.
func TestHarnessUnread(t *testing.T) {
	for p, want := range map[string]bool{"pytest.py": true, "vendor/x/y.go": true, ".npmrc": true, "tests/helpers.py": false, "calc.go": false} {
		if got := Harness(p, nil).Role != ""; got != want {
			t.Errorf("Harness(%s, nil) harness %v, want %v", p, got, want)
		}
	}
	if !strings.Contains(Harness("conftest.py", nil).Role, "conftest") {
		t.Errorf("conftest role = %q", Harness("conftest.py", nil).Role)
	}
}

// TestHarnessChange: a test file that loses its tests is no helper, a
// helper whose comments alone changed is unchanged, an added harness file
// is a change, a reworded comment is none, and garbage is no helper.
func TestHarnessChange(t *testing.T) {
	const (
		test    = "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {}\n"
		helper  = "package calc\n\nimport \"testing\"\n\n// check checks.\nfunc check(t *testing.T) { t.Fatal() }\n"
		noop    = "package calc\n\nimport \"testing\"\n\n// check checks.\nfunc check(t *testing.T) {}\n"
		comment = "package calc\n\nimport \"testing\"\n\n// check checks, it says.\nfunc check(t *testing.T) { t.Fatal() }\n"
	)
	cases := []struct {
		name, path, base, next string
		added                  bool
		harness, changed       bool
	}{
		{"test file emptied", "calc_test.go", test, "package calc\n", false, false, false},
		{"test file turned helper", "calc_test.go", test, helper, false, false, false},
		{"helper no-op'd", "helpers_test.go", helper, noop, false, true, true},
		{"helper reworded", "helpers_test.go", helper, comment, false, true, false},
		{"helper added", "helpers_test.go", "", helper, true, true, true},
		{"garbage helper", "helpers_test.go", "\x00{{{", "\x00{{{{", false, false, false},
		{"conftest comment reworded", "conftest.py", "# a\nimport x\n", "# b\nimport x\n", false, true, false},
		{"conftest import added", "conftest.py", "import x\n", "import x\nfrom helpers import pytest_configure\n", false, true, true},
		{"pyproject outside pytest", "pyproject.toml", "[project]\nname = \"a\"\n", "[project]\nname = \"b\"\n", false, false, false},
	}
	for _, c := range cases {
		var base []byte
		if !c.added {
			base = []byte(c.base)
		}
		role, changed := HarnessChange(c.path, base, []byte(c.next))
		if (role != "") != c.harness || changed != c.changed {
			t.Errorf("%s: HarnessChange = %q, %v; want harness %v, changed %v", c.name, role, changed, c.harness, c.changed)
		}
	}
}

// TestHarnessGoReflow: a Go helper reflowed onto more lines, with a
// comment added, is unchanged; one whose body changed is changed.
func TestHarnessGoReflow(t *testing.T) {
	const (
		one  = "package calc\n\nimport \"os\"\n\nfunc init() { os.Setenv(\"A\", \"1\") }\n"
		many = "package calc\n\nimport \"os\"\n\nfunc init() {\n\tos.Setenv(\"A\", \"1\") // why\n}\n"
		body = "package calc\n\nimport \"os\"\n\nfunc init() {\n\tos.Setenv(\"A\", \"2\")\n}\n"
	)
	if _, changed := HarnessChange("helpers_test.go", []byte(one), []byte(many)); changed {
		t.Error("a reflow and a comment changed the helper")
	}
	if _, changed := HarnessChange("helpers_test.go", []byte(one), []byte(body)); !changed {
		t.Error("a changed body left the helper unchanged")
	}
}
