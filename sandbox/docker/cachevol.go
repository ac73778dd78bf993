package docker

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/patchwright/patchwright/sandbox"
)

// LabelCacheOwner holds the "uid:gid" a cache volume's root directory was
// given when Create made it (Options.User).
const LabelCacheOwner = "org.patchwright.cache-owner"

// chownMount is where the preparing container mounts a new cache volume;
// no image is expected to have anything there.
const chownMount = "/patchwright-cache"

// prepareCache makes sure spec.CacheVolume exists and that the sandbox
// user owns its root directory.
//
// Docker creates a volume's root owned by root unless the image has a
// directory at the mount point to copy from. Our images ship
// $HOME/.cache owned by the sandbox user; the public ones (golang, python,
// node, debian…) have no such directory, and there every Go command would
// fail with "failed to initialize build cache: permission denied". So a new
// volume is handed to the sandbox user once, as root, by a short-lived
// container of the same image, before any sandbox mounts it; the volume's
// label records the owner so that later sandboxes skip that step. Handing
// over leaves the volume empty, so Docker still fills it from the image.
//
// A volume without the label, or labelled for another user (made by an
// older Patchwright, or with another Options.User), is handed over again at
// every Create until PruneCaches removes it: labels cannot change.
func (d *Docker) prepareCache(ctx context.Context, spec sandbox.Spec) error {
	name := spec.CacheVolume
	v, err := d.cli.VolumeInspect(ctx, name)
	created := false
	switch {
	case err == nil:
		if v.Labels[LabelCacheOwner] == d.user {
			return nil
		}
	case cerrdefs.IsNotFound(err):
		// Created here, not on mount, to carry the labels. A volume
		// another Create made meanwhile is returned as it is; handing it
		// over twice is harmless.
		_, err = d.cli.VolumeCreate(ctx, volume.CreateOptions{Name: name, Labels: map[string]string{
			LabelCache:      "1",
			LabelCacheOwner: d.user,
		}})
		if err != nil {
			return fmt.Errorf("create cache volume %s: %w", name, err)
		}
		created = true
	default:
		return fmt.Errorf("inspect cache volume %s: %w", name, err)
	}
	if err := d.chownVolume(ctx, spec); err != nil {
		err = fmt.Errorf("give cache volume %s to the sandbox user %s: %w", name, d.user, err)
		if created {
			// Labelled as handed over but not: remove it so that the next
			// Create starts again. In use by another sandbox, it stays.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
			defer cancel()
			_ = d.cli.VolumeRemove(rctx, name, false)
		}
		return err
	}
	return nil
}

// chownVolume runs `chown USER /patchwright-cache` as root in a container
// of spec.Image with the cache volume mounted there (without Docker's
// copy from the image), no network and no capability but CHOWN. Every
// reasonable image has chown; one without it fails here, saying so.
func (d *Docker) chownVolume(ctx context.Context, spec sandbox.Spec) error {
	config := &container.Config{
		Image:      spec.Image,
		User:       "0:0",
		Entrypoint: []string{"chown"},
		Cmd:        []string{d.user, chownMount},
		Labels: map[string]string{
			LabelSandbox: "1",
			LabelJob:     spec.JobID,
			LabelExpires: time.Now().Add(closeTimeout).UTC().Format(time.RFC3339),
		},
	}
	pids := int64(16)
	host := &container.HostConfig{
		Mounts: []mount.Mount{{
			Type:          mount.TypeVolume,
			Source:        spec.CacheVolume,
			Target:        chownMount,
			VolumeOptions: &mount.VolumeOptions{NoCopy: true},
		}},
		NetworkMode:    "none",
		CapDrop:        []string{"ALL"},
		CapAdd:         []string{"CHOWN"},
		SecurityOpt:    []string{"no-new-privileges"},
		ReadonlyRootfs: true,
		Runtime:        spec.Runtime,
		Resources:      container.Resources{Memory: 64 << 20, PidsLimit: &pids},
	}
	created, err := d.cli.ContainerCreate(ctx, config, host, nil, nil, "")
	if err != nil {
		return fmt.Errorf("create container from %s: %w", spec.Image, err)
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
		defer cancel()
		_ = d.cli.ContainerRemove(rctx, created.ID, container.RemoveOptions{Force: true})
	}()
	waitC, errC := d.cli.ContainerWait(ctx, created.ID, container.WaitConditionNextExit)
	if err := d.cli.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		return fmt.Errorf("run chown in %s (the image needs chown on its PATH): %w", spec.Image, err)
	}
	select {
	case err := <-errC:
		return fmt.Errorf("wait for chown: %w", err)
	case res := <-waitC:
		if res.StatusCode == 0 {
			return nil
		}
		return fmt.Errorf("chown in %s exited %d: %s", spec.Image, res.StatusCode, d.logs(ctx, created.ID))
	}
}

// logs returns a stopped container's output for an error message.
func (d *Docker) logs(ctx context.Context, id string) string {
	rc, err := d.cli.ContainerLogs(ctx, id, container.LogsOptions{ShowStdout: true, ShowStderr: true, Tail: "20"})
	if err != nil {
		return "(no output: " + err.Error() + ")"
	}
	defer rc.Close()
	var out bytes.Buffer
	if _, err := stdcopy.StdCopy(&out, &out, rc); err != nil {
		return "(no output: " + err.Error() + ")"
	}
	return strings.TrimSpace(out.String())
}
