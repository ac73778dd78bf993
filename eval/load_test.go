package eval

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadRejectsBadTaskFiles(t *testing.T) {
	sha := strings.Repeat("a", 40)
	good := "repo: ./repo\ncommit: " + sha + "\nhidden_tests:\n  files: hidden/\n  run: go test ./...\ncategory: bug\nlanguage: go\n"
	cases := []struct {
		name, yml, issue, want string
	}{
		{"unknown key", good + "colour: blue\n", "", "field colour not found"},
		{"misspelt nested key", strings.Replace(good, "  run:", "  rnu:", 1), "", "field rnu not found"},
		{"short sha", strings.Replace(good, sha, "abc123", 1), "", "full SHA"},
		{"no repo", strings.Replace(good, "repo: ./repo\n", "", 1), "", "repo is required"},
		{"both forms", strings.Replace(good, "  files: hidden/\n", "  files: hidden/\n  patch: hidden.patch\n", 1), "", "exactly one of files"},
		{"neither form", strings.Replace(good, "  files: hidden/\n", "", 1), "", "exactly one of files"},
		{"no run", strings.Replace(good, "  run: go test ./...\n", "", 1), "", "hidden_tests.run is required"},
		{"bad category", strings.Replace(good, "category: bug", "category: chore", 1), "", `category "chore"`},
		{"bad language", strings.Replace(good, "language: go", "language: cobol", 1), "", `language "cobol"`},
		{"negative steps", good + "max_steps: -1\n", "", "max_steps"},
		{"escaping hidden dir", strings.Replace(good, "files: hidden/", "files: ../elsewhere/", 1), "", "inside the task directory"},
		{"two documents", good + "---\nrepo: x\n", "", "more than one YAML document"},
		{"empty", "", "", "empty file"},
		{"issue without title", good, "no title here\n", `"# Title"`},
		{"not yaml", "repo: [unclosed\n", "", "yaml"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "task")
			issue := c.issue
			if issue == "" {
				issue = "# A title\n\nbody\n"
			}
			writeFiles(t, dir, map[string]string{"task.yml": c.yml, "issue.md": issue, "hidden/x_test.go": "package x\n"})
			_, err := Load(dir, "")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to say %q", err, c.want)
			}
		})
	}
}

func TestLoadTaskDirectory(t *testing.T) {
	suite := t.TempDir()
	dir := makeTask(t, suite, "one", defaultFixture())
	tasks, err := Load(suite, "")
	if err != nil {
		t.Fatal(err)
	}
	got := tasks[0]
	if len(tasks) != 1 || got.ID != "one" || got.Repo != filepath.Join(dir, "repo") || got.Title != "value.txt is wrong" ||
		got.Body != "It should say fixed." || len(got.HiddenFiles) != 1 || got.HiddenRun != "sh checks/value_check.sh" ||
		got.ExistingTests != "test -f value.txt" || len(got.FixPatch) == 0 {
		t.Fatalf("task %+v", got)
	}
	// The task directory itself works too.
	if tasks, err := Load(dir, ""); err != nil || len(tasks) != 1 {
		t.Fatalf("Load(task dir) = %v, %v", tasks, err)
	}
	if _, err := Load(dir, t.TempDir()); err == nil {
		t.Error("--repos with a task directory was accepted")
	}
	if _, err := Load(t.TempDir(), ""); err == nil || !strings.Contains(err.Error(), "no task directories") {
		t.Errorf("empty suite: %v", err)
	}
}

func TestLoadHiddenSymlinkIsRefused(t *testing.T) {
	suite := t.TempDir()
	dir := makeTask(t, suite, "one", defaultFixture())
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "hidden", "link")); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(suite, ""); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("error %v", err)
	}
}

