package testsrc

import (
	"bytes"
	"cmp"
	"encoding/json"
	"go/parser"
	"go/token"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"gopkg.in/ini.v1"
)

// HarnessFile says what of a file belongs to the test harness: the code
// and configuration that decide how the tests run and what their results
// say, rather than code the tests test. A change to it can make a check
// pass whatever the code under test does, so a run whose harness changed
// is not verified (verify/findings, harness_changed).
type HarnessFile struct {
	// Role says what the file is to the harness, as a phrase that follows
	// the file's path ("is test-runner configuration"); empty when it is
	// not part of the harness.
	Role string
	// Helper is set when the role is "test helper", a rule that depends
	// on the file declaring no test (see HarnessChange).
	Helper bool
	// Part is the harness part of the file's content, to tell a change
	// that touches it: the whole file, or for a file that also holds other
	// things (pyproject.toml, setup.cfg, package.json, gradle.properties)
	// only its test-runner sections.
	Part string
}

// Harness is the one rule for "is this file part of the test harness".
// The rules, in order:
//
//   - a conftest.py: pytest loads it before any test, and its hooks,
//     imports and pytest_plugins can change every result;
//   - test-runner configuration (pytest.ini, tox.ini, noxfile.py,
//     Jest/Vitest/Mocha/Karma/AVA/Babel configuration, phpunit.xml,
//     .rspec; the pytest and tox sections of pyproject.toml and
//     setup.cfg; package.json's runner keys and test scripts). Build
//     files that build the code as well as list its tests (Makefile,
//     CMakeLists.txt, meson.build, Rakefile, pom.xml, build.gradle,
//     Cargo.toml) are not: a fix adds its test there, and the findings on
//     test configuration read the parts of them that choose tests;
//   - files that shadow the runner or the interpreter (pytest.py,
//     unittest.py, sitecustomize.py, usercustomize.py, *.pth, a pytest
//     or _pytest package) and programs named like a tool the checks run
//     (go, python, node, ... anywhere in the tree; gradlew, mvnw);
//   - vendored code (vendor/, third_party/, node_modules/, site-packages/);
//   - configuration that names programs or registries (.npmrc, .yarnrc*,
//     .pnpmfile.cjs, .cargo/config*, .mvn/, Gradle init scripts and
//     gradle.properties' org.gradle.* settings, .bundle/config, pip.conf,
//     rust-toolchain);
//   - test helpers: a source file the tests load that declares no test of
//     its own. That is a file of a test path (IsTestPath: tests/,
//     spec/, __mocks__/, src/test/, a Go _test.go file) that declares no
//     test, a source file in a directory whose name starts with "test"
//     or names assertions, mocks or fakes (testutil/, assert/, mocks/),
//     a Python module named test* that is not a test file (testing.py),
//     and a Go file that imports "testing".
//
// src may be nil (a file that was not read): then only the rules that
// need no content apply. Test data (IsTestData) is not harness: the
// findings on tests judge a change to it.
func Harness(p string, src []byte) HarnessFile {
	if IsTestData(p) {
		return HarnessFile{}
	}
	if role := pathRole(p); role != "" {
		return HarnessFile{Role: role, Part: codeOf(p, src)}
	}
	if src == nil {
		return HarnessFile{}
	}
	if part, ok := runnerSection(p, src); ok {
		if part == "" {
			return HarnessFile{}
		}
		return HarnessFile{Role: "holds test-runner configuration", Part: part}
	}
	if code, ok := helperCode(p, src); ok {
		return HarnessFile{Role: "is a test helper (a file the tests load that declares no test)", Helper: true, Part: code}
	}
	return HarnessFile{}
}

// HarnessChange says what a changed file is to the test harness (role,
// empty when neither version is part of it) and whether the change
// touches its harness part. base is nil for an added file, next for a
// deleted one. A file that declares tests in either version is a test
// file, not a helper, whatever the other version holds: a test file
// emptied or turned to a helper is the findings on tests' to judge.
func HarnessChange(p string, base, next []byte) (role string, changed bool) {
	before, after := Harness(p, base), Harness(p, next)
	if declaresTests(p, base) || declaresTests(p, next) {
		if before.Helper {
			before = HarnessFile{}
		}
		if after.Helper {
			after = HarnessFile{}
		}
	}
	role = cmp.Or(after.Role, before.Role)
	return role, role != "" && (base == nil || before != after)
}

// pathRole is the role a file has by its path alone.
func pathRole(p string) string {
	base := path.Base(p)
	switch {
	case base == "conftest.py":
		return "is a pytest conftest.py (pytest loads it before any test, and its hooks, imports and plugins can change every result)"
	case isRunnerConfig(p):
		return "is test-runner configuration"
	case shadows[base] || path.Ext(base) == ".pth" || hasDir(p, "pytest", "_pytest"):
		return "shadows the test runner or the Python interpreter's start-up"
	case toolNames[base]:
		return "is named like a program the checks run"
	case hasDir(p, "vendor", "third_party", "third-party", "node_modules", "site-packages", "bower_components"):
		return "is vendored code that the build and the tests use in place of a reviewed dependency"
	case namesPrograms(p):
		return "is configuration that names programs or registries the build and the tests use"
	}
	return ""
}

