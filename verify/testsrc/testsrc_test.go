package testsrc

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// agreeCase is one file of testdata/agree: its path there, its source and
// the tests its "// want:" comment says go test lists ("error" when go
// test refuses to build the package).
type agreeCase struct {
	path string
	src  []byte
	want []string
}

func agreeCases(t *testing.T) []agreeCase {
	t.Helper()
	var out []agreeCase
	err := filepath.WalkDir("testdata/agree", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return err
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		c := agreeCase{path: filepath.ToSlash(strings.TrimPrefix(p, "testdata/agree/")), src: src, want: []string{}}
		for l := range strings.Lines(string(src)) {
			if w, ok := strings.CutPrefix(strings.TrimSpace(l), "// want:"); ok {
				c.want = append(c.want, strings.Fields(w)...)
			}
		}
		out = append(out, c)
		return nil
	})
	if err != nil || len(out) < 10 {
		t.Fatalf("read testdata/agree: %v (%d cases)", err, len(out))
	}
	return out
}

// names is what Tests says of a file, in the shape of a want list.
func names(p string, src []byte) []string {
	tests, err := Tests(p, src)
	if err != nil {
		return []string{"error"}
	}
	out := []string{}
	for _, t := range tests {
		out = append(out, t.Name)
	}
	slices.Sort(out)
	return out
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

func TestTestsrcTable(t *testing.T) {
	for _, c := range agreeCases(t) {
		if got := names(c.path, c.src); !slices.Equal(got, sorted(c.want)) {
			t.Errorf("%s: Tests = %q, want %q", c.path, got, c.want)
		}
	}
}

// TestTestsrcAgreesWithGoTest writes testdata/agree into a temporary
// module and compares Tests with what the real toolchain lists, package
// by package. Vet is off: it is a lint run beside the tests, not the rule
// for which tests exist.
func TestTestsrcAgreesWithGoTest(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go toolchain on PATH")
	}
	dir := t.TempDir()
	cases := agreeCases(t)
	for _, c := range cases {
		p := filepath.Join(dir, filepath.FromSlash(c.path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, c.src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/m\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "test", "-vet=off", "-list", ".", "-json", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOFLAGS=", "GOOS=linux", "GOARCH=amd64")
	out, _ := cmd.Output() // failing packages make it exit 1
	listed := goList(t, out)
	for _, c := range cases {
		pkg := "example.com/m/" + path.Dir(c.path)
		got, ok := listed[pkg]
		if !ok {
			got = []string{} // a directory go test ./... skips
		}
		if mine := names(c.path, c.src); !slices.Equal(mine, sorted(got)) {
			t.Errorf("%s: testsrc says %q, go test -list says %q", c.path, mine, got)
		}
	}
}

// goList reads go test -json -list output into each package's listed
// names, or ["error"] for a package that failed.
func goList(t *testing.T, out []byte) map[string][]string {
	t.Helper()
	listed := map[string][]string{}
	for _, l := range strings.Split(string(out), "\n") {
		if l == "" {
			continue
		}
		var e struct{ Action, Package, Output string }
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("go test -json: %v: %q", err, l)
		}
		name := strings.TrimSpace(e.Output)
		switch {
		case e.Package == "":
		case e.Action == "fail":
			listed[e.Package] = []string{"error"}
		case e.Action == "output" && name != "" && !strings.ContainsAny(name, " \t"):
			listed[e.Package] = append(listed[e.Package], name)
		case e.Action == "pass" && listed[e.Package] == nil:
			listed[e.Package] = []string{}
		}
	}
	if len(listed) < 5 {
		t.Fatalf("go test listed too little:\n%s", out)
	}
	return listed
}

func TestExcluded(t *testing.T) {
	plain := []byte("package p\n")
	for p, want := range map[string]string{
		"calc/calc_test.go":         "",
		"calc/calc_linux_test.go":   "",
		"calc/windows_test.go":      "", // the first element of a name is never a system
		"calc/calc_windows_test.go": "the name `calc_windows_test.go` builds it only for the system it names, not linux/amd64",
		"calc/calc_arm64_test.go":   "the name `calc_arm64_test.go` builds it only for the system it names, not linux/amd64",
		"_x/calc_test.go":           "`go test ./...` skips the directory `_x`, as go ignores names beginning with `_`",
		"a/.hidden/calc_test.go":    "`go test ./...` skips the directory `.hidden`, as go ignores names beginning with `.`",
		"a/testdata/calc_test.go":   "`go test ./...` skips `testdata` directories",
		"vendor/x/calc_test.go":     "`go test ./...` skips `vendor` directories",
		"calc/_calc_test.go":        "go ignores files whose names begin with `_`",
		"calc/calc.py":              "",
	} {
		if got := Excluded(p, plain); got != want {
			t.Errorf("Excluded(%s) = %q, want %q", p, got, want)
		}
	}
	for src, want := range map[string]string{
		"//go:build integration\n\npackage p\n":     "its build constraint `//go:build integration` excludes linux/amd64 without build tags",
		"//go:build !linux\n\npackage p\n":          "its build constraint `//go:build !linux` excludes linux/amd64 without build tags",
		"//go:build linux && amd64\n\npackage p\n":  "",
		"//go:build unix\n\npackage p\n":            "",
		"// +build ignore\n\npackage p\n":           "its build constraint `// +build ignore` excludes linux/amd64 without build tags",
		"package p // not a constraint: after it\n": "",
	} {
		if got := Excluded("p_test.go", []byte(src)); got != want {
			t.Errorf("Excluded(%q) = %q, want %q", src, got, want)
		}
	}
}

func TestGoTestText(t *testing.T) {
	src := []byte("package p\n\nimport \"testing\"\n\n// TestA is documented.\nfunc TestA(t *testing.T) {\n\tt.Skip(\"later\") // why\n}\n")
	tests, err := Tests("p_test.go", src)
	if err != nil || len(tests) != 1 {
		t.Fatalf("Tests = %v, %v", tests, err)
	}
	a := tests[0]
	if a.Line != 6 || a.Kind != KindTest || strings.Contains(a.Text, "why") || strings.Contains(a.Text, "documented") || string(src[a.Start:a.End]) != strings.TrimSuffix(string(src[strings.Index(string(src), "func"):]), "\n") {
		t.Errorf("TestA = %+v", a)
	}
	if len(a.Skips) != 1 || a.Skips[0].Line != 7 || a.Skips[0].Text != `t.Skip("later")` {
		t.Errorf("skips = %+v", a.Skips)
	}
}

func testNames(tests []Test) []string {
	out := []string{}
	for _, t := range tests {
		out = append(out, t.Name)
	}
	slices.Sort(out)
	return out
}

func TestPythonTests(t *testing.T) {
	src := `import pytest

def helper():
    pass

@pytest.mark.parametrize("x", [1, 2])
def test_param(x):
    assert x

async def test_async():
    def test_inner():  # nested: not collected
        pass

class TestGroup:
    def test_a(self):
        assert True

    def not_a_test(self):
        pass

class Helper:
    def test_ignored(self):
        pass

class Case(unittest.TestCase):
    def test_unit(self):
        pass

def test_last():
    assert 1
`
	tests, _ := Tests("tests/test_x.py", []byte(src))
	want := []string{"Case.test_unit", "TestGroup.test_a", "test_async", "test_last", "test_param"}
	if got := testNames(tests); !slices.Equal(got, want) {
		t.Fatalf("tests = %q, want %q", got, want)
	}
	for _, tc := range tests {
		if tc.Name == "test_param" && (!strings.HasPrefix(tc.Text, "@pytest.mark.parametrize") || strings.Contains(tc.Text, "test_async")) {
			t.Errorf("test_param's source = %q", tc.Text)
		}
	}
	if tests, _ := Tests("src/calc.py", []byte(src)); len(tests) != 0 {
		t.Errorf("a file outside the test paths declares %d tests", len(tests))
	}
	if tests, _ := Tests("tests/conftest.py", []byte(src)); len(tests) != 0 {
		t.Errorf("conftest.py declares %d tests", len(tests))
	}
}

func TestJSTests(t *testing.T) {
	src := "describe('calc', () => {\n" +
		"  it('adds (two) numbers', () => {\n    expect(add(2, 3)).toBe(5); // ) not a close\n  });\n" +
		"  test(\"handles ')' in strings\", () => { const s = ')'; });\n" +
		"  it.only(`template title`, async () => { await x(`${a}`); });\n" +
		"});\n"
	tests, _ := Tests("x.test.js", []byte(src))
	want := []string{"calc > adds (two) numbers", "calc > handles ')' in strings", "calc > template title"}
	if got := testNames(tests); !slices.Equal(got, want) {
		t.Fatalf("tests = %q, want %q", got, want)
	}
	if s := tests[0].Text; !strings.HasSuffix(s, "})") || strings.Contains(s, "handles") || tests[0].Short != "adds (two) numbers" {
		t.Errorf("first = %+v", tests[0])
	}
	if m := tests[2].Skips; len(m) != 1 || !m[0].Only {
		t.Errorf("it.only's markers = %+v", m)
	}
}

func TestRustTests(t *testing.T) {
	src := "pub fn add(a: i32, b: i32) -> i32 { a + b }\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n" +
		"    #[test]\n    #[should_panic]\n    fn panics() { let s = \"}\"; panic!(\"{}\", s); }\n\n" +
		"    #[test]\n    fn adds() {\n        assert_eq!(add(1, 2), 3);\n    }\n\n    fn helper() {}\n}\n"
	tests, _ := Tests("src/lib.rs", []byte(src))
	if got := testNames(tests); !slices.Equal(got, []string{"tests::adds", "tests::panics"}) {
		t.Fatalf("tests = %q", got)
	}
	if s := tests[1].Text; !strings.HasSuffix(s, "}") || strings.Contains(s, "helper") || tests[1].Short != "adds" {
		t.Errorf("adds = %+v", tests[1])
	}
	code, ok := Code("src/lib.rs", []byte(src))
	if !ok || strings.Contains(code, "assert") || !strings.Contains(code, "a+b") {
		t.Errorf("Code = %q, %v", code, ok)
	}
}

func TestHooks(t *testing.T) {
	goSrc := []byte("package p\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc init() { os.Exit(0) }\n\nfunc TestMain(m *testing.M) { os.Exit(0) }\n\nfunc TestA(t *testing.T) {}\n")
	py := []byte("import pytest\n\npytest_plugins = ['x']\n\ndef pytest_collection_modifyitems(items):\n    items.clear()\n\n@pytest.hookimpl(tryfirst=True)\ndef pytest_ignore_collect(path):\n    return True\n\ndef helper():\n    pass\n")
	for _, c := range []struct {
		path string
		src  []byte
		want []string
	}{
		{"p/p_test.go", goSrc, []string{"init:8", "TestMain:10"}},
		{"p/p.go", goSrc, nil},              // not a test file: its init is the package's own
		{"p/p_windows_test.go", goSrc, nil}, // does not build here
		{"conftest.py", py, []string{"pytest_plugins:3", "pytest_collection_modifyitems:5", "pytest_ignore_collect:8"}},
		{"tests/test_x.py", py, nil},
		{"jest.config.js", []byte("module.exports = {\n  testMatch: ['**/*.test.js'],\n  // setupFiles: ['old.js'],\n  setupFilesAfterEnv: ['./setup.js'],\n  projects: [{ globalSetup: './g.js' }],\n};\n"), []string{"setupFilesAfterEnv:4", "globalSetup:5"}},
		{"vitest.config.ts", []byte("export default defineConfig({ test: { environment: 'node', setupFiles: ['s.ts'] } });\n"), []string{"setupFiles:1"}},
		{"package.json", []byte("{\n  \"name\": \"x\",\n  \"jest\": {\n    \"verbose\": true,\n    \"setupFiles\": [\"./s.js\"]\n  }\n}\n"), []string{"setupFiles:5"}},
		{"jest.config.json.bak", []byte("{}"), nil},
	} {
		var got []string
		for _, h := range Hooks(c.path, c.src) {
			got = append(got, h.Name+":"+strconv.Itoa(h.Line))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("Hooks(%s) = %q, want %q", c.path, got, c.want)
		}
	}
}

func TestIsTestPath(t *testing.T) {
	for p, want := range map[string]bool{
		"calc_test.go": true, "calc.go": false, "_x/calc_test.go": true,
		"tests/test_calc.py": true, "calc_test.py": true, "calc.py": false, "tests/conftest.py": true, "tests/helpers.py": true,
		"test/calc.js": true, "src/calc.test.ts": true, "src/__tests__/a.jsx": true, "src/calc.js": false, "spec/calc.spec.mjs": true,
		"tests/api.rs": true, "src/tests.rs": true, "src/lib.rs": false,
		"src/test/java/AppTest.java": true, "src/main/java/App.java": false,
		"testdata/x.json": true, "a.golden": true,
		// Moved from verify/findings.
		"pkg/test_a.py": true, "pkg/a_test.py": true, "conftest.py": true, "src/a.spec.js": true, "tests/it.rs": true,
		"src/main/java/a/ATest.java": true, "src/main/java/a/Testing.java": true, "__snapshots__/a.snap": true, "README.md": false,
		// Issue 27.
		"spec/a_spec.rb": true, "test/a_test.rb": true, "lib/a.rb": false, "tests/ATest.php": true, "src/A.php": false,
		"tests/CMakeLists.txt": true, "CMakeLists.txt": false, "tests/test_a.cpp": true, "src/a_test.cc": true, "src/a.cpp": false,
		"notes.txt": false,
		// A project's one test module (python-slugify's test.py).
		"test.py": true, "app/tests.py": true, "testing.py": false,
	} {
		if got := IsTestPath(p); got != want {
			t.Errorf("IsTestPath(%s) = %v, want %v", p, got, want)
		}
	}
}

// TestTestsrcIsALeaf: the one reader of test sources imports none of
// Patchwright's packages but the internal/ leaves, so every caller can
// use it.
func TestTestsrcIsALeaf(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "github.com/patchwright/patchwright/") && p != "github.com/patchwright/patchwright/verify/testsrc" &&
			!strings.HasPrefix(p, "github.com/patchwright/patchwright/internal/") {
			t.Errorf("testsrc depends on %s", p)
		}
	}
}

// TestIsTestData: expected outputs and inputs in a test directory are
// data the tests read (inih's tests/baseline_multi.txt), not tests whose
// edit no test names; a test directory's CMakeLists.txt and meson.build
// are its build, and code beside them is test code.
func TestIsTestData(t *testing.T) {
	for p, want := range map[string]bool{
		"tests/baseline_multi.txt": true, "tests/normal.ini": true, "test/cases.json": true, "testdata/x.go": true, "a.golden": true,
		"tests/CMakeLists.txt": false, "tests/meson.build": false, "tests/unittest.c": false, "tests/test_a.py": false,
		"notes.txt": false, "docs/config.ini": false,
	} {
		if got := IsTestData(p); got != want {
			t.Errorf("IsTestData(%s) = %v, want %v", p, got, want)
		}
	}
}
