package sandboxtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// ReposDir is the absolute path of testdata/repos, the small repositories
// per language described in its README.md: each NAME has NAME/repo (the
// tree, with a bug) and NAME/test.patch, NAME/fix.patch and
// NAME/break.patch (git diffs against it).
func ReposDir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("sandboxtest: no caller information to find testdata/repos")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "repos")
}

// Patch is the path of testdata/repos/NAME/PATCH.patch, for example
// Patch("go", "fix").
func Patch(name, patch string) string {
	return filepath.Join(ReposDir(), name, patch+".patch")
}

// Repo copies testdata/repos/NAME/repo into a new temporary directory,
// makes it a git repository with the tree as one commit on main, applies
// the named patches to the work tree (uncommitted, in order, with `git
// apply`) and gives it to the sandbox user. It fails the test when git
// is missing or a patch does not apply.
func Repo(t testing.TB, name string, patches ...string) string {
	t.Helper()
	src := filepath.Join(ReposDir(), name, "repo")
	dir := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
	git(t, dir, "init", "-q", "-b", "main")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "base")
	for _, p := range patches {
		git(t, dir, "apply", Patch(name, p))
	}
	HandOver(t, dir)
	return dir
}

// CopyRepo is Repo without git and without handing over: it writes the
// tree of NAME with the patches applied to dst, for a workspace that holds
// several variants of one repository. dst must not be inside a git
// repository.
func CopyRepo(t testing.TB, dst, name string, patches ...string) {
	t.Helper()
	src := filepath.Join(ReposDir(), name, "repo")
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
	for _, p := range patches {
		// Outside a repository git apply works like patch(1): paths
		// are relative to dst.
		cmd := exec.Command("git", "apply", Patch(name, p))
		cmd.Dir = dst
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git apply %s.patch in %s: %v\n%s", p, dst, err, out)
		}
	}
}

func git(t testing.TB, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=Patchwright Test", "-c", "user.email=test@patchwright.invalid", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
}
