package docker_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"

	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/docker"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// cacheDigest is a digest of every file (path, mode, content) under the
// cache directory, as a sandbox sees it.
const cacheDigest = `cd "$XDG_CACHE_HOME" && find . -type f -printf '%p %m\n' | sort | sha256sum && find . -type f | sort | xargs -r sha256sum | sha256sum`

// newCacheVolume names a fresh cache volume removed when the test ends.
func newCacheVolume(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("patchwright-test-rocache-%d", time.Now().UnixNano())
	cli := dockerClient(t)
	t.Cleanup(func() { cli.VolumeRemove(context.Background(), name, true) })
	return name
}

// TestReadOnlyCacheNotPoisoned: a sandbox with CacheReadOnly sees the
// shared cache warm and may write its own copy, builds included, but
// nothing it writes (a new entry, a rewritten entry, a removed one)
// reaches the next sandbox on the same volume.
func TestReadOnlyCacheNotPoisoned(t *testing.T) {
	sandboxtest.EndToEnd(t)
	d := sandboxtest.NewDocker(t, docker.Options{})
	// Builds on our image only: the public-shaped one has no warm cache,
	// and a cold build of fmt costs a minute here.
	t.Run("ours", func(t *testing.T) { testReadOnlyCacheNotPoisoned(t, d, sandboxtest.Image(t), true) })
	t.Run("public", func(t *testing.T) { testReadOnlyCacheNotPoisoned(t, d, sandboxtest.PublicImage(t), false) })
}