// shadows are module names that replace the runner or run at the
// interpreter's start: Python puts the current directory (or the script's)
// first on sys.path.
var shadows = map[string]bool{
	"pytest.py": true, "_pytest.py": true, "py.py": true, "pluggy.py": true, "unittest.py": true,
	"sitecustomize.py": true, "usercustomize.py": true, "site.py": true, "nose.py": true,
	"setupTests.js": true, "setupTests.ts": true, // Create React App loads it around every test
}

// toolNames are programs the checks run: a file of that name anywhere in
// the tree may be put on PATH or run by a script instead of the image's.
var toolNames = map[string]bool{
	"go": true, "gofmt": true, "python": true, "python3": true, "pip": true, "pip3": true, "pytest": true,
	"node": true, "npm": true, "npx": true, "yarn": true, "pnpm": true, "jest": true, "vitest": true,
	"cargo": true, "rustc": true, "mvn": true, "gradle": true, "java": true, "javac": true,
	"ruby": true, "bundle": true, "rake": true, "rspec": true, "php": true, "composer": true, "phpunit": true,
	"make": true, "cmake": true, "ctest": true, "meson": true, "ninja": true, "sh": true, "bash": true, "git": true,
	"gradlew": true, "gradlew.bat": true, "mvnw": true, "mvnw.cmd": true,
}

// runnerConfigNames and runnerConfigPrefixes are test-runner
// configuration files, whole.
var (
	runnerConfigNames = map[string]bool{
		"pytest.ini": true, ".pytest.ini": true, "tox.ini": true, "noxfile.py": true,
		"phpunit.xml": true, "phpunit.xml.dist": true, "phpunit.dist.xml": true, ".rspec": true, ".rspec-local": true,
		".babelrc": true, ".babelrc.json": true, ".nycrc": true, ".c8rc": true,
	}
	runnerConfigPrefixes = []string{"jest.config.", "jest.setup.", "vitest.config.", "vitest.workspace.", "vitest.setup.",
		".mocharc", "karma.conf.", "ava.config.", "babel.config.", ".babelrc.", "playwright.config.", "cypress.config."}
)

func isRunnerConfig(p string) bool {
	base := path.Base(p)
	if runnerConfigNames[base] {
		return true
	}
	for _, prefix := range runnerConfigPrefixes {
		if strings.HasPrefix(base, prefix) {
			return true
		}
	}
	return false
}

// namesPrograms: configuration that tells a package manager or build tool
// which programs to run or which registry to fetch from.
func namesPrograms(p string) bool {
	base, dir := path.Base(p), path.Dir(p)
	switch {
	case base == ".npmrc", strings.HasPrefix(base, ".yarnrc"), base == ".pnpmfile.cjs", base == ".pnpmfile.js":
		return true
	case path.Base(dir) == ".cargo" && strings.HasPrefix(base, "config"):
		return true
	case hasDir(p, ".mvn"), base == "settings.xml" && hasDir(p, ".m2"):
		return true
	case strings.HasSuffix(base, ".gradle") && (strings.HasPrefix(base, "init") || strings.HasSuffix(base, ".init.gradle")),
		strings.HasSuffix(base, ".init.gradle.kts"), hasDir(p, "init.d") && strings.Contains(base, ".gradle"):
		return true
	case base == "config" && path.Base(dir) == ".bundle":
		return true
	case base == "pip.conf", base == "pip.ini", base == ".pypirc", base == "rust-toolchain", base == "rust-toolchain.toml", base == ".python-version":
		return true
	case base == "go.work":
		// Its use and replace lines choose which copy of a module the
		// build and the tests compile.
		return true
	}
	return false
}

// runnerSection returns the test-runner part of a file that holds other
// things too, with ok true when p is such a file. An empty part means the
// file has no runner section (or does not parse).
func runnerSection(p string, src []byte) (string, bool) {
	switch path.Base(p) {
	case "pyproject.toml":
		return pyprojectRunner(src), true
	case "setup.cfg":
		return iniSections(src, "tool:pytest", "pytest", "tox", "aliases"), true
	case "package.json":
		return packageJSONRunner(src), true
	case "gradle.properties":
		return gradleProperties(src), true
	}
	return "", false
}

// pyprojectRunner is pyproject.toml's [tool.pytest*] and [tool.tox]
// tables, in a canonical form.
func pyprojectRunner(src []byte) string {
	var doc struct {
		Tool map[string]any `toml:"tool"`
	}
	if toml.Unmarshal(src, &doc) != nil {
		return ""
	}
	part := map[string]any{}
	for k, v := range doc.Tool {
		if strings.HasPrefix(k, "pytest") || k == "tox" || k == "nox" {
			part[k] = v
		}
	}
	return canonical(part)
}

