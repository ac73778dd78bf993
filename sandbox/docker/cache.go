package docker

import (
	"bytes"
	"context"
	"fmt"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
)

// cacheSharedDir is where a sandbox with sandbox.Spec.CacheReadOnly mounts
// the shared cache volume, read-only. No image is expected to have
// anything there.
const cacheSharedDir = "/patchwright-shared-cache"

// readOnlyCache turns the writable cache volume mount of hc into the
// read-only mount at cacheSharedDir, puts a tmpfs owned by d.uid:d.gid (of
// size lim bytes) where the volume was, and returns that path: the
// per-sandbox layer, which fillCacheLayer fills with a copy of the shared
// cache once the container runs. It returns "" when hc mounts no volume
// named volume.
//
// Why a copy on a tmpfs: the build caches (Go's above all) must be
// writable to be used at all, and no mechanism lets them read through to a
// read-only layer without a mount inside the container (no capability for
// one). An empty layer would cost every read-only sandbox a cold build; a
// copy costs the time to copy the cache (measured: 0.6 s for 171 MB and
// 3,000 files) and, being a tmpfs, counts against the memory limit for as
// long as the sandbox lives. A tmpfs rather than an anonymous volume because
// it can be given to the sandbox user at mount time, whatever the image.
func (d *Docker) readOnlyCache(hc *container.HostConfig, volume string, size int64) string {
	for i, m := range hc.Mounts {
		if m.Type != mount.TypeVolume || m.Source != volume {
			continue
		}
		layer := m.Target
		hc.Mounts[i].Target = cacheSharedDir
		hc.Mounts[i].ReadOnly = true
		hc.Mounts[i].VolumeOptions = &mount.VolumeOptions{NoCopy: true}
		if hc.Tmpfs == nil {
			hc.Tmpfs = map[string]string{}
		}
		hc.Tmpfs[layer] = fmt.Sprintf("rw,exec,nosuid,nodev,size=%d,mode=0755,uid=%d,gid=%d", size, d.uid, d.gid)
		return layer
	}
	return ""
}

// fillCacheScript copies the shared cache ($1) into the sandbox's layer
// ($2), keeping modes and times (Go's cache trims by modification time)
// and never following a symbolic link.
const fillCacheScript = `cp -RPp "$1"/. "$2"/`

// fillCacheLayer copies the read-only shared cache into the per-sandbox
// layer at layer. A cache larger than the layer (Limits.TmpfsBytes) does
// not fit: Create fails, saying so, rather than hand over a sandbox whose
// cache directory is full.
func (c *dockerSandbox) fillCacheLayer(ctx context.Context, layer string) error {
	out, code, err := c.run(ctx, callTimeout, fillCacheScript, cacheSharedDir, layer)
	if err == nil && code != 0 {
		err = fmt.Errorf("exit %d: %s (a cache larger than Limits.TmpfsBytes does not fit)", code, bytes.TrimSpace(out))
	}
	if err != nil {
		return fmt.Errorf("copy the shared cache into sandbox %.12s: %w", c.id, err)
	}
	return nil
}
