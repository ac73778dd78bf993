package docker

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
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
// over fills the volume from the image (chownVolume), as Docker would at a
// sandbox's first mount.
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
		err = d.createCacheVolume(ctx, spec)
		if err != nil {
			return fmt.Errorf("create cache volume %s: %w", name, err)
		}
		created = true
	default:
		return fmt.Errorf("inspect cache volume %s: %w", name, err)
	}
	err = d.chownVolume(ctx, spec)
	if err != nil {
		err = fmt.Errorf("give cache volume %s to the sandbox user %s: %w", name, d.user, err)
	} else if created && spec.CacheFrom != "" {
		err = d.seedVolume(ctx, spec)
	}
	if err != nil {
		if created {
			// Labelled as handed over but not: remove it so that the next
			// Create starts again. In use by another sandbox, it stays.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
			defer cancel()
			_ = d.cli.VolumeRemove(rctx, name, false)
			if spec.CacheDir != "" {
				// A copy cut short by the bound must not keep its room.
				os.RemoveAll(spec.CacheDir)
			}
		}
		return err
	}
	return nil
}

// createCacheVolume makes spec.CacheVolume, labelled as a cache handed
// over to d.user; with spec.CacheDir, as a bind of that directory, which
// the local driver mounts at each use.
func (d *Docker) createCacheVolume(ctx context.Context, spec sandbox.Spec) error {
	opts := volume.CreateOptions{Name: spec.CacheVolume, Labels: map[string]string{
		LabelCache:      "1",
		LabelCacheOwner: d.user,
	}}
	if spec.CacheDir != "" {
		if err := os.MkdirAll(spec.CacheDir, 0o755); err != nil {
			return err
		}
		opts.Driver = "local"
		opts.DriverOpts = map[string]string{"type": "none", "o": "bind", "device": spec.CacheDir}
	}
	_, err := d.cli.VolumeCreate(ctx, opts)
	return err
}

// chownVolume runs `chown USER HOME/.cache` as root in a container of
// spec.Image with the cache volume mounted where sandboxes mount it, no
// network and no capability but CHOWN. Docker fills an empty volume from
// the image there (our image's warm Go cache; nothing on a public one),
// so a new volume holds what the image ships even when the first sandbox
// to use it mounts it read-only, at cacheSharedDir, where the image has
// nothing to copy: every phase of a retry's job on a new volume compiled
// Go's standard library again. A volume to be seeded from spec.CacheFrom
// is not filled from the image. Every reasonable image has chown; one
// without it fails here, saying so.
func (d *Docker) chownVolume(ctx context.Context, spec sandbox.Spec) error {
	target, fill := d.home+"/.cache", spec.CacheFrom == ""
	if !fill {
		target = chownMount
	}
	return d.volumeHelper(ctx, spec, volumeHelper{
		user: "0:0", caps: []string{"CHOWN"}, memory: 64 << 20,
		entrypoint: []string{"chown"}, cmd: []string{d.user, target},
		target: target, fill: fill,
	})
}

// seedVolume copies spec.CacheFrom into the new volume spec.CacheVolume
// (mounted at chownMount, already the sandbox user's), as the sandbox
// user, with the script that fills a read-only sandbox's cache layer: no
// network, no capability, the source mounted read-only. A source volume
// that does not exist leaves the new one as the image made it.
func (d *Docker) seedVolume(ctx context.Context, spec sandbox.Spec) error {
	if _, err := d.cli.VolumeInspect(ctx, spec.CacheFrom); cerrdefs.IsNotFound(err) {
		return nil
	} else if err != nil {
		return fmt.Errorf("inspect cache volume %s: %w", spec.CacheFrom, err)
	}
	err := d.volumeHelper(ctx, spec, volumeHelper{
		user: d.user, memory: 256 << 20, from: spec.CacheFrom,
		entrypoint: []string{"/bin/sh", "-c", fillCacheScript, "sh", cacheSharedDir, chownMount},
	})
	if err != nil {
		return fmt.Errorf("copy cache volume %s into %s: %w", spec.CacheFrom, spec.CacheVolume, err)
	}
	return nil
}