// iniSections is the named sections of an INI file, and any section that
// starts with one of the names followed by ':' (tox's testenv:py3).
func iniSections(src []byte, names ...string) string {
	f, err := ini.LoadSources(ini.LoadOptions{AllowPythonMultilineValues: true, SkipUnrecognizableLines: true, IgnoreInlineComment: true}, src)
	if err != nil {
		return ""
	}
	part := map[string]map[string]string{}
	for _, s := range f.Sections() {
		name := s.Name()
		if slices.ContainsFunc(names, func(n string) bool { return name == n || strings.HasPrefix(name, n+":") }) {
			part[name] = s.KeysHash()
		}
	}
	return canonical(part)
}

// packageJSONRunner is package.json's test-runner keys and its scripts
// whose name mentions tests (npm test runs "pretest", "test",
// "posttest").
func packageJSONRunner(src []byte) string {
	var pkg map[string]json.RawMessage
	if json.Unmarshal(src, &pkg) != nil {
		return ""
	}
	part := map[string]any{}
	for _, k := range []string{"jest", "mocha", "ava", "vitest", "nyc", "c8", "babel"} {
		if raw, ok := pkg[k]; ok {
			part[k] = raw
		}
	}
	var scripts map[string]string
	_ = json.Unmarshal(pkg["scripts"], &scripts)
	for name, s := range scripts {
		if strings.Contains(name, "test") {
			part["scripts/"+name] = s
		}
	}
	return canonical(part)
}

// gradleProperties is the org.gradle.* settings (JVM arguments, the
// daemon's Java home), which name the programs Gradle runs.
func gradleProperties(src []byte) string {
	var lines []string
	for l := range strings.Lines(string(src)) {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "org.gradle.") || strings.HasPrefix(l, "systemProp.") {
			lines = append(lines, l)
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// canonical is a stable text of a decoded value; "" for an empty map.
func canonical[M ~map[string]V, V any](m M) string {
	if len(m) == 0 {
		return ""
	}
	b, _ := json.Marshal(m) // maps marshal with sorted keys
	return string(b)
}

// helperDirs are directory names of test helpers besides those starting
// with "test".
var helperDirs = []string{"assert", "asserts", "assertion", "assertions", "require", "mock", "mocks", "fake", "fakes", "__mocks__"}

// sourceCode is a source file's code without comments and layout (Code;
// for Go, goTokens), ok false for a language not read or a file that
// does not parse.
func sourceCode(p string, src []byte) (string, bool) {
	if path.Ext(p) == ".go" {
		return goTokens(src)
	}
	if r := readerOf(p); r != nil && src != nil {
		return r.code(p, src)
	}
	return "", false
}

// codeOf is a harness file's part: its code when it parses, so a
// reworded comment is no change, else its whole text.
func codeOf(p string, src []byte) string {
	if code, ok := sourceCode(p, src); ok {
		return code
	}
	return string(src)
}

// declaresTests reports whether a version of a file declares a test, by
// its content.
func declaresTests(p string, src []byte) bool {
	r := readerOf(p)
	if r == nil || src == nil {
		return false
	}
	tests, _ := r.tests(p, src)
	return len(tests) > 0
}

// helperCode returns a test helper's code (Code: comments and layout
// removed, so rewording a comment changes nothing), with ok false for a
// file that is not a helper (see Harness) or does not parse: a file that
// does not parse is no code the tests can run.
func helperCode(p string, src []byte) (string, bool) {
	r := readerOf(p)
	if r == nil || path.Base(p) == "CMakeLists.txt" || path.Base(p) == "meson.build" || len(bytes.TrimSpace(src)) == 0 {
		return "", false
	}
	code, ok := sourceCode(p, src)
	if !ok {
		return "", false
	}
	// Whether the file declares tests is read from its content, whatever
	// its path: a Django tests.py is a test file, a tests/helpers.py is not.
	if declaresTests(p, src) {
		return "", false
	}
	return code, isHelperPath(p, src)
}

// isHelperPath is the path (and for Go the import) half of the helper
// rule, for a file that declares no test.
func isHelperPath(p string, src []byte) bool {
	if IsTestPath(p) {
		return true
	}
	for _, d := range strings.Split(path.Dir(p), "/") {
		if strings.HasPrefix(strings.ToLower(d), "test") || slices.Contains(helperDirs, d) {
			return true
		}
	}
	switch path.Ext(p) {
	case ".py":
		return strings.HasPrefix(path.Base(p), "test")
	case ".go":
		return importsTesting(p, src)
	}
	return false
}

// importsTesting reports whether a Go file imports the testing package,
// as helpers that take a *testing.T or testing.TB do.
func importsTesting(p string, src []byte) bool {
	f, err := parser.ParseFile(token.NewFileSet(), p, src, parser.ImportsOnly)
	if err != nil {
		return false
	}
	for _, imp := range f.Imports {
		if v, err := strconv.Unquote(imp.Path.Value); err == nil && v == "testing" {
			return true
		}
	}
	return false
}

// goTokens is a Go file's tokens without comments and without the
// semicolons Go inserts at line ends, so that neither a reworded comment
// nor a reflowed function is a change (goCode keeps those semicolons).
func goTokens(src []byte) (string, bool) { return goScan(src, false) }
