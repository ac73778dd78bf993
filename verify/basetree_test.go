package verify

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"slices"
	"strings"
	"testing"
)

// gitBase is a BaseTree read with the git CLI, the way these tests build
// their repositories; production passes *jobs/gitrepo.Repo.
type gitBase struct{ dir, commit string }

func (b gitBase) git(args ...string) ([]byte, error) {
	var out, errOut bytes.Buffer
	c := exec.Command("git", append([]string{"-c", "safe.directory=*", "-C", b.dir}, args...)...)
	c.Stdout, c.Stderr = &out, &errOut
	if err := c.Run(); err != nil {
		return nil, fmt.Errorf("git %v: %v: %s", args, err, errOut.String())
	}
	return out.Bytes(), nil
}

func (b gitBase) BaseContent(p string) ([]byte, error) {
	if _, err := b.git("cat-file", "-e", b.commit+":"+p); err != nil {
		return nil, nil // not in the base commit
	}
	return b.git("cat-file", "blob", b.commit+":"+p)
}

func (b gitBase) WriteBase(root *os.Root) error {
	list, err := b.git("ls-tree", "-r", "-z", b.commit)
	if err != nil {
		return err
	}
	for _, e := range strings.Split(strings.TrimSuffix(string(list), "\x00"), "\x00") {
		meta, name, _ := strings.Cut(e, "\t")
		f := strings.Fields(meta) // mode, type, hash
		perm := map[string]fs.FileMode{"100644": 0o644, "100755": 0o755}[f[0]]
		if perm == 0 {
			continue // links and submodules
		}
		data, err := b.git("cat-file", "blob", f[2])
		if err != nil {
			return err
		}
		if err := writeUnder(root, name, data, perm); err != nil {
			return err
		}
	}
	return nil
}

