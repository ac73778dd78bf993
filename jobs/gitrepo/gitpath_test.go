package gitrepo

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// gitPathCases are spellings of git's own paths and look-alikes that are
// fine. git says what git itself (core.protectNTFS and core.protectHFS
// on) does with the path; ours is stricter where git only warns in fsck
// (symbolic links named .gitattributes or .gitignore).
var gitPathCases = []struct {
	path         string
	link         bool
	git, refused bool
}{
	{".git/config", false, true, true},
	{".GIT/config", false, true, true},
	{".Git/hooks/pre-commit", false, true, true},
	{"sub/.gIt/config", false, true, true},
	{".git /config", false, true, true},
	{".git./config", false, true, true},
	{".git. . /config", false, true, true},
	{"GIT~1/config", false, true, true},
	{"git~1/config", false, true, true},
	{".g\u200cit/config", false, true, true},
	{".\u200dgit/config", false, true, true},
	{".gi\ufefft/config", false, true, true},
	{".git\u200f/config", false, true, true},
	{".git", true, true, true},
	{".gitmodules", true, true, true},
	{".GITMODULES", true, true, true},
	{".gitmodules ", true, true, true},
	{"sub/.gitmodules", true, true, true},
	{"GITMOD~1", true, true, true},
	{".git\u200cmodules", true, true, true},
	{".git::$INDEX_ALLOCATION/config", false, true, true},
	{"dir\\.git\\config", false, true, true},
	{".gitattributes", true, false, true},
	{".gitignore", true, false, true},

	{".gitmodules", false, false, false},
	{".gitignore", false, false, false},
	{".github/workflows/ci.yml", false, false, false},
	{".gitkeep", false, false, false},
	{"sub/.git-blame-ignore-revs", false, false, false},
	{"git/config", false, false, false},
	{"a.git/config", false, false, false},
	{".gitx/config", false, false, false},
	{"GIT~2/config", false, false, false},
	{".g\u200bit.txt", false, false, false},
	{"docs/readme.md", true, false, false},
}

// The rule agrees with git's own verify_path wherever git applies it on
// Linux: each path is offered to the real git's index.
func TestGitPathProblemAgreesWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	dir := t.TempDir()
	runGit(t, dir, "init", "-q")
	blob := runGit(t, dir, "hash-object", "-w", "--stdin")
	for _, tc := range gitPathCases {
		got := gitPathProblem(tc.path, tc.link)
		if (got != "") != tc.refused {
			t.Errorf("gitPathProblem(%q, link %v) = %q, want refused %v", tc.path, tc.link, got, tc.refused)
		}
		mode := "100644"
		if tc.link {
			mode = "120000"
		}
		cmd := exec.Command("git", "-c", "core.protectNTFS=true", "-c", "core.protectHFS=true",
			"update-index", "--add", "--cacheinfo", mode+","+blob+","+tc.path)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if (err != nil) != tc.git {
			t.Errorf("git update-index %q (link %v): %v %s, want refused %v", tc.path, tc.link, err, out, tc.git)
		}
	}
}

// A path git treats as its own, written into the work tree, is listed
// unread with why git refuses it (for the caller to leave out of the
// commit), beside the rest of the change; Commit refuses such a change
// however it was made. A fine look-alike is an ordinary change.
func TestChangesRefuseGitPaths(t *testing.T) {
	r := clone(t, origin(t))
	for _, tc := range gitPathCases {
		if strings.Contains(tc.path, "\\") && !tc.refused {
			continue
		}
		full := filepath.Join(r.Worktree(), filepath.FromSlash(tc.path))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.RemoveAll(full); err != nil {
			t.Fatal(err)
		}
		if tc.link {
			err := os.Symlink("a.txt", full)
			if err != nil {
				t.Fatal(err)
			}
		} else {
			write(t, full, "[core]\n\thooksPath = /tmp/evil\n")
		}
		write(t, filepath.Join(r.Worktree(), "other.txt"), "the rest of the change\n")
		changes, err := r.Changes()
		switch {
		case exactDotGit(tc.path):
			// A .git of the exact spelling is never content: skipped.
			if err != nil || hasPath(changes, tc.path) {
				t.Errorf("%q (link %v): changes %v, %v; want it skipped", tc.path, tc.link, changes, err)
			}
		case tc.refused && (err != nil || gitPathOf(changes, tc.path) == "" || !hasPath(changes, "other.txt")):
			t.Errorf("%q (link %v): changes %+v, %v; want it listed with why git refuses it, beside other.txt", tc.path, tc.link, changes, err)
		case !tc.refused && (err != nil || slices.ContainsFunc(changes, func(c Change) bool { return c.GitPath != "" })):
			t.Errorf("%q (link %v): %+v, %v, want an ordinary change", tc.path, tc.link, changes, err)
		}
		top := filepath.Join(r.Worktree(), strings.SplitN(filepath.ToSlash(tc.path), "/", 2)[0])
		if err := os.RemoveAll(top); err != nil {
			t.Fatal(err)
		}
	}
	_, err := r.Commit([]Change{{Path: ".GIT/config", Kind: Added}}, CommitOptions{Branch: "agent/issue-1", Message: "m"})
	if !errors.Is(err, ErrGitPath) {
		t.Fatalf("Commit of .GIT/config: %v, want ErrGitPath", err)
	}
}

// gitPathOf is why changes say git refuses p; "" when they do not.
func gitPathOf(changes []Change, p string) string {
	for _, c := range changes {
		if c.Path == p {
			return c.GitPath
		}
	}
	return ""
}

func exactDotGit(p string) bool {
	return p == ".git" || strings.HasPrefix(p, ".git/") || strings.Contains(p, "/.git/")
}

func hasPath(changes []Change, p string) bool {
	for _, c := range changes {
		if c.Path == p {
			return true
		}
	}
	return false
}
