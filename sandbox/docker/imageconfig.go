package docker

import (
	"context"
	"fmt"
	"path"
	"slices"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
)

// noHealthcheck turns off the image's HEALTHCHECK: the engine would run
// the image's command in the sandbox on its own schedule, between and
// after the job's commands, where nothing records or reaps it.
var noHealthcheck = &container.HealthConfig{Test: []string{"NONE"}}

// maskImageVolumes puts a tmpfs of the sandbox's size (opts) on each
// VOLUME the image declares that the sandbox does not mount already.
// The engine would make an anonymous volume there instead: writable on
// the host's disk with no bound, past the read-only root file system,
// the bounded workspace and the tmpfs caps. A pulled image's author
// chooses its volumes. An image the engine lacks is left to the create,
// whose error says so.
func (d *Docker) maskImageVolumes(ctx context.Context, image string, hc *container.HostConfig, opts string) error {
	inspect, err := d.cli.ImageInspect(ctx, image)
	if cerrdefs.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("inspect image %s: %w", image, err)
	}
	if inspect.Config == nil {
		return nil
	}
	taken := make([]string, 0, len(hc.Mounts)+len(hc.Tmpfs))
	for _, m := range hc.Mounts {
		taken = append(taken, path.Clean(m.Target))
	}
	for p := range hc.Tmpfs {
		taken = append(taken, path.Clean(p))
	}
	for p := range inspect.Config.Volumes {
		if p = path.Clean(p); !slices.Contains(taken, p) {
			hc.Tmpfs[p] = opts
			taken = append(taken, p)
		}
	}
	return nil
}
