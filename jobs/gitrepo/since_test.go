package gitrepo

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
)

// setupWrites does to a clone what a first setup might: a generated file
// nobody ignores, an ignored one, a tracked file rewritten, one deleted,
// an executable script and a link.
func setupWrites(t *testing.T, wt string) {
	t.Helper()
	write(t, filepath.Join(wt, "gen.txt"), "generated\n")
	write(t, filepath.Join(wt, "build", "out.bin"), "ignored output\n")
	write(t, filepath.Join(wt, "a.txt"), "rewritten by setup\n")
	write(t, filepath.Join(wt, "edited.txt"), "setup's version\n")
	write(t, filepath.Join(wt, "run.sh"), "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(wt, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(wt, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.txt", filepath.Join(wt, "link")); err != nil {
		t.Fatal(err)
	}
}

func paths(cs []Change) map[string]Kind {
	out := map[string]Kind{}
	for _, c := range cs {
		out[c.Path] = c.Kind
	}
	return out
}

// TestChangesSince: read against the pristine tree, what setup wrote,
// rewrote or deleted is no change, while everything the model did after
// is, a file setup wrote and the model edited or made plain included;
// ChangesWithin still reads against the last commit alone.
func TestChangesSince(t *testing.T) {
	r := clone(t, origin(t))
	wt := r.Worktree()
	setupWrites(t, wt)
	pristine := filepath.Join(t.TempDir(), "pristine")
	if out, err := exec.Command("cp", "-a", wt, pristine).CombinedOutput(); err != nil {
		t.Fatalf("copy: %v %s", err, out)
	}
	write(t, filepath.Join(wt, "edited.txt"), "the model's version\n")
	write(t, filepath.Join(wt, "new.txt"), "the model's file\n")
	write(t, filepath.Join(wt, "pkg", "b.go"), "package pkg // edited\n")
	if err := os.Chmod(filepath.Join(wt, "run.sh"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := r.ChangesSince(pristine, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Kind{"edited.txt": Added, "new.txt": Added, "pkg/b.go": Modified, "run.sh": Added}
	if !reflect.DeepEqual(paths(got), want) {
		t.Errorf("ChangesSince = %v, want %v", paths(got), want)
	}
	all, err := r.ChangesWithin(Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for p, k := range map[string]Kind{"gen.txt": Added, "a.txt": Modified, "gone.txt": Deleted, "link": Added} {
		if paths(all)[p] != k {
			t.Errorf("ChangesWithin: %s is %q, want %q", p, paths(all)[p], k)
		}
	}
	if _, err := r.ChangesSince(filepath.Join(t.TempDir(), "none"), Limits{}); err == nil {
		t.Error("a missing pristine tree is not an error")
	}
}

// TestWritten: every file that is not the commit's, ignored or not, and
// no file that is, no link and no deleted path.
func TestWritten(t *testing.T) {
	r := clone(t, origin(t))
	setupWrites(t, r.Worktree())
	got, err := r.Written()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a.txt", "build/out.bin", "edited.txt", "gen.txt", "run.sh"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Written = %q, want %q", got, want)
	}
}
