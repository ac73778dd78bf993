package docker_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/docker"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// fallocateProgram reserves os.Args[2] bytes for the file os.Args[1] with
// fallocate(2), which allocates without writing: the fast way to fill a
// disk. The test image has no fallocate(1).
const fallocateProgram = `package main

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
)

func main() {
	n, _ := strconv.ParseInt(os.Args[2], 10, 64)
	f, err := os.Create(os.Args[1])
	if err == nil {
		err = syscall.Fallocate(int(f.Fd()), 0, 0, n)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
`

// buildFallocate compiles fallocateProgram, static, into dir/fallocate.
func buildFallocate(t *testing.T, dir string) {
	t.Helper()
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte(fallocateProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module fallocate\n\ngo 1.21\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "fallocate"), ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the fallocate program: %v\n%s", err, out)
	}
}

// newBoundedDir makes a bounded directory of size bytes for the sandbox
// user, or skips the test where that cannot be done here.
func newBoundedDir(t *testing.T, size int64) *docker.BoundedDir {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to loop-mount a filesystem")
	}
	if _, err := os.Stat("/dev/loop-control"); err != nil {
		t.Skip("needs the loop driver (/dev/loop-control)")
	}
	base := t.TempDir()
	b, err := docker.NewBoundedDir(context.Background(), filepath.Join(base, "ws"), filepath.Join(base, "ws.img"), size, sandboxtest.UID, sandboxtest.GID)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Error(err)
		}
	})
	return b
}

// TestBoundedWorkspace: filling a bounded workspace past its size fails
// in the sandbox, and the host gives it no more disk than that size.
func TestBoundedWorkspace(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	const size = 64 << 20
	b := newBoundedDir(t, size)
	image := filepath.Join(filepath.Dir(b.Path), "ws.img")
	buildFallocate(t, b.Path)
	sb := sandboxtest.New(t, d, sandbox.Spec{Workspace: b.Path})

	ok(t, sb, "./fallocate small 1000000 && echo x > file")
	res := run(t, sb, "./fallocate big 3000000000")
	if res.ExitCode == 0 || !strings.Contains(string(res.Stderr.Head), "no space left") {
		t.Fatalf("fallocate of 3 GB in a 64 MiB workspace: %+v (stderr %q)", res, res.Stderr.Head)
	}
	res = run(t, sb, "head -c 100000000 /dev/zero > written")
	if res.ExitCode == 0 || !strings.Contains(string(res.Stderr.Head), "No space left") {
		t.Fatalf("writing 100 MB in a 64 MiB workspace: %+v (stderr %q)", res, res.Stderr.Head)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(image, &st); err != nil {
		t.Fatal(err)
	}
	if used := st.Blocks * 512; used > size {
		t.Fatalf("the workspace's image takes %d bytes of host disk, over its size %d", used, size)
	}
	// What fitted is intact.
	if got := ok(t, sb, "cat file"); got != "x\n" {
		t.Fatalf("file: %q", got)
	}
}

// TestBoundedDirRejects: bad arguments make nothing.
func TestBoundedDirRejects(t *testing.T) {
	base := t.TempDir()
	full := filepath.Join(base, "full")
	if err := os.MkdirAll(full, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(full, "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	existing := filepath.Join(base, "existing.img")
	if err := os.WriteFile(existing, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, tt := range map[string]struct {
		dir, image string
		size       int64
		want       string
	}{
		"tiny":           {filepath.Join(base, "a"), filepath.Join(base, "a.img"), 1000, "under 1 MiB"},
		"relative":       {"ws", filepath.Join(base, "b.img"), 64 << 20, "absolute"},
		"not empty":      {full, filepath.Join(base, "c.img"), 64 << 20, "not an empty directory"},
		"image exists":   {filepath.Join(base, "d"), existing, 64 << 20, "exists"},
		"relative image": {filepath.Join(base, "e"), "e.img", 64 << 20, "absolute"},
	} {
		t.Run(name, func(t *testing.T) {
			b, err := docker.NewBoundedDir(context.Background(), tt.dir, tt.image, tt.size, 1000, 1000)
			if err == nil {
				b.Close()
				t.Fatal("NewBoundedDir succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("NewBoundedDir = %v, want it to mention %q", err, tt.want)
			}
		})
	}
	if got, err := os.ReadFile(existing); err != nil || string(got) != "keep" {
		t.Fatalf("an existing image was changed: %q, %v", got, err)
	}
}

// TestCacheOnBoundedDir: a cache volume made with CacheDir keeps its files
// in that directory, so a sandbox filling the cache past the bounded
// file system's size fails with no space left, and the host gives the
// cache no more disk than the bound; removing the volume leaves the
// directory to its owner.
func TestCacheOnBoundedDir(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	const size = 64 << 20
	b := newBoundedDir(t, size)
	vol := fmt.Sprintf("pwtest-boundcache-%d", time.Now().UnixNano())
	t.Cleanup(func() { d.RemoveCache(context.Background(), vol) })
	cacheDir := filepath.Join(b.Path, "cache")
	// The public image's shape: no warm cache for Docker to copy in,
	// ours is larger than the bound.
	sb := sandboxtest.New(t, d, sandbox.Spec{Image: sandboxtest.PublicImage(t), CacheVolume: vol, CacheDir: cacheDir})
	ok(t, sb, `echo warm > "$HOME/.cache/marker"`)
	if got, err := os.ReadFile(filepath.Join(cacheDir, "marker")); err != nil || string(got) != "warm\n" {
		t.Fatalf("the cache's file is not in CacheDir: %q, %v", got, err)
	}
	res := run(t, sb, `head -c 100000000 /dev/zero > "$HOME/.cache/filler"`)
	if res.ExitCode == 0 || !strings.Contains(string(res.Stderr.Head), "No space left") {
		t.Fatalf("writing 100 MB into a cache on a 64 MiB file system: exit %d, stderr %q", res.ExitCode, res.Stderr.Head)
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(b.Path, &st); err != nil {
		t.Fatal(err)
	}
	if used := int64(st.Blocks-st.Bfree) * st.Bsize; used > size {
		t.Fatalf("the bounded file system holds %d bytes, more than its %d", used, size)
	}
	if info, err := os.Stat(filepath.Join(cacheDir, "filler")); err != nil || info.Size() >= 100000000 || info.Size() < size/2 {
		t.Fatalf("the filler in CacheDir: %v, %v; want it cut at the bound", info, err)
	}
}
