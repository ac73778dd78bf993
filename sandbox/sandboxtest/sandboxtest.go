// Package sandboxtest gives tests of any package real sandboxes: a Docker
// runner, the offline test image and a workspace the sandbox user can
// write. Tests using it skip under `go test -short` and fail, saying what
// to start or build, when Docker or the image is missing.
package sandboxtest

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/docker/docker/client"

	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/docker"
)

// DefaultImage is the test image built by testdata/sandbox-image/build.sh,
// shaped like our shipped image (user 1000, HOME /home/agent, every
// toolchain the checks need); the environment variable
// PATCHWRIGHT_TEST_IMAGE overrides it.
const DefaultImage = "patchwright-sandbox-test:latest"

// DefaultPublicImage is the second test image, built by
// testdata/sandbox-image/build-public.sh and shaped like the public golang
// image: root-owned, no user 1000, no /home/agent, HOME unset, GOPATH=/go.
// The environment variable PATCHWRIGHT_TEST_PUBLIC_IMAGE overrides it.
const DefaultPublicImage = "patchwright-sandbox-public-test:latest"

// UID and GID are the sandbox user's (docker.DefaultUser).
const (
	UID = 1000
	GID = 1000
)

// Image returns the test image's name after checking that the engine has
// it. Under -short it skips the test.
func Image(t testing.TB) string {
	t.Helper()
	return image(t, "PATCHWRIGHT_TEST_IMAGE", DefaultImage, "testdata/sandbox-image/build.sh")
}

// PublicImage returns the public-shaped test image's name (see
// DefaultPublicImage) after checking that the engine has it, with its
// shared cache volume warm (warmPublicCache). Under -short it skips the
// test.
func PublicImage(t testing.TB) string {
	t.Helper()
	img := image(t, "PATCHWRIGHT_TEST_PUBLIC_IMAGE", DefaultPublicImage, "testdata/sandbox-image/build-public.sh")
	warmPublicCache(t, img)
	return img
}

// Images returns both test images, ours first, for tests that must hold on
// every image shape.
func Images(t testing.TB) []string {
	t.Helper()
	return []string{Image(t), PublicImage(t)}
}

func image(t testing.TB, env, def, script string) string {
	t.Helper()
	if testing.Short() {
		t.Skipf("needs Docker and the sandbox test image: run without -short after `bash %s`", script)
	}
	image := os.Getenv(env)
	if image == "" {
		image = def
	}
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatalf("docker client: %v", err)
	}
	defer cli.Close()
	if _, err := cli.ImageInspect(context.Background(), image); err != nil {
		t.Fatalf("sandbox test image %s: %v\nbuild it with: bash %s (needs a running Docker engine)", image, err, script)
	}
	return image
}

// NewDocker returns a runner with opts (see docker.Options), closed
// when the test ends. Under -short it skips the test.
func NewDocker(t testing.TB, opts docker.Options) *docker.Docker {
	t.Helper()
	if testing.Short() {
		t.Skip("needs Docker: run without -short with a Docker engine running (dockerd)")
	}
	d, err := docker.New(context.Background(), opts)
	if err != nil {
		t.Fatalf("%v\nstart the Docker engine (dockerd) or run with -short", err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// Workspace returns an empty temporary directory that the sandbox user can
// write.
func Workspace(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	HandOver(t, dir)
	return dir
}

// HandOver gives everything under dir to the sandbox user, so that commands
// in the sandbox can change files the test created on the host. Running as
// root it changes owners (never following symlinks); otherwise it makes
// directories and files writable by all.
func HandOver(t testing.TB, dir string) {
	t.Helper()
	if err := sandbox.HandOver(dir, UID, GID); err != nil {
		t.Fatal(err)
	}
}

// CacheVolume is the cache volume the tests' sandboxes of the test image
// share, filled once from its warm Go standard-library cache; it stays
// between runs, so its size is bounded by what the tests build. Sandboxes
// of other images share CacheVolumeFor(image) instead.
const CacheVolume = "patchwright-test-cache"

// CacheVolumeFor is the cache volume New gives sandboxes of image:
// CacheVolume for the test image, and one per other image, so that a volume
// is filled from the image it was made for.
func CacheVolumeFor(image string) string {
	if image == DefaultImage || image == os.Getenv("PATCHWRIGHT_TEST_IMAGE") {
		return CacheVolume
	}
	name := strings.Map(func(r rune) rune {
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '-'
	}, image)
	return CacheVolume + "-" + name
}

// New creates a sandbox on d from spec, filling an empty Image (Image(t)),
// Workspace (Workspace(t)), JobID (the test's name) and CacheVolume
// (CacheVolumeFor the image), and closes it when the test ends.
func New(t testing.TB, d *docker.Docker, spec sandbox.Spec) sandbox.Sandbox {
	t.Helper()
	if spec.Image == "" {
		spec.Image = Image(t)
	}
	if spec.Workspace == "" {
		spec.Workspace = Workspace(t)
	}
	if spec.JobID == "" {
		spec.JobID = "test-" + strings.NewReplacer("/", "-", " ", "_").Replace(t.Name())
	}
	if spec.CacheVolume == "" {
		spec.CacheVolume = CacheVolumeFor(spec.Image)
	}
	sb, err := d.Create(context.Background(), spec)
	if err != nil {
		t.Fatalf("create sandbox: %v", err)
	}
	t.Cleanup(func() {
		if err := sb.Close(); err != nil {
			t.Errorf("close sandbox: %v", err)
		}
	})
	return sb
}
