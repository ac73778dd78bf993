package sandboxtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/docker"
)

// warmScript builds into the cache volume, unless a marker there says it
// was done, the standard packages the tests' Go repositories need for
// go build, go vet and go test (fmt, strings, testing and what the test
// binaries' runner imports): 19 s of CPU where all of std took 52 s
// (2026-12-03). A test that needs more compiles it itself.
const warmScript = `m="$HOME/.cache/.patchwright-test-warm"
[ -e "$m" ] && exit 0
go build fmt strings testing testing/internal/testdeps && touch "$m"`

var (
	publicOnce sync.Once
	publicErr  error
)

// warmPublicCache fills the public-shaped image's shared test cache volume
// with the standard packages the tests build (warmScript), once per
// engine: what a deployment's first job on such an image leaves for every
// later one. The public golang image ships no warm cache, and each test
// that compiled them afresh paid for it, several at once in CI's parallel
// packages. A lock file orders the test processes; tests
// that need a cold cache use a fresh volume of their own. Only with the
// e2e tag: the short suite's tests compile little on this image, and a
// developer's first `go test ./...` should not pay for the build.
func warmPublicCache(t testing.TB, image string) {
	t.Helper()
	if !endToEnd {
		return
	}
	publicOnce.Do(func() { publicErr = warm(image) })
	if publicErr != nil {
		t.Fatalf("warm the cache volume of %s: %v", image, publicErr)
	}
}

func warm(image string) error {
	lock, err := os.OpenFile(filepath.Join(os.TempDir(), "patchwright-test-public-cache.lock"), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return err
	}
	defer lock.Close() // releases the lock
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	ctx := context.Background()
	d, err := docker.New(ctx, docker.Options{})
	if err != nil {
		return err
	}
	defer d.Close()
	ws, err := os.MkdirTemp("", "patchwright-warm-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(ws)
	if err := sandbox.HandOver(ws, UID, GID); err != nil {
		return err
	}
	sb, err := d.Create(ctx, sandbox.Spec{Image: image, Workspace: ws, JobID: "test-warm-public-cache", CacheVolume: CacheVolumeFor(image)})
	if err != nil {
		return err
	}
	defer sb.Close()
	res, err := sb.Exec(ctx, sandbox.Command{Script: warmScript, Timeout: 10 * time.Minute})
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("exit %d: %s%s", res.ExitCode, res.Stderr.Head, res.Stderr.Tail)
	}
	return err
}