// TestNewGoTestsAgreeWithGoTest runs testsrc's table of Go test files (the
// one TestTestsrcAgreesWithGoTest checks against go test -list) through
// new-test discovery: each file, added by the change, yields exactly the
// tests go test lists for it but benchmarks (go test -run does not run
// them), and none for a file go test refuses to build.
func TestNewGoTestsAgreeWithGoTest(t *testing.T) {
	files := map[string]string{}
	want := map[string][]string{}
	root := os.DirFS("testsrc/testdata/agree")
	err := fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(p) != ".go" {
			return err
		}
		src, err := fs.ReadFile(root, p)
		if err != nil {
			return err
		}
		files[p] = string(src)
		want[p] = []string{}
		for l := range strings.Lines(string(src)) {
			if w, ok := strings.CutPrefix(strings.TrimSpace(l), "// want:"); ok {
				for _, name := range strings.Fields(w) {
					if name != "error" && !strings.HasPrefix(name, "Benchmark") {
						want[p] = append(want[p], name)
					}
				}
			}
		}
		return nil
	})
	if err != nil || len(files) < 10 {
		t.Fatalf("read the table: %v (%d files)", err, len(files))
	}
	ws, base, changed := hostRepo(t, map[string]string{"go.mod": "module example.com/m\n\ngo 1.22\n"}, files)
	found, err := FindNewTests(ws, base, changed, Detection{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for p := range files {
		got[p] = []string{}
	}
	for _, n := range found {
		if !n.Added || n.Lang != LangGo {
			t.Errorf("%+v: want an added Go test", n)
		}
		got[n.File] = append(got[n.File], n.Name)
	}
	for p, w := range want {
		slices.Sort(w)
		slices.Sort(got[p])
		if !slices.Equal(got[p], w) {
			t.Errorf("%s: new tests %q, want %q", p, got[p], w)
		}
	}
}

// TestNewTestsChangedOnly: a test whose only edit is a comment is not
// new; one whose body changed is, and so is one added.
func TestNewTestsChangedOnly(t *testing.T) {
	old := "package calc\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) { t.Log(1) }\n\nfunc TestB(t *testing.T) { t.Log(1) }\n"
	now := "package calc\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) { t.Log(1) /* same */ }\n\nfunc TestB(t *testing.T) { t.Log(2) }\n\nfunc TestC(t *testing.T) {}\n"
	ws, base, changed := hostRepo(t, map[string]string{"go.mod": "module example.com/m\n", "calc_test.go": old}, map[string]string{"calc_test.go": now})
	found, err := FindNewGoTests(ws, base, changed)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range found {
		got = append(got, fmt.Sprintf("%s:%v", n.Name, n.Added))
	}
	if want := []string{"TestB:false", "TestC:true"}; !slices.Equal(got, want) {
		t.Errorf("new tests = %q, want %q", got, want)
	}
}

// TestNewTestsFollowRenames: tests are paired by content and position as
// a reviewer would. A renamed test with a fixed expectation is changed,
// not added, and says its old name; a test renamed or moved unchanged is
// not new; a test whose only edit is its message says so.
func TestNewTestsFollowRenames(t *testing.T) {
	const head = "package calc\n\nimport \"testing\"\n\n"
	width := func(name, want string) string {
		return "func " + name + "(t *testing.T) {\n\tif got := Width(\"a\\u200db\"); got != " + want + " {\n\t\tt.Errorf(\"Width = %d, want " + want + "\", got)\n\t}\n}\n\n"
	}
	msg := func(m string) string {
		return "func TestMsg(t *testing.T) {\n\tif Width(\"\") != 0 {\n\t\tt.Error(\"" + m + "\")\n\t}\n}\n\n"
	}
	moved := "func TestMoved(t *testing.T) {\n\tif Width(\"ab\") != 2 {\n\t\tt.Error(\"ab\")\n\t}\n}\n"
	files := map[string]string{"go.mod": "module example.com/m\n",
		"calc_test.go":  head + width("TestZeroWidthJointer", "1") + msg("empty is not 0") + "func TestSame(t *testing.T) { t.Log(1) }\n",
		"other_test.go": head + moved}
	change := map[string]string{
		"calc_test.go":  head + width("TestZeroWidthJoiner", "2") + msg("Width(\\\"\\\") is not 0") + "func TestSameRenamed(t *testing.T) { t.Log(1) }\n",
		"other_test.go": "package calc\n",
		"moved_test.go": head + moved}
	ws, base, changed := hostRepo(t, files, change)
	found, err := FindNewGoTests(ws, base, changed)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range found {
		got = append(got, fmt.Sprintf("%s added=%v from=%q literal=%v", n.Name, n.Added, n.RenamedFrom, n.LiteralOnly))
	}
	want := []string{`TestMsg added=false from="" literal=true`, `TestZeroWidthJoiner added=false from="TestZeroWidthJointer" literal=false`}
	if !slices.Equal(got, want) {
		t.Errorf("new tests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestGitBaseWritesTheBaseTree(t *testing.T) {
	_, base, _ := hostRepo(t, map[string]string{"a/b.txt": "base\n", "c.sh": "#!/bin/sh\n"}, map[string]string{"a/b.txt": "changed\n"})
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if err := base.WriteBase(root); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(dir + "/a/b.txt"); err != nil || string(b) != "base\n" {
		t.Errorf("a/b.txt = %q, %v", b, err)
	}
	if got, _ := base.BaseContent("missing"); got != nil {
		t.Errorf("a missing file reads as %q", got)
	}
}

// TestNewTestIDs: what each runner is given to select a new test, as
// testsrc reads the files (no runner needed).
func TestNewTestIDs(t *testing.T) {
	ws, base, changed := hostRepo(t, map[string]string{
		"pyproject.toml": "[project]\nname = \"calc\"\nversion = \"0\"\n",
		"package.json":   `{"name":"calc","scripts":{"test":"node --test"}}`,
		"Cargo.toml":     "[package]\nname = \"calc\"\nversion = \"0.1.0\"\n",
	}, map[string]string{
		"tests/test_calc.py": "def test_add():\n    pass\n\n\nclass TestMore:\n    class TestDeeper:\n        def test_zero(self):\n            pass\n",
		"test/calc.test.js":  "describe('calc', () => {\n  test('adds', () => {});\n});\ntest('adds', () => {});\n",
		"tests/api.rs":       "#[test]\nfn adds_two() {}\n",
		"tests/conftest.py":  "def test_not_collected():\n    pass\n",
	})
	d, err := Detect(ws, DetectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	found, err := FindNewTests(ws, base, changed, d)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range found {
		got = append(got, n.Lang+" "+n.Name+" "+n.ID+" "+n.Dir)
	}
	want := []string{
		"javascript adds adds .",
		"python TestMore::TestDeeper::test_zero tests/test_calc.py::TestMore::TestDeeper::test_zero .",
		"python test_add tests/test_calc.py::test_add .",
		"rust adds_two adds_two .",
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("new tests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestVerifyLinksNoGit: the base tree comes through BaseTree, so neither
// verify nor what imports it (report) links go-git.
func TestVerifyLinksNoGit(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "github.com/go-git/") {
			t.Errorf("verify depends on %s", p)
		}
	}
}