// volumeHelper is a short-lived container that prepares a cache volume.
type volumeHelper struct {
	user       string
	caps       []string
	memory     int64
	entrypoint []string
	cmd        []string
	// from, when set, is a volume mounted read-only at cacheSharedDir.
	from string
	// target is where the cache volume is mounted (chownMount when
	// empty); fill lets Docker fill it from the image there.
	target string
	fill   bool
}

// volumeHelper runs h in a container of spec.Image with spec.CacheVolume
// mounted at h.target (with Docker's copy from the image only for h.fill),
// no network and no capability but h.caps, and waits for it to exit 0.
func (d *Docker) volumeHelper(ctx context.Context, spec sandbox.Spec, h volumeHelper) error {
	config := &container.Config{
		Image:      spec.Image,
		User:       h.user,
		Entrypoint: h.entrypoint,
		Cmd:        h.cmd,
		Labels: map[string]string{
			LabelSandbox: "1",
			LabelJob:     spec.JobID,
			LabelExpires: time.Now().Add(closeTimeout).UTC().Format(time.RFC3339),
		},
	}
	pids := int64(16)
	mounts := []mount.Mount{{
		Type:          mount.TypeVolume,
		Source:        spec.CacheVolume,
		Target:        cmp.Or(h.target, chownMount),
		VolumeOptions: &mount.VolumeOptions{NoCopy: !h.fill},
	}}
	if h.from != "" {
		mounts = append(mounts, mount.Mount{
			Type: mount.TypeVolume, Source: h.from, Target: cacheSharedDir, ReadOnly: true,
			VolumeOptions: &mount.VolumeOptions{NoCopy: true},
		})
	}
	host := &container.HostConfig{
		Mounts:         mounts,
		NetworkMode:    "none",
		CapDrop:        []string{"ALL"},
		CapAdd:         h.caps,
		SecurityOpt:    []string{"no-new-privileges"},
		ReadonlyRootfs: true,
		Runtime:        spec.Runtime,
		Resources:      container.Resources{Memory: h.memory, PidsLimit: &pids},
	}
	name := h.entrypoint[0]
	created, err := d.createContainer(ctx, config, host)
	if err != nil {
		return fmt.Errorf("create container from %s: %w", spec.Image, err)
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
		defer cancel()
		// RemoveVolumes: the anonymous volumes of the image's VOLUMEs.
		_ = d.cli.ContainerRemove(rctx, created.ID, container.RemoveOptions{Force: true, RemoveVolumes: true})
	}()
	waitC, errC := d.cli.ContainerWait(ctx, created.ID, container.WaitConditionNextExit)
	if err := d.cli.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		return fmt.Errorf("run %s in %s (the image needs %s on its PATH): %w", name, spec.Image, name, err)
	}
	select {
	case err := <-errC:
		return fmt.Errorf("wait for %s: %w", name, err)
	case res := <-waitC:
		if res.StatusCode == 0 {
			return nil
		}
		return fmt.Errorf("%s in %s exited %d: %s", name, spec.Image, res.StatusCode, d.logs(ctx, created.ID))
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

// RemoveCache removes the cache volume name, which no container may use
// any more; one that does not exist is not an error. The pipeline removes
// a job's own cache (sandbox.Spec.CacheFrom) with it when the job ends.
func (d *Docker) RemoveCache(ctx context.Context, name string) error {
	err := d.cli.VolumeRemove(ctx, name, true)
	if err != nil && !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("remove cache volume %s: %w", name, err)
	}
	return nil
}

// createContainer is ContainerCreate, tried a second time when Docker's
// copy of the image into an empty cache volume collided with another's:
// containers created at once on one new volume (two jobs of a repository,
// in one worker or two; a sandbox while another Create hands the volume
// over) each have Docker copy the image in, and a later copy fails on
// what an earlier one made ("mkdir ...: file exists"). Once the volume is
// not empty Docker copies nothing, so the second try creates it.
func (d *Docker) createContainer(ctx context.Context, config *container.Config, host *container.HostConfig) (container.CreateResponse, error) {
	created, err := d.cli.ContainerCreate(ctx, config, host, nil, nil, "")
	if err != nil && strings.Contains(err.Error(), "file exists") {
		created, err = d.cli.ContainerCreate(ctx, config, host, nil, nil, "")
	}
	return created, err
}
