package tools

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/docker"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// What write_file creates (the directories and the file) gets the owner
// of the handed-over tree; what existed keeps its own. As root the
// owner is changed; otherwise the new paths are opened for writing.
func TestWriteFileHandsNewPathsOver(t *testing.T) {
	env := newEnv(t, map[string]string{"old/a.go": "package old\n"})
	if err := sandbox.HandOver(env.dir, 4321, 4322); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(filepath.Join(env.dir, "old"), os.Geteuid(), os.Getegid()); err != nil && os.Geteuid() == 0 {
		t.Fatal(err)
	}
	wantCode(t, env.call(t, "write_file", WriteFileParams{Path: "old/new/deeper/b.go", Content: "package deeper\n"}), "")
	for _, p := range []string{"old/new", "old/new/deeper", "old/new/deeper/b.go"} {
		info, err := os.Lstat(filepath.Join(env.dir, p))
		if err != nil {
			t.Fatal(err)
		}
		st := info.Sys().(*syscall.Stat_t)
		switch {
		case os.Geteuid() == 0 && (st.Uid != 4321 || st.Gid != 4322):
			t.Errorf("%s is %d:%d, want the tree owner's 4321:4322", p, st.Uid, st.Gid)
		case os.Geteuid() != 0 && info.Mode().Perm()&0o022 != 0o022:
			t.Errorf("%s has mode %v, want it writable by the sandbox user", p, info.Mode())
		}
	}
	if info, _ := os.Lstat(filepath.Join(env.dir, "old")); os.Geteuid() == 0 && info.Sys().(*syscall.Stat_t).Uid != uint32(os.Geteuid()) {
		t.Error("write_file changed the owner of a directory that existed")
	}
}

// write_file of a new package, then the sandbox user writes into its
// directories (gofmt -w, a generator, a new subdirectory), in the real
// sandbox on both image shapes: ours with user 1000, and a public-shaped
// one where everything is root's and no user 1000 exists.
func TestWriteFileNewPackageInDocker(t *testing.T) {
	for _, image := range sandboxtest.Images(t) {
		t.Run(image, func(t *testing.T) {
			d := sandboxtest.NewDocker(t, docker.Options{})
			dir := sandboxtest.Workspace(t)
			writeTree(t, dir, map[string]string{"go.mod": "module example.com/m\n\ngo 1.22\n"})
			sandboxtest.HandOver(t, dir)
			sb := sandboxtest.New(t, d, sandbox.Spec{Image: image, Workspace: dir})
			ws, err := sandbox.OpenWorkspace(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer ws.Close()
			set, err := New(Options{Workspace: ws, Sandbox: sb, Verifier: &fakeVerifier{}})
			if err != nil {
				t.Fatal(err)
			}
			env := &testEnv{dir: dir, ws: ws, set: set}
			wantCode(t, env.call(t, "write_file", WriteFileParams{Path: "internal/newpkg/gen/b.go", Content: "package gen\nfunc  B( ) int {return 1}\n"}), "")
			res := env.call(t, "run", RunParams{Command: "gofmt -w internal/newpkg/gen/b.go && echo generated > internal/newpkg/gen/zz_gen.txt" +
				" && mkdir internal/newpkg/more && touch internal/newpkg/more/c.txt internal/d.txt && id -u"})
			if res.Commands[0].ExitCode != 0 {
				t.Fatalf("the sandbox user could not write into the new package:\n%s", res.Text)
			}
			got, err := os.ReadFile(filepath.Join(dir, "internal/newpkg/gen/b.go"))
			if err != nil || string(got) != "package gen\n\nfunc B() int { return 1 }\n" {
				t.Errorf("after gofmt -w: %q, %v", got, err)
			}
		})
	}
}
