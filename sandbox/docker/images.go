package docker

import (
	"context"

	cerrdefs "github.com/containerd/errdefs"
)

// ImageExists reports whether the engine has image, so a missing one is a
// clear configuration error before a job starts (pipeline.ImageChecker).
func (d *Docker) ImageExists(ctx context.Context, image string) (bool, error) {
	_, err := d.cli.ImageInspect(ctx, image)
	switch {
	case err == nil:
		return true, nil
	case cerrdefs.IsNotFound(err):
		return false, nil
	}
	return false, err
}