func testReadOnlyCacheNotPoisoned(t *testing.T, d *docker.Docker, image string, build bool) {
	volume := newCacheVolume(t)
	ws := sandboxtest.Workspace(t)
	if err := os.WriteFile(filepath.Join(ws, "go.mod"), []byte("module example.com/m\n\ngo 1.21\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"built\") }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sandboxtest.HandOver(t, ws)

	trusted := sandboxtest.New(t, d, sandbox.Spec{Image: image, Workspace: ws, CacheVolume: volume})
	ok(t, trusted, `echo trusted > "$XDG_CACHE_HOME/entry"`)
	if build {
		ok(t, trusted, `go build -o /tmp/m . && /tmp/m`)
	}
	before := ok(t, trusted, cacheDigest)
	if err := trusted.Close(); err != nil {
		t.Fatal(err)
	}

	agent := sandboxtest.New(t, d, sandbox.Spec{Image: image, Workspace: ws, CacheVolume: volume, CacheReadOnly: true})
	if got := ok(t, agent, cacheDigest); got != before {
		t.Fatalf("the read-only sandbox's cache differs from the shared one:\n%s\nwant\n%s", got, before)
	}
	// Builds work and write their copy of the cache.
	if got := ok(t, agent, `mkdir -p "$XDG_CACHE_HOME/new" && echo new > "$XDG_CACHE_HOME/new/entry" && cat "$XDG_CACHE_HOME/new/entry"`); got != "new\n" {
		t.Fatalf("writing the read-only sandbox's cache: %q", got)
	}
	if build {
		if got := ok(t, agent, `go build -o /tmp/m . && /tmp/m`); got != "built\n" {
			t.Fatalf("build in the read-only sandbox: %q", got)
		}
	}
	// Poison every entry, add one, remove one.
	ok(t, agent, `cd "$XDG_CACHE_HOME" && chmod -R u+w . && find . -type f | while read -r f; do echo poison > "$f"; done && echo poison > planted && rm entry`)
	// The shared volume itself is out of reach.
	if res := run(t, agent, `touch /patchwright-shared-cache/x`); res.ExitCode == 0 {
		t.Fatal("the read-only sandbox wrote the shared cache volume")
	}
	if err := agent.Close(); err != nil {
		t.Fatal(err)
	}

	next := sandboxtest.New(t, d, sandbox.Spec{Image: image, Workspace: ws, CacheVolume: volume})
	if got := ok(t, next, cacheDigest); got != before {
		t.Fatalf("the next sandbox's cache changed after a read-only sandbox:\n%s\nwant\n%s", got, before)
	}
	if got := ok(t, next, `cat "$XDG_CACHE_HOME/entry"; ls "$XDG_CACHE_HOME"`); strings.Contains(got, "planted") || !strings.HasPrefix(got, "trusted\n") {
		t.Fatalf("the next sandbox's cache: %q", got)
	}
}

// TestReadOnlyCacheTooLarge: a shared cache that does not fit the
// sandbox's tmpfs fails Create, saying why.
func TestReadOnlyCacheTooLarge(t *testing.T) {
	sandboxtest.EndToEnd(t)
	d := sandboxtest.NewDocker(t, docker.Options{})
	volume := newCacheVolume(t)
	writer := sandboxtest.New(t, d, sandbox.Spec{CacheVolume: volume})
	ok(t, writer, `head -c 3000000 /dev/zero > "$XDG_CACHE_HOME/big"`)
	if err := writer.Close(); err != nil {
		t.Fatal(err)
	}
	sb, err := d.Create(context.Background(), sandbox.Spec{
		Image: sandboxtest.Image(t), Workspace: sandboxtest.Workspace(t), JobID: "test-rocache-large",
		CacheVolume: volume, CacheReadOnly: true, Limits: sandbox.Limits{TmpfsBytes: 2 << 20},
	})
	if err == nil {
		sb.Close()
		t.Fatal("Create succeeded with a cache larger than the tmpfs")
	}
	if !strings.Contains(err.Error(), "TmpfsBytes") {
		t.Fatalf("Create = %v, want it to name the limit", err)
	}
}

// TestCacheFrom (issue 24): a new cache volume named with CacheFrom starts
// as a copy of that volume, owned by the sandbox user; what a sandbox
// writes to the copy never reaches the source; an existing volume is not
// seeded again; a source that does not exist leaves the new volume as the
// image made it and is not created. RemoveCache removes the copy, and a
// volume already gone is not an error.
func TestCacheFrom(t *testing.T) {
	sandboxtest.EndToEnd(t)
	d := sandboxtest.NewDocker(t, docker.Options{})
	cli := dockerClient(t)
	ctx := context.Background()
	shared := fmt.Sprintf("patchwright-test-cachefrom-%d", time.Now().UnixNano())
	job, missing := shared+"-job", shared+"-missing"
	for _, v := range []string{shared, job, missing, shared + "-other"} {
		t.Cleanup(func() { cli.VolumeRemove(context.Background(), v, true) })
	}
	src := sandboxtest.New(t, d, sandbox.Spec{CacheVolume: shared})
	ok(t, src, `mkdir -p "$XDG_CACHE_HOME/go-mod/m" && echo shared > "$XDG_CACHE_HOME/go-mod/m/f" && chmod -R a-w "$XDG_CACHE_HOME/go-mod/m"`)
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}

	copied := sandboxtest.New(t, d, sandbox.Spec{CacheVolume: job, CacheFrom: shared})
	if got := ok(t, copied, `cat "$XDG_CACHE_HOME/go-mod/m/f"; stat -c %u "$XDG_CACHE_HOME/go-mod/m/f"`); got != "shared\n1000\n" {
		t.Errorf("the seeded volume holds %q, want the source's file owned by the sandbox user", got)
	}
	ok(t, copied, `echo job > "$XDG_CACHE_HOME/new"`)
	if err := copied.Close(); err != nil {
		t.Fatal(err)
	}
	again := sandboxtest.New(t, d, sandbox.Spec{CacheVolume: job, CacheFrom: shared})
	if got := ok(t, again, `cat "$XDG_CACHE_HOME/new"`); got != "job\n" {
		t.Errorf("an existing volume was seeded again: %q", got)
	}
	if err := again.Close(); err != nil {
		t.Fatal(err)
	}
	check := sandboxtest.New(t, d, sandbox.Spec{CacheVolume: shared, CacheReadOnly: true})
	if res := run(t, check, `cat "$XDG_CACHE_HOME/new"`); res.ExitCode == 0 {
		t.Error("a write to the seeded copy reached the source volume")
	}
	if err := check.Close(); err != nil {
		t.Fatal(err)
	}

	none := sandboxtest.New(t, d, sandbox.Spec{CacheVolume: shared + "-other", CacheFrom: missing})
	ok(t, none, `test -w "$XDG_CACHE_HOME"`)
	if _, err := cli.VolumeInspect(ctx, missing); !cerrdefs.IsNotFound(err) {
		t.Errorf("seeding from a missing volume created it: %v", err)
	}

	if err := d.RemoveCache(ctx, job); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.VolumeInspect(ctx, job); !cerrdefs.IsNotFound(err) {
		t.Errorf("RemoveCache left the volume: %v", err)
	}
	if err := d.RemoveCache(ctx, job); err != nil {
		t.Errorf("removing a removed volume: %v", err)
	}
}

// TestNewVolumeHandedOverAtOnce: sandboxes of separate runners (as two
// workers' jobs on one repository) created at once on one new cache
// volume all start, and the volume holds the image's cache. Docker's
// copy from the image ran in each hand-over and a later one failed on
// what an earlier made ("file exists"); whether they overlap is up to
// timing, so this can pass without the retry, not fail with it.
func TestNewVolumeHandedOverAtOnce(t *testing.T) {
	sandboxtest.EndToEnd(t)
	volume := newCacheVolume(t)
	const n = 4
	errs := make(chan error, n)
	for range n {
		go func() {
			d := sandboxtest.NewDocker(t, docker.Options{})
			sb, err := d.Create(context.Background(), sandbox.Spec{Image: sandboxtest.Image(t), Workspace: sandboxtest.Workspace(t), JobID: "test-handed-over-at-once", CacheVolume: volume})
			if err == nil {
				sb.Close()
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	sb := sandboxtest.New(t, sandboxtest.NewDocker(t, docker.Options{}), sandbox.Spec{CacheVolume: volume})
	if got := ok(t, sb, `ls "$XDG_CACHE_HOME/go-build" | wc -l`); strings.TrimSpace(got) == "0" {
		t.Fatal("the new volume holds no Go cache from the image")
	}
}
