package docker_test

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"

	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/docker"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// freshVolume returns the name of a cache volume that does not exist yet,
// removed when the test ends (after its sandboxes: register it first).
func freshVolume(t *testing.T, cli *client.Client) string {
	t.Helper()
	name := fmt.Sprintf("patchwright-test-fresh-%d", time.Now().UnixNano())
	t.Cleanup(func() { cli.VolumeRemove(context.Background(), name, true) })
	return name
}

// imagePath is the PATH an image's configuration sets.
func imagePath(t *testing.T, cli *client.Client, ref string) string {
	t.Helper()
	info, err := cli.ImageInspect(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range info.Config.Env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			return v
		}
	}
	t.Fatalf("image %s sets no PATH", ref)
	return ""
}

// tinyModule writes a Go module with a program that imports nothing, so
// building it on a new cache volume compiles only the runtime.
func tinyModule(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	files := map[string]string{
		"go.mod":  "module example.com/tiny\n\ngo 1.22\n",
		"main.go": "package main\n\nfunc main() { println(\"tiny ran\") }\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sandboxtest.HandOver(t, ws)
	return ws
}

// TestEveryImageShape: on our image (user 1000, /home/agent shipped) and on
// one shaped like the public golang image (root-owned, no user 1000, no
// /home/agent, HOME unset, GOPATH=/go), a sandbox with a new cache volume
// can write HOME, /tmp and the caches, keeps the image's PATH, and builds
// and runs a Go program. On the public shape, a root-owned cache volume
// made every Go command fail with "failed to initialize build cache". (No
// `go test` here: on a new volume of the public shape it compiled the
// testing package's part of the standard library, about 2 minutes of CI;
// the pipeline's TestPublicGoImage runs a repository's tests on it.)
func TestEveryImageShape(t *testing.T) {
	sandboxtest.EndToEnd(t)
	d := sandboxtest.NewDocker(t, docker.Options{})
	cli := dockerClient(t)
	for _, img := range sandboxtest.Images(t) {
		t.Run(img, func(t *testing.T) {
			vol := freshVolume(t, cli)
			sb := sandboxtest.New(t, d, sandbox.Spec{Image: img, Workspace: tinyModule(t), CacheVolume: vol})
			res := runFor(t, sb, `set -e
touch "$HOME/probe" /tmp/probe "$HOME/.cache/probe"
mkdir -p "$HOME/.config/x"
echo "owner=$(stat -c %u:%g "$HOME/.cache")"
echo "PATH=$PATH"
go build -o /tmp/tiny . && /tmp/tiny 2>&1`, 5*time.Minute)
			if res.ExitCode != 0 {
				t.Fatalf("exited %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout.Head, res.Stderr.Head)
			}
			got := string(res.Stdout.Head) + string(res.Stdout.Tail)
			for _, want := range []string{
				"owner=1000:1000\n",
				"PATH=" + imagePath(t, cli, img) + "\n",
				"tiny ran\n",
			} {
				if !strings.Contains(got, want) {
					t.Errorf("output lacks %q:\n%s", want, got)
				}
			}
		})
	}
}

// TestNewVolumeStillFilledFromImage: handing a new cache volume to the
// sandbox user leaves it empty, so Docker still fills it from our image's
// warm Go standard-library cache.
func TestNewVolumeStillFilledFromImage(t *testing.T) {
	sandboxtest.EndToEnd(t)
	d := sandboxtest.NewDocker(t, docker.Options{})
	cli := dockerClient(t)
	vol := freshVolume(t, cli)
	sb := sandboxtest.New(t, d, sandbox.Spec{CacheVolume: vol})
	if got := ok(t, sb, `find "$GOCACHE" -type f | head -n 100 | wc -l`); strings.TrimSpace(got) != "100" {
		t.Errorf("the new cache volume holds %s files of the image's Go cache, want at least 100", strings.TrimSpace(got))
	}
	info, err := cli.VolumeInspect(context.Background(), vol)
	if err != nil {
		t.Fatal(err)
	}
	if info.Labels[docker.LabelCacheOwner] != docker.DefaultUser || info.Labels[docker.LabelCache] != "1" {
		t.Errorf("cache volume labels = %v, want %s=%s and %s=1", info.Labels, docker.LabelCacheOwner, docker.DefaultUser, docker.LabelCache)
	}
}

// TestNewVolumeFilledForAReadOnlyFirstUse: a new cache volume whose first
// sandbox mounts it read-only (a retry's phases all do) still holds the
// image's warm Go cache, so that sandbox's copy of it does too: mounted
// only at the read-only path, where the image has nothing, the volume
// stayed empty, and every phase compiled the standard library again.
func TestNewVolumeFilledForAReadOnlyFirstUse(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	vol := freshVolume(t, dockerClient(t))
	sb := sandboxtest.New(t, d, sandbox.Spec{CacheVolume: vol, CacheReadOnly: true})
	if got := ok(t, sb, `find "$GOCACHE" -type f | head -n 100 | wc -l`); strings.TrimSpace(got) != "100" {
		t.Errorf("the read-only sandbox's cache holds %s files of the image's Go cache, want at least 100", strings.TrimSpace(got))
	}
}

// TestOldVolumeHandedOver: a root-owned volume of that name that Create
// did not prepare (an older Patchwright made it, or someone by hand) is
// handed to the sandbox user too.
func TestOldVolumeHandedOver(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	cli := dockerClient(t)
	vol := freshVolume(t, cli)
	if _, err := cli.VolumeCreate(context.Background(), volume.CreateOptions{Name: vol, Labels: map[string]string{docker.LabelCache: "1"}}); err != nil {
		t.Fatal(err)
	}
	sb := sandboxtest.New(t, d, sandbox.Spec{Image: sandboxtest.PublicImage(t), CacheVolume: vol})
	if got := ok(t, sb, `stat -c %u:%g "$HOME/.cache" && touch "$HOME/.cache/probe"`); got != "1000:1000\n" {
		t.Errorf("old cache volume owned by %q, want 1000:1000", got)
	}
}

// TestImageWithoutChown: an image that cannot prepare a cache volume fails
// Create saying why, and leaves no half-prepared volume behind.
func TestImageWithoutChown(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	cli := dockerClient(t)
	ctx := context.Background()
	// An image with nothing in it but /etc: no chown, no sleep.
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: "etc/", Typeflag: tar.TypeDir, Mode: 0o755}); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	ref := fmt.Sprintf("patchwright-test-empty:%d", time.Now().UnixNano())
	rc, err := cli.ImageImport(ctx, image.ImportSource{Source: &buf, SourceName: "-"}, ref, image.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rc.Close()
	t.Cleanup(func() { cli.ImageRemove(context.Background(), ref, image.RemoveOptions{Force: true}) })

	vol := freshVolume(t, cli)
	sb, err := d.Create(ctx, sandbox.Spec{Image: ref, Workspace: sandboxtest.Workspace(t), JobID: "test-no-chown", CacheVolume: vol})
	if err == nil {
		sb.Close()
		t.Fatal("Create succeeded on an image without chown")
	}
	if !strings.Contains(err.Error(), "needs chown") || !strings.Contains(err.Error(), vol) {
		t.Errorf("error %q does not say that the image needs chown for volume %s", err, vol)
	}
	if _, err := cli.VolumeInspect(ctx, vol); !cerrdefs.IsNotFound(err) {
		t.Errorf("the unprepared volume was left behind (inspect: %v)", err)
	}
}

// BenchmarkCreateReadyNewCacheVolume is Create with a cache volume that
// does not exist yet: its creation and the one-off hand-over to the
// sandbox user included (compare with BenchmarkCreateReadyCache, an
// existing volume).
func BenchmarkCreateReadyNewCacheVolume(b *testing.B) {
	d := sandboxtest.NewDocker(b, docker.Options{})
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		b.Fatal(err)
	}
	defer cli.Close()
	spec := sandbox.Spec{Image: sandboxtest.Image(b), Workspace: sandboxtest.Workspace(b), JobID: "bench", TTL: time.Hour}
	ctx := context.Background()
	i := 0
	for b.Loop() {
		spec.CacheVolume = fmt.Sprintf("patchwright-bench-new-%d-%d", time.Now().UnixNano(), i)
		i++
		sb, err := d.Create(ctx, spec)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := sb.Close(); err != nil {
			b.Fatal(err)
		}
		if err := cli.VolumeRemove(ctx, spec.CacheVolume, true); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}