func TestLoadSWEBenchJSONL(t *testing.T) {
	dir := t.TempDir()
	sha := strings.Repeat("b", 40)
	lines := `{"instance_id": "astropy__astropy-12907", "repo": "astropy/astropy", "base_commit": "` + sha + `", "problem_statement": "Modeling's separability_matrix is wrong\nfor nested models.\n", "test_patch": "--- a/t.py\n+++ b/t.py\n", "FAIL_TO_PASS": "[\"astropy/tests/test_sep.py::test_nested[it's]\"]", "PASS_TO_PASS": ["a.py::test_a"], "version": "4.3"}

{"instance_id": "x__y-1", "repo": "x/y", "base_commit": "` + sha + `", "problem_statement": "# Title\nbody", "test_patch": "p", "FAIL_TO_PASS": ["t::a", "t::b"], "PASS_TO_PASS": "[]"}
`
	path := filepath.Join(dir, "tasks.jsonl")
	writeFiles(t, dir, map[string]string{"tasks.jsonl": lines})
	repos := filepath.Join(dir, "repos")
	tasks, err := Load(path, repos)
	if err != nil {
		t.Fatal(err)
	}
	a, b := tasks[0], tasks[1]
	if a.ID != "astropy__astropy-12907" || a.Repo != filepath.Join(repos, "astropy__astropy") || a.Commit != sha ||
		a.Title != "Modeling's separability_matrix is wrong" || a.Body != "for nested models." || string(a.HiddenPatch) != "--- a/t.py\n+++ b/t.py\n" ||
		a.HiddenRun != `python -m pytest -rA -p no:cacheprovider 'astropy/tests/test_sep.py::test_nested[it'\''s]'` ||
		a.ExistingTests != "python -m pytest -rA -p no:cacheprovider 'a.py::test_a'" || a.Language != "python" {
		t.Errorf("first instance %+v", a)
	}
	if b.Title != "Title" || b.ExistingTests != "" || b.HiddenRun != "python -m pytest -rA -p no:cacheprovider 't::a' 't::b'" {
		t.Errorf("second instance %+v", b)
	}
	if _, err := Load(path, ""); err == nil || !strings.Contains(err.Error(), "--repos") {
		t.Errorf("JSONL without --repos: %v", err)
	}
}

func TestLoadSWEBenchRejectsBadInstances(t *testing.T) {
	sha := strings.Repeat("c", 40)
	cases := map[string]string{
		"not json":         `{"instance_id":`,
		"bad id":           `{"instance_id": "../x", "repo": "a/b", "base_commit": "` + sha + `", "problem_statement": "p", "test_patch": "t", "FAIL_TO_PASS": ["x"]}`,
		"bad repo":         `{"instance_id": "i", "repo": "../../etc", "base_commit": "` + sha + `", "problem_statement": "p", "test_patch": "t", "FAIL_TO_PASS": ["x"]}`,
		"short commit":     `{"instance_id": "i", "repo": "a/b", "base_commit": "abc", "problem_statement": "p", "test_patch": "t", "FAIL_TO_PASS": ["x"]}`,
		"no test patch":    `{"instance_id": "i", "repo": "a/b", "base_commit": "` + sha + `", "problem_statement": "p", "test_patch": "", "FAIL_TO_PASS": ["x"]}`,
		"no fail to pass":  `{"instance_id": "i", "repo": "a/b", "base_commit": "` + sha + `", "problem_statement": "p", "test_patch": "t", "FAIL_TO_PASS": "[]"}`,
		"bad fail to pass": `{"instance_id": "i", "repo": "a/b", "base_commit": "` + sha + `", "problem_statement": "p", "test_patch": "t", "FAIL_TO_PASS": 3}`,
		"no problem":       `{"instance_id": "i", "repo": "a/b", "base_commit": "` + sha + `", "problem_statement": " ", "test_patch": "t", "FAIL_TO_PASS": ["x"]}`,
		"duplicate": `{"instance_id": "i", "repo": "a/b", "base_commit": "` + sha + `", "problem_statement": "p", "test_patch": "t", "FAIL_TO_PASS": ["x"]}
{"instance_id": "i", "repo": "a/b", "base_commit": "` + sha + `", "problem_statement": "p", "test_patch": "t", "FAIL_TO_PASS": ["x"]}`,
		"empty file": "\n\n",
	}
	for name, text := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"x.jsonl": text})
			if _, err := Load(filepath.Join(dir, "x.jsonl"), dir); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

func TestLoadSaysWhatATaskDirectoryIs(t *testing.T) {
	suite := t.TempDir()
	writeFiles(t, suite, map[string]string{"README.md": "notes\n", "tasks/one/task.yml": "x: 1\n"})
	if _, err := Load(suite, ""); err == nil || !strings.Contains(err.Error(), "tasks is not a task directory: it has no task.yml") {
		t.Fatalf("error %v", err)
	}
}
